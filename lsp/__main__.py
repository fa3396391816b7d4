"""`python -m lsp`: start the language server on stdin/stdout."""

import sys

from lsp.bootstrap import main

sys.exit(main())
