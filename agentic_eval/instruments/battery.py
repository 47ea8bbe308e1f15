"""The synthetic tool-calling battery: deterministic cases from a seed, in six phases.

    cases = generate_cases(seed=45739)                      # the campaign's 370
    results = run_battery(cases, endpoint, "qwen3-coder", jobs=4)
    summary = summarize(results, seed=45739)                # the `--json` shape
    record(summary, Path("runs"), base_url=endpoint.base_url, model="qwen3-coder")  # for the report

Phases (campaign sizes): decisions 200 (the right tool among several), functional 50 (exact
argument values, some as parallel calls), structured 20 (nested objects and arrays), freeform
10 (a free-text argument checked for required content), chains 50 (the suite returns tool results
that must be used in the next call), negative 40 (no offered tool fits, or no tool is needed).

Generation is pure: each case draws from its own generator seeded by (seed, phase, index), and
tools are dealt round-robin from a seeded shuffle, so `--cases N` yields a prefix-stable subset.
`run_battery` plays the cases over HTTP, in parallel; one case's failure is that case's verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentic_eval.instruments import catalog as cat
from agentic_eval.instruments.cases import Case, CaseResult, Step
from agentic_eval.instruments.catalog import JSON, TOOLS, TOOLS_BY_NAME, Intent
from agentic_eval.instruments.exchange import SYSTEM_PROMPT, make_client, post_json
from agentic_eval.instruments.registry import Headline, Log
from agentic_eval.results.instrument_runs import save_instrument_run

if TYPE_CHECKING:
    from collections.abc import Sequence

    import httpx

    from agentic_eval.endpoint import Endpoint
    from agentic_eval.results.instrument_runs import InstrumentRun

KIND = "tooling"

PHASES: tuple[str, ...] = ("decisions", "functional", "structured", "freeform", "chains", "negative")
CAMPAIGN_SIZES: dict[str, int] = {"decisions": 200, "functional": 50, "structured": 20, "freeform": 10,
                                  "chains": 50, "negative": 40}
CAMPAIGN_SEED = 45739
MAX_DRAWS = 50
FREEFORM_TOOLS = ("git_commit", "write_file", "send_email", "add_comment", "post_message")
NO_TOOL_REQUESTS = (
    "Explain the difference between a process and a thread in two sentences.",
    "What is 144 divided by 12? Answer with the number only.",
    "Rewrite this sentence in the passive voice: \"The team shipped the release on Friday.\"",
    "Thanks, that is all I needed for now.",
    "What does the acronym REST stand for?",
    "Write a haiku about code review.",
    "Is a Python list mutable? Answer yes or no.",
    "Summarise in one sentence: \"The cache was cold after the deploy, so the first requests were slow.\"",
    "Which is larger, 2 to the power 10 or 10 cubed?",
    "Suggest a name for a command-line tool that renames photos by date.",
)


# ---------------------------------------------------------------- expectations


def spec_of(value: Any, text: list[str] | None = None, alts: list[Any] | None = None) -> JSON:
    """The expectation for one value: exact (normalised) for scalars, key by key for objects,
    item by item in any order for arrays, required words for free text."""
    if text is not None:
        return {"text": {"contains": text}}
    if isinstance(value, dict):
        return {"object": {k: spec_of(v) for k, v in value.items()}}
    if isinstance(value, list):
        return {"items": [spec_of(v) for v in value], "ordered": False}
    return {"values": [value, *(alts or [])]}


def expect(intent: Intent, exact: bool = True) -> JSON:
    """The expected call for an intent: every stated value checked, or (exact=False) only the tool."""
    args: JSON = {}
    for key, value in intent.args.items() if exact else ():
        spec = spec_of(value, intent.texts.get(key), intent.alts.get(key))
        args[key] = {**spec, "optional": True} if key in intent.defaults else spec
    return {"name": intent.tool, "args": args, "witness": intent.args}


def call(tool: str, witness: JSON, **specs: JSON) -> JSON:
    """An expected chain call: exact values from the witness unless a spec is given for a key."""
    return {"name": tool, "args": {k: specs.get(k, spec_of(v)) for k, v in witness.items()}, "witness": witness}


# ---------------------------------------------------------------- case pieces


def _tools_for(r: Random, targets: list[str], extra: int, *, avoid_groups: frozenset[str] = frozenset()) -> list[JSON]:
    """The targets plus `extra` distractors (never a generic tool, never from `avoid_groups`), shuffled."""
    pool = [t.name for t in TOOLS
            if not t.generic and t.name not in targets and cat.group_of(t.name) not in avoid_groups]
    names = [*targets, *r.sample(pool, min(extra, len(pool)))]
    r.shuffle(names)
    return [TOOLS_BY_NAME[name].chat_tool() for name in names]


def _opening(text: str) -> list[JSON]:
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]


def _dealer(seed: int, phase: str, names: list[str]) -> list[str]:
    order = sorted(names)
    Random(f"agentic-eval/battery/{seed}/{phase}/order").shuffle(order)
    return order


def _decision(r: Random, tool: str) -> Case:
    intent = cat.MAKERS[tool](r)
    return Case("", "", _opening(intent.text), _tools_for(r, [tool], r.randint(3, 7)), [Step([expect(intent, False)])],
                tool)


def _functional(r: Random, tool: str) -> Case:
    first = cat.MAKERS[tool](r)
    intents = [first]
    if r.random() < 0.25:  # a parallel pair: the same tool twice, or another flat tool
        other = tool if r.random() < 0.5 else r.choice([t for t in FLAT_TOOLS if t != tool])
        second = cat.MAKERS[other](r)
        if second.args != first.args:
            intents.append(second)
    text = first.text if len(intents) == 1 else f"Two things, please. First: {first.text} Second: {intents[1].text}"
    targets = list(dict.fromkeys(i.tool for i in intents))
    return Case("", "", _opening(text), _tools_for(r, targets, r.randint(2, 4)), [Step([expect(i) for i in intents])],
                "+".join(i.tool for i in intents))


def _structured(r: Random, tool: str) -> Case:
    intent = cat.MAKERS[tool](r)
    return Case("", "", _opening(intent.text), _tools_for(r, [tool], r.randint(2, 4)), [Step([expect(intent)])], tool)


def _freeform(r: Random, tool: str) -> Case:
    ref, num = f"{r.choice(cat.PROJECTS)}-{r.randint(100, 999)}", r.randint(3, 60)
    word, fact = r.choice([("retry", f"the retry limit was raised to {num}"),
                           ("export", f"the export job now runs every {num} minutes"),
                           ("login", f"the login page now loads in {num} ms")])
    say, body = f"it must say that {fact} and mention {ref}", f"Update: {fact}. See {ref}."
    wit: JSON
    if tool == "git_commit":
        text, wit, key = (f"Commit the staged changes. Write the commit message yourself; {say}.",
                          {"message": body}, "message")
    elif tool == "write_file":
        path = f"docs/changes/{ref.lower()}.md"
        text, wit, key = f"Write a short changelog note to {path}; {say}.", {"path": path, "content": body}, "content"
    elif tool == "send_email":
        to = cat.email(r)
        text = f"Email {to} with the subject \"Status {ref}\". Write the body yourself; {say}."
        wit, key = {"to": [to], "subject": f"Status {ref}", "body": body}, "body"
    elif tool == "add_comment":
        text, wit, key = (f"Add a comment to ticket {ref}, in your own words; {say}.",
                          {"ticket_id": ref, "body": body}, "body")
    else:
        text, wit, key = (f"Post a message in #deploys, in your own words; {say}.",
                          {"channel": "#deploys", "text": body}, "text")
    intent = Intent(tool, text, wit, texts={key: [ref, str(num), word]})
    return Case("", "", _opening(text), _tools_for(r, [tool], r.randint(2, 4)), [Step([expect(intent)])], tool)


def _negative(r: Random, kind: str) -> Case:
    if kind == "no_fit":
        tool = r.choice([t.name for t in TOOLS if not t.generic])
        intent = cat.MAKERS[tool](r)
        tools = _tools_for(r, [], r.randint(3, 5), avoid_groups=frozenset({cat.group_of(tool)}))
        return Case("", "", _opening(intent.text), tools, [Step([])], f"no_fit:{tool}")
    return Case("", "", _opening(r.choice(NO_TOOL_REQUESTS)), _tools_for(r, [], r.randint(3, 5)), [Step([])],
                "no_tool_needed")


FLAT_TOOLS = [t.name for t in TOOLS if t.name not in cat.NESTED_TOOLS]


# ---------------------------------------------------------------- chains: results feed the next call

Chain = tuple[str, list[Step]]
WORDS = {"any": True, "optional": True}


def _words(*needles: str) -> JSON:
    return {"text": {"contains": list(needles)}}


def _chain_ticket_assign(r: Random) -> Chain:
    q, tid, user = (r.choice(["webhook timeout", "stale search", "export job"]),
                    f"{r.choice(cat.PROJECTS)}-{r.randint(1000, 9999)}", r.choice(cat.USERS))
    found = {"tickets": [{"id": tid, "title": f"{q.capitalize()} in production", "status": "open", "assignee": None}]}
    return (f"Find the open ticket about \"{q}\" and assign it to {user}.",
            [Step([call("search_tickets", {"query": q}, query=_words(q.split()[0]))], [found]),
             Step([call("assign_ticket", {"ticket_id": tid, "assignee": user})], [{"ok": True}])])


def _chain_contact_email(r: Random) -> Chain:
    who, addr, subj = r.choice(cat.PEOPLE), cat.email(r), r.choice(cat.TITLES)
    card = {"name": who, "email": addr, "phone": f"+1 555 01{r.randint(10, 99)}", "team": "Platform"}
    return (f"Look up {who} in the address book and email them with the subject \"{subj}\" asking for an update.",
            [Step([call("lookup_contact", {"name": who})], [card]),
             Step([call("send_email", {"to": [addr], "subject": subj, "body": "Could you send me an update?"},
                        body={"any": True})], [{"sent": True}])])


def _chain_order_refund(r: Random) -> Chain:
    oid, pay, total = f"ORD-{r.randint(1000, 99999)}", cat.ident(r, "pay_"), cat.money(r)
    order = {"order_id": oid, "status": "delivered", "payment_id": pay, "total": total, "currency": "EUR"}
    return (f"The customer of order {oid} asked for their money back. Look the order up and refund its full total.",
            [Step([call("get_order", {"order_id": oid})], [order]),
             Step([call("refund_payment", {"payment_id": pay, "amount": total, "reason": "requested_by_customer"})],
                  [{"refund_id": cat.ident(r, "re_"), "status": "pending"}])])


def _chain_order_ship(r: Random) -> Chain:
    oid = f"ORD-{r.randint(1000, 99999)}"
    city, country = r.choice(cat.CITY_COUNTRY)
    addr = {"street": f"{r.randint(1, 250)} Harbour Road", "city": city, "postal_code": str(r.randint(10000, 99999)),
            "country": country}
    return (f"Ship order {oid} with DHL to the shipping address on the order.",
            [Step([call("get_order", {"order_id": oid})],
                  [{"order_id": oid, "status": "paid", "shipping_address": addr}]),
             Step([call("ship_order", {"order_id": oid, "carrier": "dhl", "address": addr})],
                  [{"tracking": cat.ident(r, "JD", 10)}])])


def _chain_dir_read(r: Random) -> Chain:
    d, name = (r.choice(["config", "deploy", "ops/env"]),
               f"{r.choice(['app', 'service', 'worker'])}-{r.randint(2, 9)}.yaml")
    entries = sorted([name, "README.md", f"notes-{r.randint(1, 9)}.txt", "Makefile"])
    return (f"In the {d} directory there is exactly one YAML file. Find it and show me its contents.",
            [Step([call("list_directory", {"path": d})], [{"path": d, "entries": entries}]),
             Step([call("read_file", {"path": f"{d}/{name}"}, path={"values": [f"{d}/{name}", f"./{d}/{name}"]})],
                  [{"content": "replicas: 2\n"}])])


def _chain_grep_read(r: Random) -> Chain:
    sym, path, line = (r.choice(["LEGACY_RATE_TOKEN", "RETRY_LIMIT", "MAX_BATCH"]),
                       r.choice(cat.FILES[:3] + cat.FILES[6:7]), r.randint(12, 400))
    return (f"Find where {sym} is defined and show me that file starting at the matching line.",
            [Step([call("grep_code", {"pattern": sym}, pattern=_words(sym))],
                  [{"matches": [{"file": path, "line": line, "text": f"{sym} = 5"}]}]),
             Step([call("read_file", {"path": path, "start_line": line})], [{"content": f"{sym} = 5\n"}])])


def _chain_balance_transfer(r: Random) -> Chain:
    src, dst, amt, cur = (cat.ident(r, "acc_"), cat.ident(r, "acc_"), cat.money(r, 50, 5000),
                          r.choice(["EUR", "USD", "GBP"]))
    return (f"Move the whole available balance of account {src} to account {dst}.",
            [Step([call("get_account_balance", {"account_id": src})],
                  [{"account_id": src, "available": amt, "currency": cur}]),
             Step([call("transfer_funds", {"from_account": src, "to_account": dst, "amount": amt, "currency": cur})],
                  [{"transfer_id": cat.ident(r, "tr_"), "status": "completed"}])])


def _chain_event_cancel(r: Random) -> Chain:
    d, title = cat.date(r), r.choice(["Design review", "Budget sync", "Vendor call"])
    events = [{"id": cat.ident(r, "evt_"), "title": t, "start": cat.hhmm(r)} for t in ["Standup", title, "Lunch"]]
    return (f"Cancel my \"{title}\" meeting on {d} and notify the attendees.",
            [Step([call("list_events", {"date": d})], [{"date": d, "events": events}]),
             Step([call("cancel_event", {"event_id": events[1]["id"], "notify_attendees": True})],
                  [{"cancelled": True}])])


def _chain_pod_logs_file(r: Random) -> Chain:
    ns, app = r.choice(cat.NAMESPACES), r.choice(cat.DEPLOYMENTS)
    pods = [{"name": f"{app}-{cat.ident(r, '', 5).lower()}", "status": s}
            for s in ("Running", "CrashLoopBackOff", "Running")]
    cfg = f"config/{app}-{r.randint(2, 9)}.yaml"
    logs = f"INFO starting {app}\nERROR missing key 'db_url' in {cfg}\n"
    text = (f"One pod of app={app} in the {ns} namespace keeps crashing. Find it, read its logs, then open the "
            f"config file the error names ({r.choice(['urgent', 'before the release', 'customers are waiting'])}).")
    return (text,
            [Step([call("list_pods", {"namespace": ns, "label_selector": f"app={app}"},
                        label_selector={"values": [f"app={app}"], "optional": True})], [{"pods": pods}]),
             Step([call("get_pod_logs", {"namespace": ns, "pod": pods[1]["name"]})], [{"logs": logs}]),
             Step([call("read_file", {"path": cfg})], [{"content": "port: 8080\n"}])])


def _chain_ticket_order_refund(r: Random) -> Chain:
    tid, oid, pay, total = (f"PAY-{r.randint(1000, 9999)}", f"ORD-{r.randint(1000, 99999)}", cat.ident(r, "pay_"),
                            cat.money(r))
    ticket = {"tickets": [{"id": tid, "title": "Charged twice", "status": "open",
                           "description": f"Customer says order {oid} was charged twice."}]}
    text = (f"Find the open ticket from {r.choice(cat.PEOPLE)} titled \"Charged twice\", look up the order it "
            "mentions, and refund that order's total as a duplicate charge.")
    return (text,
            [Step([call("search_tickets", {"query": "Charged twice"}, query=_words("charged"))], [ticket]),
             Step([call("get_order", {"order_id": oid})], [{"order_id": oid, "payment_id": pay, "total": total}]),
             Step([call("refund_payment", {"payment_id": pay, "amount": total, "reason": "duplicate"})],
                  [{"ok": True}])])


CHAINS = (_chain_ticket_assign, _chain_contact_email, _chain_order_refund, _chain_order_ship, _chain_dir_read,
          _chain_grep_read, _chain_balance_transfer, _chain_event_cancel, _chain_pod_logs_file,
          _chain_ticket_order_refund)


def _chain(r: Random, template: str) -> Case:
    text, steps = next(c for c in CHAINS if c.__name__ == template)(r)
    names = list(dict.fromkeys(exp["name"] for step in steps for exp in step.expected))
    return Case("", "", _opening(text), _tools_for(r, names, r.randint(2, 3)), steps, template.removeprefix("_chain_"))


# ---------------------------------------------------------------- generation


def phase_sizes(total: int | None = None) -> dict[str, int]:
    """Cases per phase: the campaign's 370, or `total` split in the same proportions (largest remainder)."""
    if total is None:
        return dict(CAMPAIGN_SIZES)
    whole = sum(CAMPAIGN_SIZES.values())
    exact = {p: total * size / whole for p, size in CAMPAIGN_SIZES.items()}
    sizes = {p: int(x) for p, x in exact.items()}
    for p in sorted(PHASES, key=lambda p: (-(exact[p] - sizes[p]), PHASES.index(p)))[: total - sum(sizes.values())]:
        sizes[p] += 1
    return sizes


