"""Reference answer: src/config.js already reads the variable; change nothing, say how to use it."""

from pathlib import Path

from gradelib import task_vars

v = task_vars()
Path("ANSWER.md").write_text(
    f"Already supported: src/config.js reads `{v['env_port']}` and it overrides `server.port`.\n\n"
    f"    {v['env_port']}=4000 npm start\n",
    encoding="utf-8",
)
