"""agentic-eval: will this model work as a coding agent's brain, and how fast?

The public surface is small; see README.md. Heavy modules (gitpython, rich,
openai, httpx) are imported lazily so that `agentic-eval --help` stays fast.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
