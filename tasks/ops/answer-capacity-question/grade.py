"""ANSWER.md holds the five numbers, each on a line naming it; nothing else changed."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()


def line_with(label: str, number: int) -> None:
    g.file_matches("ANSWER.md", rf"(?im)^(?=.*({label})).*(?<![\d.]){number}(?![\d.])")


g.file_exists("ANSWER.md")
line_with("replica", v["replicas"])
line_with("worker", v["workers"])
line_with("pool", v["pool_size"])
line_with("total|together|all|combined|max", v["replicas"] * v["pool_size"])
line_with("log|rotat|keep|retain|retention", v["keep"])
g.unchanged_except(["ANSWER.md"])
g.finish()
