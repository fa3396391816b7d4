"""`python -m docbridge`: the `docbridge` command (where the console script is not on PATH)."""

import sys

from docbridge.cli.main import main

sys.exit(main())
