"""`python -m agentic_eval`: the same command line as `agentic-eval`."""

import sys

from agentic_eval.cli import main

sys.exit(main())
