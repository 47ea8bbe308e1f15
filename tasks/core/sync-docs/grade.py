"""Every current CLI option is documented, the stale option and values are gone; only docs changed."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged_except(["docs/**", "README.md"])
for option in v["cli_options"]:
    g.file_contains("docs/cli.md", option)
# The old option name, but not as the prefix of `--free-requests`.
g.no_match(rf"{v['stale_option']}(?![\w-])", ["docs/cli.md"])
g.file_matches("docs/configuration.md", rf"\b{v['port']}\b")
g.file_matches("docs/configuration.md", rf"\b{v['rpm']}\b")
g.no_match(rf"\b({v['stale_port']}|{v['stale_rpm']})\b", ["docs/**"])
g.finish()
