"""The module meets the spec (its functions called apart, every answer judged here), and the agent's own tests
for it exist, pass, and catch broken copies of it.

The count of passing tests is a report's word (evidence); what decides is mutation testing (graders/mutation.py):
the agent's test file runs apart with the grader's module in place of the agent's, where it must pass, on a
rewrite of it, where it must pass, and on broken copies, each of which it must fail.
"""

import mutation
from gradelib import Call, Grader, Raises, make_calls, pytest_runs_ahead, ref, task_vars

v = task_vars()
module, tests = f"{v['src_dir']}/{v['spec_module']}.py", f"tests/test_{v['spec_module']}.py"
dotted = f"{v['pkg']}.{v['spec_module']}"
UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def spelled(seconds: int) -> str:
    """The spec's shortest form, largest units first, zero parts left out."""
    parts = []
    for unit, size in UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"


g = Grader()
pytest_runs_ahead()  # mutation testing's pytest runs: the harness readies them meanwhile
g.defines(module, "parse_duration")
g.defines(module, "format_duration")
g.file_exists(tests)
run = g.pytest_passes([tests])
if run is not None:
    g.check(f"{tests} has passing tests", run.count("passed", module=f"test_{v['spec_module']}") >= 1, "none passed")
parse = [("90s", 90), ("15m", 900), ("2h", 7200), ("1d", 86400), ("1h30m", 5400), ("1d2h3m4s", 93784),
         ("45", 45), ("0s", 0), ("  5m\n", 300), ("2d12h", 216000), ("1m1s", 61), ("100m", 6000), ("3d4s", 259204)]
rejected = ["", "   ", "5x", "1H", "1m1h", "1h1h", "-5s", "h", "1.5h", "m30s", "1h-30m", "s", "1 d", "1h 30m"]
formatted = [(0, "0s"), (59, "59s"), (60, "1m"), (3600, "1h"), (5400, "1h30m"), (86400, "1d"), (86401, "1d1s"),
             (90061, "1d1h1m1s"), (172800, "2d"), (3661, "1h1m1s")]
cases = [
    *((Call("parse_duration", [text]), seconds) for text, seconds in parse),
    *((Call("parse_duration", [text]), Raises("ValueError")) for text in rejected),
    *((Call("format_duration", [seconds]), text) for seconds, text in formatted),
    (Call("format_duration", [-1]), Raises("ValueError")),
]
# Many more values, one line each way: format_duration gives the spec's form, and parse_duration reads it back.
values = list(range(0, 200_000, 997))
if g.ok or g.run_all:  # the verdict is already "fail" otherwise
    # All in one process, on a fresh copy of the tree (not the one the agent's tests ran on).
    calls = [call for call, _ in cases] + [Call("format_duration", [s]) for s in values]
    calls += [Call("parse_duration", [ref(len(cases) + i)]) for i in range(len(values))]
    results = make_calls(dotted, calls, fresh=True)
    for (call, want), result in zip(cases, results[:len(cases)], strict=True):
        goal = f"raises {want.name}" if isinstance(want, Raises) else f"returns {want!r}"
        g.check(f"{call.target}({call.args[0]!r}) {goal}", result.matches(want), result.describe())
    spelled_back = results[len(cases):len(cases) + len(values)]
    wrong = [f"{s}: {r.describe()}" for s, r in zip(values, spelled_back, strict=True) if not r.returned(spelled(s))]
    g.check(f"format_duration of {len(values)} more values gives the shortest form", not wrong, "; ".join(wrong[:3]))
    read_back = results[len(cases) + len(values):]
    wrong = [f"{s}: {r.describe()}" for s, r in zip(values, read_back, strict=True) if not r.returned(s)]
    g.check("parse_duration reads each of them back", not wrong, "; ".join(wrong[:3]))
else:
    print(f"· calls into {dotted}: skipped (an earlier check failed)", flush=True)

REFERENCE = '''import re

UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
_PATTERN = re.compile(r"(?:(\\d+)d)?(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?")


def parse_duration(text: str) -> int:
    text = text.strip()
    if text.isdigit():
        return int(text)
    match = _PATTERN.fullmatch(text)
    if not text or match is None:
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(value) * size for value, (_, size) in zip(match.groups(), UNITS) if value is not None)


def format_duration(seconds: int) -> str:
    if seconds < 0:
        raise ValueError("seconds must not be negative")
    parts = []
    for unit, size in UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
'''
REWRITE = '''SIZES = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    text = text.strip()
    if text.isdigit():
        return int(text)
    total, number, last = 0, "", -1
    for char in text:
        if char in "0123456789":
            number += char
            continue
        if char not in SIZES or not number or list(SIZES).index(char) <= last:
            raise ValueError("bad duration " + repr(text))
        total += int(number) * SIZES[char]
        number, last = "", list(SIZES).index(char)
    if number or last < 0:
        raise ValueError("bad duration " + repr(text))
    return total


def format_duration(seconds):
    if seconds < 0:
        raise ValueError("negative: " + str(seconds))
    out = ""
    for unit, size in SIZES.items():
        if seconds >= size:
            out += str(seconds // size) + unit
            seconds %= size
    return out if out else "0s"
'''
MUTANTS = {
    "parse_duration ignores the units": [(
        "sum(int(value) * size for value, (_, size) in zip(match.groups(), UNITS) if value is not None)",
        "sum(int(value) for value in match.groups() if value is not None)")],
    "format_duration puts the smallest unit first": [('return "".join(parts) or "0s"',
                                                     'return "".join(reversed(parts)) or "0s"')],
    "parse_duration raises no ValueError": [("if not text or match is None:", "if False:")],
}
argv, files, env = mutation.pytest_command(g, [tests], pythonpath=["src"])
mutation.tests_catch_mutants(g, argv, module, REFERENCE, rewrite=REWRITE,
                             mutants={what: mutation.edited(REFERENCE, *edits) for what, edits in MUTANTS.items()},
                             files=files, env=env, what=f"the tests in {tests}")
g.finish()
