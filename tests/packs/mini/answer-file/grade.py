"""Grader: answer.txt holds the port sentence."""
import json
import os
import sys
from pathlib import Path

v = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text())
answer = Path("answer.txt")
sys.exit(0 if answer.is_file() and f"port is {v['port']}" in answer.read_text() else 1)
