"""The report file holds the invoice output (trailing whitespace aside); nothing else changed."""

from gradelib import Grader, task_vars

v = task_vars()
report = f"reports/invoice-{v['usage_month']}.txt"


def normalised(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


g = Grader()
g.file_satisfies(report, lambda text: normalised(text) == normalised(v["invoice_output"]),
                 "holds exactly what the invoice command prints")
g.unchanged_except(["reports/**"])
g.finish()
