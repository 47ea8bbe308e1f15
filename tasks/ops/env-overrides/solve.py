"""Reference fix: getconf.py looks up APP_<SECTION>_<KEY> first (every script reads through it); docs; a test."""

from pathlib import Path

getconf = Path("scripts/getconf.py")
text = getconf.read_text(encoding="utf-8")
edits = [
    ('''    section, key = argv[0].split(".", 1)
    try:
''', '''    section, key = argv[0].split(".", 1)
    override = os.environ.get(f"APP_{section}_{key}".upper())
    if override:
        print(override)
        return 0
    try:
'''),
    ('''            for key, value in config.items(section):
                print(f"{section}.{key}={value}")''', '''            for key, value in config.items(section):
                value = os.environ.get(f"APP_{section}_{key}".upper()) or value
                print(f"{section}.{key}={value}")'''),
]
for old, new in edits:
    assert old in text, old
    text = text.replace(old, new, 1)
getconf.write_text(text, encoding="utf-8")

readme = Path("README.md")
readme.write_text(readme.read_text(encoding="utf-8") + (
    "\nEvery setting can be overridden from the environment: `APP_<SECTION>_<KEY>` in upper case "
    "(e.g. `APP_SERVER_PORT`, `APP_LOGS_KEEP`) wins over `config/app.ini`; an empty variable is ignored.\n"
), encoding="utf-8")

tests = Path("tests/run.sh")
text = tests.read_text(encoding="utf-8")
anchor = "# rotation keeps KEEP files and shifts them\n"
test = '''# environment overrides win over app.ini
override="$(APP_SERVER_PORT=1234 python3 scripts/getconf.py server.port)"
[[ "$override" == 1234 ]] && pass "APP_SERVER_PORT overrides server.port" \\
  || fail "APP_SERVER_PORT overrides server.port" "got '$override'"

'''
assert anchor in text
tests.write_text(text.replace(anchor, test + anchor, 1), encoding="utf-8")
