"""CI already runs `make check` on pull requests: only ANSWER.md is new, naming the job and the target."""

from gradelib import Grader

g = Grader()
g.file_matches("ANSWER.md", r"(?i)\bmake check\b|`check`|\bcheck target|target\W+check\b")
g.file_matches("ANSWER.md", r"(?i)\bconfig\b.*\bjob\b|\bjob\b.*\bconfig\b|`config`")
g.unchanged_except(["ANSWER.md"])
g.finish()
