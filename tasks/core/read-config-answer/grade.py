"""The three configured values are in ANSWER.md, each on a line that names it; nothing else changed."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.file_exists("ANSWER.md")
# Each number on a line that names it, in any format ("port: 8080", "- **Port** = 8080", "8080 (port)").
g.file_matches("ANSWER.md", rf"(?im)^(?=.*port).*\b{v['port']}\b")
g.file_matches("ANSWER.md", rf"(?im)^(?=.*(minute|rpm|rate)).*\b{v['rpm']}\b")
g.file_matches("ANSWER.md", rf"(?im)^(?=.*burst).*\b{v['burst']}\b")
g.unchanged_except(["ANSWER.md"])
g.finish()
