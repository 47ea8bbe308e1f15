"""The report file holds the invoice output (trailing whitespace aside); nothing else changed."""

from gradelib import Grader, task_vars

v = task_vars()
report = f"reports/invoice-{v['usage_month']}.txt"


def normalised(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


g = Grader()
content = g.read(report)
g.check(f"{report} exists", content is not None, "no such file")
if content is not None:
    g.check(f"{report} holds the invoice output", normalised(content) == normalised(v["invoice_output"]),
            "its content differs from what the command prints")
g.unchanged_except(["reports/**"])
g.finish()
