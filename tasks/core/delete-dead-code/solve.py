"""Reference fix: remove the module, its test file, and the helper (plus the import only it needed)."""

import re
import subprocess
from pathlib import Path

from gradelib import task_vars

v = task_vars()
src, dead = Path(v["src_dir"]), v["dead_module"]
subprocess.run(["git", "rm", "-q", str(src / f"{dead}.py"), f"tests/test_{dead}.py"], check=True)
billing = src / "billing.py"
text = billing.read_text(encoding="utf-8")
text = re.sub(rf"\n\n\ndef {v['dead_helper']}\(.*?(?=\n\n\n|\Z)", "", text, flags=re.DOTALL)
text = text.replace("\nimport math\n", "")
billing.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
