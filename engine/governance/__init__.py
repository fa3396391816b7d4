"""Governance gates over a state: reconciliation, rules, the audit, parity and the study."""