_SUBJECTS: dict[str, list[str]] = {
    "decisions": [t.name for t in TOOLS], "functional": FLAT_TOOLS, "structured": list(cat.NESTED_TOOLS),
    "freeform": list(FREEFORM_TOOLS), "chains": [c.__name__ for c in CHAINS],
    "negative": ["no_fit", "no_fit", "no_fit", "no_tool_needed", "no_tool_needed"],
}
_BUILDERS = {"decisions": _decision, "functional": _functional, "structured": _structured, "freeform": _freeform,
             "chains": _chain, "negative": _negative}


def generate_cases(seed: int = CAMPAIGN_SEED, total: int | None = None, phases: list[str] | None = None) -> list[Case]:
    """The battery's cases, deterministic in (seed, total): same arguments, byte-identical cases."""
    unknown = sorted(set(phases or ()) - set(PHASES))
    if unknown:
        raise ValueError(f"unknown phase(s) {', '.join(unknown)}; phases are {', '.join(PHASES)}")
    cases: list[Case] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for phase, size in phase_sizes(total).items():
        if phases and phase not in phases:
            continue
        subjects = _dealer(seed, phase, _SUBJECTS[phase]) if phase != "negative" else _SUBJECTS[phase]
        for index in range(size):
            for attempt in range(MAX_DRAWS):  # redraw a case whose prompt and tools an earlier case already has
                r = Random(f"agentic-eval/battery/{seed}/{phase}/{index}" + (f"/{attempt}" if attempt else ""))
                case = _BUILDERS[phase](r, subjects[index % len(subjects)])
                if case_key(case) not in seen:
                    break
            seen.add(case_key(case))
            cases.append(Case(f"{phase}-{index + 1:03d}", phase, case.messages, case.tools, case.steps, case.note))
    return cases


