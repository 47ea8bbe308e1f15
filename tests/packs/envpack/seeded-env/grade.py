"""Pass when answer.txt holds the seed's value and the image's tool name."""
import json
import os
import sys
from pathlib import Path

value = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text())["value"]
answer = Path("answer.txt")
if not answer.is_file() or answer.read_text().strip() != f"{value} hammer":
    print(f"answer.txt does not hold {value!r} and the tool")
    sys.exit(1)
print("ok")
