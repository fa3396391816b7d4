"""`python -m docbridge`: the `docbridge` command (where the console script is not on PATH)."""

import sys

from engine.cli import main

sys.exit(main())
