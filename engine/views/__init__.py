"""Derived views: functions of a state, memoised on it.

`snapshot.snapshot_of`, the findings (`reconcile`, `declared`), the reverse indexes (`reverse`) and the
knowledge graph (`graph`).
"""
