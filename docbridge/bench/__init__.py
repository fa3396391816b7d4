"""Benchmarks that print figures (`docbridge bench ...`). Nothing but the CLI imports this package."""
