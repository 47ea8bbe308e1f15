"""Hidden checks of the core pack's service (the `pyservice` generator), shared by its graders (this folder is on
their import path).

The checks drive the model's code (its functions, and its CLI's `main(argv)` with stdout captured) in one Python
process apart from the grader (gradelib's `make_calls`); only what the calls return crosses back, as JSON, and it
is judged here, in the grader, against values the grader computes (the service's billing rule, below).
"""

from collections.abc import Callable, Sequence
from typing import Any

from gradelib import Call, CallResult, Grader, Raises, make_calls, ref

# --------------------------------------------------------------------------- what the service must print


def charge(requests: int, price: int, free: int) -> int:
    """The billing rule: per 1000 billable requests, rounded half up to a whole cent."""
    return (max(0, requests - free) * price + 500) // 1000


def money(cents: int, currency: str) -> str:
    return f"{cents // 100}.{cents % 100:02d} {currency}"


def invoice_text(totals: dict[str, int], currency: str, price: int, free: int) -> str:
    """Exactly what the invoice command prints for these per-client totals and settings."""
    out = [f"Invoice ({currency}, {price} cents per 1000 requests, first {free} free per client)"]
    for client, requests in sorted(totals.items()):
        out.append(f"{client:<12}{requests:>10} requests {money(charge(requests, price, free), currency):>14}")
    cents = sum(charge(n, price, free) for n in totals.values())
    out.append(f"{'TOTAL':<12}{sum(totals.values()):>10} requests {money(cents, currency):>14}")
    return "\n".join(out) + "\n"


def usage_log(rows: Sequence[tuple[str, int]]) -> str:
    """A usage log (`timestamp,client,requests` lines) of (client, requests) rows."""
    return "".join(f"2024-03-{n % 28 + 1:02d}T{n % 24:02d}:00:00Z,{client},{count}\n"
                   for n, (client, count) in enumerate(rows))


# --------------------------------------------------------------------------- the model's code, called apart


def in_one_process(pkg: str, first: Sequence[Call], runs: Sequence[Sequence[str]], *,
                   files: dict[str, str] | None = None, fresh: bool = False
                   ) -> tuple[list[CallResult], list[tuple[CallResult, CallResult]]]:
    """One process of the model's code, apart from the grader: the calls `first` (targets in importlib:
    "import_module", then "$N.name" on what call N returned), then `pkg.cli.main(argv)` for each of `runs`
    with stdout captured. `files`: fixtures written first (e.g. usage logs in the scratch folder).

    Returns what each of `first` gave, and (what main returned, what it printed) per run."""
    calls = list(first)
    m_io, m_ctx, m_cli = len(calls), len(calls) + 1, len(calls) + 2
    calls += [Call("import_module", [name]) for name in ("io", "contextlib", f"{pkg}.cli")]
    for argv in runs:
        n = len(calls)  # $n: a buffer, $n+1: stdout redirected to it
        calls += [Call(f"${m_io}.StringIO"), Call(f"${m_ctx}.redirect_stdout", [ref(n)]),
                  Call(f"${n + 1}.__enter__"), Call(f"${m_cli}.main", [list(argv)]),
                  Call(f"${n + 1}.__exit__", [None, None, None]), Call(f"${n}.getvalue")]
    results = make_calls("importlib", calls, files=files, fresh=fresh)
    start = len(first) + 3
    return results[:len(first)], [(results[start + 6 * i + 3], results[start + 6 * i + 5]) for i in range(len(runs))]


def judge_runs(g: Grader, runs: Sequence[tuple[str, Sequence[str], str]],
               outcomes: Sequence[tuple[CallResult, CallResult]]) -> None:
    """(what the check says, argv, the exact text main must print, returning 0) against what came back."""
    for (what, argv, expected), (code, printed) in zip(runs, outcomes, strict=True):
        if not code.returned(0) or not isinstance(printed.value, str):
            g.check(what, False, f"main({list(argv)}) {code.describe()}")
        else:
            g.check(what, printed.value == expected, f"printed {printed.value[:300]!r}")


SETUP = None
"""The expected outcome of a step that only sets up an object for later steps: it must not raise."""


def judged(g: Grader, module: str, steps: Sequence[tuple[str, Call, Any]], *, fresh: bool = False,
           env: dict[str, str] | None = None) -> list[CallResult] | None:
    """Make the calls of `steps` in one process of the model's code and judge each here. A step is (what the check
    says, the call, what must come of it): SETUP (the call must not raise; its value stays there for `ref` and
    "$N.name"), `Raises("Name")`, a predicate on the `CallResult`, or a plain value it must return (type included)."""
    if not g.ok and not g.run_all:
        print(f"· calls into {module}: skipped (an earlier check failed)", flush=True)
        return None
    results = make_calls(module, [call for _, call, _ in steps], fresh=fresh, env=env)
    for (what, call, want), result in zip(steps, results, strict=True):
        if want is SETUP:
            if not result.ok:
                g.check(f"{call.target}({', '.join(repr(a) for a in call.args)}) works", False, result.describe())
        elif isinstance(want, Raises):
            g.check(what, result.raised(want.name), result.describe())
        elif isinstance(want, Callable):  # type: ignore[arg-type]
            g.check(what, bool(want(result)), result.describe())
        else:
            g.check(what, result.returned(want), result.describe())
    return results