def case_key(case: Case) -> tuple[str, tuple[str, ...]]:
    """What tells cases apart for a model: the user's request and the offered tool names."""
    return case.messages[-1]["content"], tuple(t["function"]["name"] for t in case.tools)


def cases_digest(cases: list[Case]) -> str:
    """A short digest of the cases' canonical JSON (two runs compare only when it matches)."""
    import hashlib

    text = json.dumps([c.to_json() for c in cases], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---------------------------------------------------------------- running against an endpoint


@dataclass(frozen=True)
class BatteryOptions:
    timeout_s: float = 180.0
    """Per request."""
    max_tokens: int = 4096
    temperature: float = 0.0


def _echo(message: JSON, step: int) -> JSON:
    """The assistant message to send back in the next request: its content and its calls, in the
    canonical form (ids filled in, arguments as a JSON string) whatever the server's quirks."""
    calls = []
    for k, call in enumerate(message.get("tool_calls") or ()):
        function = call.get("function") or {}
        arguments = function.get("arguments")
        calls.append({"id": call.get("id") or f"call_{step}_{k}", "type": "function",
                      "function": {"name": function.get("name"),
                                   "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}})
    return {"role": "assistant", "content": message.get("content") or None, "tool_calls": calls}


def run_case(client: httpx.Client, model: str, case: Case, options: BatteryOptions = BatteryOptions()) -> CaseResult:
    """Play one case against the endpoint, step by step; any failure is this case's verdict."""
    from agentic_eval.classify.turn import NotAModelTurn, classify_turn
    from agentic_eval.instruments.toolcheck import judge_turn

    messages = [dict(m) for m in case.messages]
    turns: list[JSON] = []
    for number, step in enumerate(case.steps, 1):
        where = f"step {number}/{len(case.steps)}: " if len(case.steps) > 1 else ""
        request = {"model": model, "messages": messages, "tools": case.tools, "tool_choice": "auto",
                   "temperature": options.temperature, "max_tokens": options.max_tokens}
        ex = post_json(client, "/chat/completions", request, options.timeout_s)
        turn: JSON = {"request": request, "status": ex.status, "response": ex.body, "elapsed_s": round(ex.elapsed_s, 3)}
        turns.append(turn)
        if ex.error is not None:
            code = "timeout" if ex.status is None and ex.error.startswith("timeout") else "http_error"
            return CaseResult(case.id, case.phase, False, f"{where}{code}", ex.error, turns, case.note)
        try:
            classification = classify_turn(request, ex.body)
        except NotAModelTurn:
            return CaseResult(case.id, case.phase, False, f"{where}http_error", "the body is not a chat completion",
                              turns, case.note)
        turn["classification"] = classification.model_dump(mode="json")
        verdict = judge_turn(request, ex.body, step.expected, classification)
        turn["verdict"] = {"passed": verdict.passed, "reason": verdict.reason, "detail": verdict.detail}
        if not verdict.passed:
            return CaseResult(case.id, case.phase, False, where + verdict.reason, verdict.detail, turns, case.note)
        if number < len(case.steps):
            echo = _echo(ex.body["choices"][0]["message"], number)
            messages = [*messages, echo]
            messages += [{"role": "tool", "tool_call_id": c["id"], "content": json.dumps(res)}
                         for c, res in zip(echo["tool_calls"], step.results)]
    return CaseResult(case.id, case.phase, True, "ok", "", turns, case.note)


def run_battery(cases: list[Case], endpoint: Endpoint, model: str, *, jobs: int = 4,
                options: BatteryOptions = BatteryOptions(), on_result: Any = None) -> list[CaseResult]:
    """Run every case, `jobs` at a time; results in case order. `on_result(result)` after each case.

    The workers are daemon threads: on Ctrl-C the cases not yet started are dropped and the
    interrupt does not wait for the requests in flight (each is bounded by its own timeout)."""
    import queue
    import threading

    def one(case: Case) -> CaseResult:
        try:
            result = run_case(client, model, case, options)
        except Exception as exc:  # noqa: BLE001 - a harness bug on one case must not sink the others
            result = CaseResult(case.id, case.phase, False, "harness_error", f"{type(exc).__name__}: {exc}", [],
                                case.note)
        if on_result is not None:
            on_result(result)
        return result

    todo: queue.Queue[tuple[int, Case]] = queue.Queue()
    for item in enumerate(cases):
        todo.put(item)
    results: list[CaseResult | None] = [None] * len(cases)
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            try:
                index, case = todo.get_nowait()
            except queue.Empty:
                return
            results[index] = one(case)

    client = make_client(endpoint, jobs)
    workers = [threading.Thread(target=work, name=f"battery-{n}", daemon=True) for n in range(max(1, jobs))]
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            while worker.is_alive():  # joined in slices so Ctrl-C reaches this thread at once
                worker.join(0.2)
    finally:
        stop.set()
    client.close()
    return [r for r in results if r is not None]


UNSCORED_REASONS = frozenset({"timeout", "http_error", "harness_error"})
"""A case that ended on one of these never heard the model out: the endpoint's or the harness's fault, not scored."""


def unscored(result: CaseResult) -> bool:
    """Whether a case ended on the endpoint's or the harness's fault (its reason, after any 'turn N: ')."""
    return result.reason.split(": ")[-1] in UNSCORED_REASONS


def _tally(results: list[CaseResult]) -> dict[str, int]:
    scored = [r for r in results if not unscored(r)]
    return {"passed": sum(r.passed for r in scored), "cases": len(scored), "unscored": len(results) - len(scored)}


def summarize(results: list[CaseResult], seed: int) -> JSON:
    """The `--json` output: seed, total, per-phase passed/cases (phase order), and every case. `cases` counts the
    scored ones: a case the endpoint or the harness failed (a timeout, an HTTP error, a harness error) is counted in
    `unscored` instead, never as the model's fail."""
    phases = {phase: _tally(mine) for phase in PHASES if (mine := [r for r in results if r.phase == phase])}
    return {"seed": seed, "total": _tally(results), "phases": phases, "cases": [r.to_json() for r in results]}


def headline(summary: JSON) -> Headline:
    """Cases passed of those scored, and the score, from `summarize`'s output."""
    total = summary["total"]
    pct = round(100 * total["passed"] / total["cases"], 1) if total["cases"] else None
    left = f", {total['unscored']} unscored" if total.get("unscored") else ""
    return Headline({"passed": total["passed"], "cases": total["cases"], "score_pct": pct},
                    f"{total['passed']}/{total['cases']} ({pct} %){left}")


def record(summary: JSON, runs_root: Path = Path("runs"), *, base_url: str, model: str, total: int | None = None,
           phases: list[str] | None = None) -> Path:
    """Save the run (`summarize`'s output as its result) under `runs_root` for `agentic-eval report` and return
    its folder. `base_url` is the endpoint's own (secrets in it are scrubbed from what is written); `model`, and
    `total` and `phases` as given to `generate_cases`, say what was asked (the seed is in the summary)."""
    shown = headline(summary)
    settings = {"seed": summary["seed"], "cases": total or sum(CAMPAIGN_SIZES.values()),
                "phases": list(phases) if phases else list(PHASES)}
    return save_instrument_run(KIND, model=model, base_url=base_url, result=summary, headline=shown.values,
                               headline_text=shown.text, settings=settings, runs_root=runs_root)


# ------------------------------------------------------------------------------------------------ campaign


class ToolingOptions(BaseModel):
    """`[tooling]` in a campaign file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    seed: int = Field(default=45739, ge=0, le=2**31 - 1)
    cases: int | None = Field(default=None, ge=1, le=100_000)
    """Total cases (default 370, the published battery)."""
    runs: int = Field(default=1, ge=1, le=20)
    """Runs of the battery per model: with two or more, the noise band is their measured spread."""
    jobs: int = Field(default=4, ge=1, le=256)

    def runs_wanted(self) -> int:
        return self.runs

    def asked(self) -> dict[str, object]:
        return self.model_dump(exclude={"jobs", "runs"})  # how it ran, not what it measured


OPTIONS = ToolingOptions


def measure(endpoint: Endpoint, model: str, options: ToolingOptions, runs_root: Path, log: Log) -> Path:
    """One battery run as a campaign's `[tooling]` asks, recorded under `runs_root`."""
    cases = generate_cases(options.seed, options.cases)
    summary = summarize(run_battery(cases, endpoint, model, jobs=options.jobs), options.seed)
    return record(summary, runs_root, base_url=endpoint.base_url, model=model, total=options.cases)


def figures(runs: Sequence[InstrumentRun], folders: Sequence[Path]) -> dict[str, object]:
    """The synthetic score of every run (their spread is the noise band), the latest's line and size."""
    latest = runs[-1]
    cases = latest.headline.get("cases")
    return {"synthetic_pct": [float(s) for r in runs if isinstance(s := r.headline.get("score_pct"), (int, float))],
            "synthetic_text": latest.headline_text,
            "synthetic_cases": cases if isinstance(cases, int) and cases > 0 else None}
