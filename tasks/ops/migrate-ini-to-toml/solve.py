"""Reference fix: write app.toml from app.ini with typed values, read it with tomllib, rename every reference."""

import configparser
import json
from pathlib import Path

ini = configparser.ConfigParser()
ini.read("config/app.ini")
lines = [line for line in Path("config/app.ini").read_text(encoding="utf-8").splitlines() if line.startswith(";")]
lines = ["#" + line[1:] for line in lines]
for section in ini.sections():
    lines += ["", f"[{section}]"]
    for key, value in ini.items(section):
        lines.append(f"{key} = {value if value.isdigit() else json.dumps(value)}")
Path("config/app.toml").write_text("\n".join(lines).replace("app.ini", "app.toml") + "\n", encoding="utf-8")
Path("config/app.ini").unlink()

getconf = Path("scripts/getconf.py")
text = getconf.read_text(encoding="utf-8")
edits = [
    ("import configparser\n", ""),
    ("import sys\n", "import sys\nimport tomllib\n"),
    ("def load() -> configparser.ConfigParser:", "def load() -> dict:"),
    ('''    parser = configparser.ConfigParser(interpolation=None)
    if not parser.read(path):
        sys.exit(f"getconf: cannot read {path}")
    return parser
''', '''    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        sys.exit(f"getconf: cannot read {path}: {exc}")
'''),
    ('''        for section in config.sections():
            for key, value in config.items(section):''', '''        for section, values in config.items():
            for key, value in values.items():'''),
    ('''        print(config.get(section, key))
    except configparser.Error:''', '''        print(config[section][key])
    except (KeyError, TypeError):'''),
]
for old, new in edits:
    assert old in text, old
    text = text.replace(old, new, 1)
getconf.write_text(text, encoding="utf-8")

for path in [Path("README.md"), Path("Dockerfile"), *Path("scripts").iterdir()]:
    content = path.read_text(encoding="utf-8")
    if "app.ini" in content:
        path.write_text(content.replace("app.ini", "app.toml"), encoding="utf-8")
