"""The `docbridge` command line: one module per command (`docbridge.cli.commands`, whose `__init__` is the
table), what they share (`common`), and the parser built from the table with `main`."""
