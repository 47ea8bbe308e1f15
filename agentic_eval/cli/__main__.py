"""`python -m agentic_eval.cli`: the command line (the tests start it this way)."""

import sys

from agentic_eval.cli import main

sys.exit(main())
