"""`python -m paicli.cli` runs the command line."""

import sys

from paicli.cli import main

sys.exit(main())
