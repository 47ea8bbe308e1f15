"""Pass when greeting.txt says the environment's greeting from its user, and notes.txt is untouched."""
import sys
from pathlib import Path

greeting = Path("greeting.txt")
if not greeting.is_file() or greeting.read_text().strip() != "hello from agent":
    print("greeting.txt does not hold 'hello from agent'")
    sys.exit(1)
if Path("notes.txt").read_text() != "draft\n":
    print("notes.txt was changed")
    sys.exit(1)
print("ok")
