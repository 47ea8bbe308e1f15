"""The hidden tests that caught the planted bug pass, from the grader's own renamed copy, and so does the rest of
the project's suite; the tests the model saw are untouched."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged([v["tests_dir"]])
g.pytest_passes([v["tests_dir"], *v["hidden_select"]], hidden_suite=v["hidden_tests"], require=v["require"],
                min_passed=v["min_passed"], allow_skipped=True, pythonpath=v["pythonpath"], timeout=150,
                what=f"the {v['project']} suite and the {len(v['require'])} hidden tests pass")
g.finish()
