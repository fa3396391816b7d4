"""`python -m docbridge.lsp`: start the language server on stdin/stdout."""

import sys

from docbridge.lsp.bootstrap import main

sys.exit(main())
