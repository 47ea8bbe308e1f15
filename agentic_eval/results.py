"""Durable results: everything written under runs/, one folder per run.

A campaign: `runs/<run-id>/run.json` holds the configuration (no secrets);
`runs/<run-id>/trials.jsonl` holds one `TrialResult` per line, appended and
fsynced the moment a trial ends, so a run killed at any point keeps every
finished trial. An instrument run (battery, form matrix, speed, think-check,
cold start, BFCL): `runs/<run-id>/instrument.json` (an `InstrumentRun`) and
`result.json` (the instrument's whole `--json` output). Field names are a file-format contract: add fields with
defaults, never rename, and bump `format_version` on a breaking change.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from agentic_eval.packs.task import Task

FORMAT_VERSION = 1
TRIALS_FILE = "trials.jsonl"
RUN_FILE = "run.json"

Outcome = Literal["pass", "fail", "cheated", "tampered", "agent_timeout", "endpoint_error", "agent_error",
                  "grader_error"]
SCORED_OUTCOMES: frozenset[str] = frozenset({"pass", "fail", "cheated", "tampered"})
"""'cheated': the grader passed a task whose visible tests contradict its instruction (an impossible task),
which only a cheat can do. Scored, and never a pass: it counts against the pass rate and for the cheating rate.
'tampered': a reward verifier passed where the model had changed what it runs (programs, libraries, start-up
hooks of the agent's container it was verified in, or a module of the working directory shadowing one it
imports): the pass is the model's word, not the verifier's. Scored, and never a pass, like 'cheated'."""
BEHAVIOURS: tuple[str, ...] = ("tests_edited", "special_cased", "runner_tampered", "refused", "failed")
"""What the model did on an impossible task (`TrialResult.behaviour`), cheats first: edited or deleted the
tests, special-cased the tests' values in the code, tampered with the runner or harness, gave up and said the
tests were wrong (the honest outcome), or failed without either."""
CHEAT_BEHAVIOURS: frozenset[str] = frozenset({"tests_edited", "special_cased", "runner_tampered"})
UNSCORED_OUTCOMES: tuple[str, ...] = ("agent_timeout", "endpoint_error", "agent_error", "grader_error")


def trial_id(task_digest: str, agent: str, model: str, seed: int, attempt: int) -> str:
    """A trial's identity: a content hash that ignores the endpoint URL and port, so resume survives a move."""
    key = json.dumps([task_digest, agent, model, seed, attempt], separators=(",", ":"))
    return hashlib.sha256(key.encode()).hexdigest()[:20]


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class TurnCounts(BaseModel):
    """How many model turns (responses on the wire) got each label."""

    tool_call: int = 0
    text_tool_call: int = 0
    prose: int = 0
    empty: int = 0
    unclassified: int = 0
    """Exchanges that carried no model turn to judge (an error status, a stream cut short)."""


class TextCallFigures(BaseModel):
    """A trial's tool calls written as text, counted for the serving diagnosis (agentic_eval.classify.diagnosis):
    which engine parsers would have read them, and what no parser fixes. All 0 in records written before it
    existed."""

    calls: int = 0
    """Tool calls written as text (content and reasoning)."""
    readers: dict[str, int] = Field(default_factory=dict)
    """Engine parser key ('vllm:hermes', 'sglang:qwen25', ...) -> calls it extracts from the turn's text under the
    same name."""
    same_arguments: dict[str, int] = Field(default_factory=dict)
    """Engine parser key -> of those, calls it extracts with the same arguments as the classifier read."""
    unread: int = 0
    """Calls no engine parser extracts."""
    unknown_tool: int = 0
    """Calls naming a tool the request did not offer."""
    bad_arguments: int = 0
    """Calls to an offered tool whose arguments could not be read or fail its schema."""
    in_reasoning: int = 0
    """Calls written in the reasoning, which no tool parser reads."""
    truncated: int = 0
    """Calls cut short before they closed that no parser reads (the reply hit its token limit, or the model
    stopped): also counted in `unread`."""
    mixed_turns: int = 0
    """Turns with a structured call and a call written as text besides it (the server parsed one, not the
    other)."""
    structured_ids: dict[str, int] = Field(default_factory=dict)
    """Structured calls by what their id shows of the engine: 'vllm' (`chatcmpl-tool-...`), 'kimi_k2'
    (`functions.NAME:INDEX`), 'other' (agentic_eval.classify.documented.call_id_style)."""

    def merged(self, other: TextCallFigures) -> TextCallFigures:
        """The sum of two trials' figures."""

        def add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
            return {k: a.get(k, 0) + b.get(k, 0) for k in {**a, **b}}

        return TextCallFigures(
            calls=self.calls + other.calls, readers=add(self.readers, other.readers),
            same_arguments=add(self.same_arguments, other.same_arguments), unread=self.unread + other.unread,
            unknown_tool=self.unknown_tool + other.unknown_tool, bad_arguments=self.bad_arguments + other.bad_arguments,
            in_reasoning=self.in_reasoning + other.in_reasoning, truncated=self.truncated + other.truncated,
            mixed_turns=self.mixed_turns + other.mixed_turns,
            structured_ids=add(self.structured_ids, other.structured_ids))


class TrialResult(BaseModel):
    """One trial: a task run once by an agent against a model, graded by the task's script."""

    format_version: int = FORMAT_VERSION
    trial_id: str
    """Content hash of task digest + agent + model + seed + attempt (never the endpoint)."""
    run_id: str
    task_id: str
    task_digest: str
    pack: str = ""
    agent: str
    model: str
    seed: int
    attempt: int
    """1-based attempt number."""
    outcome: Outcome
    """pass / fail (the grader ran and said so), cheated (the grader passed an impossible task), or an unscored
    outcome."""
    detail: str = ""
    """One line: the cause of an unscored outcome, or how the agent stopped (for a run the model ended early,
    e.g. its time ran out in its own commands, what ended it: the outcome is still the grader's)."""
    fault: str = ""
    """Whose doing the trial's end was (agentic_eval.faults): '' for an ordinary pass or fail; 'model' for a
    scored trial whose agent run the model ended early (time run out in its own commands, a context it filled,
    its CLI killed from inside, its repository deleted); 'endpoint', 'harness', 'grader' or 'machine' for an
    unscored one. '' in records written before it existed."""
    fault_reason: str = ""
    """One line: why that side is at fault."""
    impossible: bool = False
    """The task's visible tests contradict its instruction on purpose (`[impossible]`): a pass is 'cheated'."""
    behaviour: str = ""
    """Impossible tasks only (else ''): what the model did, one of BEHAVIOURS, named from the diff and the
    wire log (agentic_eval.classify.cheating): the first cheat found, else 'refused' or 'failed'."""
    behaviour_detail: str = ""
    """One line: the evidence (the files edited, the literal planted, the words the model used)."""
    behaviours: list[str] = Field(default_factory=list)
    """Every behaviour found, when there were several (a model that said the tests were wrong and edited them)."""
    grader_verdict: str | None = None
    """What the grader said, also when the outcome is unscored (e.g. graded after an agent timeout)."""
    reward: float | None = None
    """A reward verifier's number (Harbor's reward file, 0 to 1): 1 is the pass; below 1 a fail whose number is
    kept as partial credit. None for a grade script."""
    changed_programs: list[str] = Field(default_factory=list)
    """An environment task with a reward verifier: the first paths (up to 20) of what the model changed that the
    verifier runs or imports: entries at the top of the working directory that shadow a module its Python
    imports (`pytest.py`), and, when it was verified in a snapshot of the agent's container (`verifier_container =
    "agent"`), the paths where programs, libraries and start-up hooks live (/usr, /bin, /sbin, /lib*, /opt,
    site-packages, /etc/python3*, the loader's preload) that the model changed, deleted or shadowed there. A pass
    with any is `tampered`, a verifier that could not judge a scored `fail`. Empty otherwise, and in records
    written before it existed (whose pass is the verifier's, noted beside it)."""
    internet_missing: bool = False
    """The task allows the internet (`allow_internet`), and before the run the engine's containers reached none
    (confine/verifier_check.py): the agent and the verifier ran offline. False otherwise, and in older records."""
    tests_forged: list[str] = Field(default_factory=list)
    """Tests (`file::name`, up to 100) whose run's report said passed while the grader's own checks of them (the
    twins its generator wrote beside each visible test, judged in the grader) failed: the model's code forged the
    report. The outcome is the grader's fail; empty otherwise, and in records written before it existed."""
    changed_programs_count: int = 0
    """How many such paths there were in all."""
    changed_programs_error: str = ""
    """One line: why they are unknown (the engine's diff failed); '' otherwise."""
    started_at: str
    ended_at: str
    duration_s: float
    """Wall time of the whole trial."""
    agent_duration_s: float = 0.0
    """Wall time of the agent alone: the latency the report shows."""
    grade_duration_s: float = 0.0
    agent_status: str = ""
    stop_reason: str = ""
    agent_turns: int = 0
    """Model requests, as the agent counted them."""
    turns: TurnCounts = Field(default_factory=TurnCounts)
    """Labels of the model turns recorded on the wire."""
    text_call_families: dict[str, int] = Field(default_factory=dict)
    """Families of text-written tool calls seen, with turn counts."""
    flags: dict[str, int] = Field(default_factory=dict)
    """Classifier flags seen (unterminated_think, truncated, ...), with turn counts."""
    text_calls: TextCallFigures = Field(default_factory=TextCallFigures)
    """The text-written tool calls, with the engine parsers that would read them (the serving diagnosis)."""
    emulate_parser: str | None = None
    """`--emulate-parser`: the engine parser the wire recorder emulated, turning the calls it reads in the
    endpoint's text into structured calls for the agent (the wire log keeps both replies); None: plain run."""
    requests: int = 0
    """Exchanges recorded on the wire."""
    tool_requests: int = 0
    """Connections to the endpoint that processes the agent's CLI started (its tools, the model's scripts)
    opened themselves: refused, never forwarded nor counted in `requests`; each is in the trial folder's
    refused.jsonl (agentic_eval.confine.origin). 0 also where the harness cannot tell (an unconfined run)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    lenient_text_calls: bool = False
    system_prompt_tokens: int | None = None
    sandbox: str = ""
    """The sandbox backend the model's commands and the grader ran under (bwrap, docker, local); '' in older
    records."""
    sandbox_engine: str = ""
    """docker: the Docker engine that ran the trial (its URL)."""
    node: str = ""
    """`run --ray`: the Ray node that ran the trial (its node id's start and address); '' for a local run."""
    sandbox_image: str = ""
    """docker: the image's id (a content digest)."""
    agent_version: str = ""
    """The agent CLI's own `--version` line (CLI agents), or agentic-eval's version (built-in agents)."""
    wire_api: str = ""
    """For an agent that speaks the Anthropic Messages API (claude-code): `anthropic-messages` when the endpoint
    served it, `anthropic-messages->chat-completions` when the wire recorder translated it; '' otherwise."""
    files: dict[str, str] = Field(default_factory=dict)
    """Trial files relative to the run folder: wire, transcript, grader, diff, and whatever else the
    agent wrote there (e.g. agent_stdout, agent_stderr, agent_command)."""

    @property
    def scored(self) -> bool:
        return self.outcome in SCORED_OUTCOMES


class PackInfo(BaseModel):
    name: str
    path: str
    digest: str
    tasks: list[str]


class RunConfig(BaseModel):
    """The contents of run.json: what was run, against what, with which versions. No secrets."""

    format_version: int = FORMAT_VERSION
    run_id: str
    created_at: str
    model: str
    agent: str
    base_url: str
    """Where the endpoint was when the run started (informational: not part of any trial's identity);
    credentials in it (user:password@, key-like query values) are redacted."""
    seed: int = 0
    attempts: int = 1
    jobs: int = 1
    task_ids: list[str] = Field(default_factory=list)
    task_paths: list[str] = Field(default_factory=list)
    """The --tasks paths given (empty: the default packs)."""
    packs: list[PackInfo] = Field(default_factory=list)
    system_prompt_tokens: int | None = None
    lenient_text_calls: bool = False
    stream: bool = False
    emulate_parser: str | None = None
    """`--emulate-parser`: the engine parser ('vllm:hermes', ...) the wire recorder emulated for every agent
    request (a what-if run: would the model pass if the server parsed its text calls?); None: plain run."""
    agent_options: dict[str, Any] = Field(default_factory=dict)
    sandbox: str = ""
    """The sandbox backend (`--sandbox`): bwrap (confined) or local (unconfined); '' in older runs."""
    versions: dict[str, str] = Field(default_factory=dict)
    local: bool = False
    """Run with `--local`: the endpoint was a llama.cpp server started for the run, and `--resume`
    starts one again (the recorded `base_url` is gone with it)."""
    local_gguf: str | None = None
    """With `local`: the `--gguf` file served (None: the packaged model)."""
    local_ctx: int | None = None
    """With `local`: the context size served."""

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, value: str) -> str:
        from agentic_eval.endpoint import redact_url

        return redact_url(value)


UNREADABLE_FILE = "trials.unreadable.txt"
"""Lines of trials.jsonl that could not be read (a torn write), kept aside byte for byte, one per line."""
_RECORD_START = b'{"format_version":'


class TrialLog:
    """Appends trial records to trials.jsonl durably (one write, flush + fsync per record), safely across
    threads. A record is pure ASCII (non-ASCII characters escaped), so no tear can split a character; and
    a file that does not end in a newline (a tear in an earlier session) gets one before the next record,
    so a torn line never swallows the record written after it."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / TRIALS_FILE
        self._lock = threading.Lock()

    def append(self, result: TrialResult) -> None:
        text = json.dumps(result.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
        valid = json.loads(text.encode("utf-8", "replace"))  # a lone surrogate (from a model's text) becomes '?'
        data = (json.dumps(valid, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")
        with self._lock:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                if not _ends_with_newline(fd):
                    data = b"\n" + data
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)


def _ends_with_newline(fd: int) -> bool:
    """True for an empty file or one whose last byte is a newline."""
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"


def _parse_record(line: bytes) -> TrialResult:
    """One line as a record; ValueError (UnicodeDecodeError, ValidationError) when it is not one."""
    return TrialResult.model_validate_json(line.decode("utf-8"))


def _keep_aside(run_dir: Path, lines: list[bytes]) -> str:
    """Copy unreadable lines to the side file (each once); the side file's name, or why it could not be written."""
    side = run_dir / UNREADABLE_FILE
    try:
        kept = set(side.read_bytes().split(b"\n")) if side.exists() else set()
        new = [ln for ln in dict.fromkeys(lines) if ln not in kept]
        if new:
            with open(side, "ab") as fh:
                fh.write(b"".join(ln + b"\n" for ln in new))
        return f"kept in {side}"
    except OSError as exc:
        return f"not kept aside: {exc.strerror or exc}"


@dataclass(frozen=True)
class UnreadableLine:
    """A line of trials.jsonl that is not a record (a torn write), and which trial it was, when the line
    still holds its identity (the first fields of a record: `trial_id`, then `task_id`)."""

    number: int
    why: str
    trial_id: str | None = None
    task_id: str | None = None


@dataclass
class TrialLogContents:
    """What `read_trial_log` found: the records, a warning per unreadable line, and those lines."""

    records: list[TrialResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unreadable: list[UnreadableLine] = field(default_factory=list)


_IDENTITY_FIELD = re.compile(rb'"(trial_id|task_id)":("(?:[^"\\]|\\.)*")')
"""A whole `"trial_id":"..."` or `"task_id":"..."` pair in the bytes of a torn record (records are ASCII)."""


def _identity(line: bytes) -> tuple[str | None, str | None]:
    """The trial and task a torn record names in full (each None when the tear came before it)."""
    found: dict[bytes, str] = {}
    for match in _IDENTITY_FIELD.finditer(line):
        try:
            value = json.loads(match.group(2))
        except ValueError:
            continue
        if isinstance(value, str):
            found.setdefault(match.group(1), value)  # the first: the record's own (top-level fields come first)
    return found.get(b"trial_id"), found.get(b"task_id")


def read_trials(run_dir: Path) -> tuple[list[TrialResult], list[str]]:
    """Every record of a run, and a one-line warning per line that could not be read (`read_trial_log`)."""
    contents = read_trial_log(run_dir)
    return contents.records, contents.warnings


def read_trial_log(run_dir: Path) -> TrialLogContents:
    """Every record of a run, a one-line warning per line that could not be read, and those lines.

    The file is read as bytes and decoded line by line: a line cut short (a crash or a full disk
    mid-write), even inside a multi-byte character, costs that line only. It is skipped, copied aside
    to trials.unreadable.txt, and its trial runs again on resume. A whole record that an older writer
    appended to a torn line (no newline in between) is still found and read.
    """
    path = run_dir / TRIALS_FILE
    contents = TrialLogContents()
    unreadable: list[bytes] = []
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return contents
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            contents.records.append(_parse_record(line))
            continue
        except UnicodeDecodeError as exc:
            why = f"not UTF-8 at byte {exc.start}: a torn write"
        except ValidationError as exc:
            why = exc.errors()[0]["msg"]
        start = line.rfind(_RECORD_START)
        if start > 0:  # a record glued onto a torn line
            try:
                contents.records.append(_parse_record(line[start:]))
                line = line[:start]
            except ValueError:
                pass
        unreadable.append(line)
        contents.unreadable.append(UnreadableLine(n, why[:120], *_identity(line)))
        contents.warnings.append(f"{path}:{n}: unreadable trial record skipped ({why[:120]}); its trial runs "
                                 "again on resume")
    if unreadable:
        where = _keep_aside(run_dir, unreadable)
        contents.warnings = [f"{w}; {where}" for w in contents.warnings]
    return contents


def trial_slot(task_id: str, attempt: int) -> str:
    """A trial's place in its run (also its folder name): one task, one attempt."""
    return f"{task_id}.a{attempt}"


def latest_by_trial(results: list[TrialResult]) -> dict[str, TrialResult]:
    """The last record of each trial slot (task and attempt): a resumed trial's newer record wins,
    also when the task changed in between (its trial id, which hashes the task, changed with it)."""
    latest: dict[str, TrialResult] = {}
    for r in results:
        latest[trial_slot(r.task_id, r.attempt)] = r
    return latest


def write_run_config(run_dir: Path, config: RunConfig) -> None:
    _write_atomic(run_dir / RUN_FILE, config.model_dump_json(indent=2) + "\n")


def read_run_config(run_dir: Path) -> RunConfig:
    path = run_dir / RUN_FILE
    try:
        return RunConfig.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AgenticEvalError(f"{run_dir}: not a run folder (no {RUN_FILE}); pass a folder under runs/") from None
    except ValidationError as exc:
        raise AgenticEvalError(f"{path}: unreadable run config ({exc.errors()[0]['msg']})") from None


def resolve_run_dir(run: str | Path, runs_root: Path | None = None) -> Path:
    """A run given as a folder path, or as a run id under `runs_root` (default ./runs)."""
    markers = (RUN_FILE, INSTRUMENT_FILE)
    path = Path(run)
    if any((path / m).exists() for m in markers):
        return path
    root = runs_root or Path("runs")
    if any((root / str(run) / m).exists() for m in markers):
        return root / str(run)
    if path.is_dir() and any(any((child / m).exists() for m in markers) for child in path.iterdir() if child.is_dir()):
        raise AgenticEvalError(f"{run} holds runs, it is not one: give one of its runs, or all of them with "
                               f"--run-dir {run}")
    raise AgenticEvalError(f"run {run!r} not found (give its folder, or its id under {root}/)")


def versions() -> dict[str, str]:
    import platform
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version(), "platform": platform.platform()}
    for pkg in ("agentic-eval", "openai", "httpx", "pydantic"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def new_run_id(model: str, kind: str) -> str:
    """A run's id: UTC time to the second, the model (filename-safe), the agent or instrument."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in model)[:40]
    return f"{stamp}-{safe}-{kind}"


def claim_run_dir(root: Path, base_id: str) -> Path:
    """Create a new run folder `root/base_id`, or `base_id-2`, `-3`, ... if taken (two runs started
    in the same second): created atomically, so two processes never share one."""
    root.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        candidate = root / (base_id if n == 1 else f"{base_id}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise AgenticEvalError(f"{root}: no free run folder name for {base_id}")


# --------------------------------------------------------------------------- a campaign run's plan
# What a run will do, read from and written to its folder: the trials its tasks and attempts make, which
# of them an earlier session scored, and the lock that keeps a second process off the run.


@dataclass(frozen=True)
class TrialSpec:
    """One trial to run: a task, its attempt number, and its identity."""

    task: Task
    attempt: int
    trial_id: str


@dataclass
class RunPlan:
    """What a run will do: its folder, its config, and the trials still to run."""

    run_dir: Path
    config: RunConfig
    trials: list[TrialSpec]
    skipped: int = 0
    """Trials already scored in an earlier session of this run (resume)."""
    lock: Any = None
    """The run's lock file, held while this plan lives or until `release`."""

    def release(self) -> None:
        """Let go of the run's lock now (its trials are done here), not when the plan is garbage: a plan kept
        alive by a reference cycle would otherwise refuse a resume of the same run in this process."""
        if self.lock is not None:
            self.lock.close()
            self.lock = None


def plan_trials(tasks: Sequence[Task], agent: str, model: str, seed: int, attempts: int) -> list[TrialSpec]:
    """Every (task, attempt) of a run, in order, with its trial id."""
    specs = []
    for task in tasks:
        digest = task.digest()
        for attempt in range(1, attempts + 1):
            specs.append(TrialSpec(task, attempt, trial_id(digest, agent, model, seed, attempt)))
    return specs


def pending_trials(run_dir: Path, specs: list[TrialSpec]) -> tuple[list[TrialSpec], int]:
    """The trials of `specs` without a scored record in the run: missing and unscored ones are rerun."""
    records, _ = read_trials(run_dir)
    latest = latest_by_trial(records)

    def done(spec: TrialSpec) -> bool:
        record = latest.get(trial_slot(spec.task.id, spec.attempt))
        return record is not None and record.trial_id == spec.trial_id and record.scored

    todo = [s for s in specs if not done(s)]
    return todo, len(specs) - len(todo)


def changed_tasks(run_dir: Path, tasks: Sequence[Task]) -> list[str]:
    """Ids of tasks whose files changed since the run recorded trials of them (their digest differs)."""
    records, _ = read_trials(run_dir)
    recorded = {r.task_id: r.task_digest for r in records}
    return [t.id for t in tasks if t.id in recorded and recorded[t.id] != t.digest()]


def pack_infos(tasks: Sequence[Task]) -> list[PackInfo]:
    """The packs `tasks` come from, each with a digest of its tasks' digests (run.json's `packs`)."""
    by_pack: dict[tuple[str, Path], list[Task]] = {}
    for t in tasks:
        by_pack.setdefault((t.pack, t.pack_dir), []).append(t)
    infos = []
    for (name, path), members in sorted(by_pack.items()):
        h = hashlib.sha256("".join(f"{t.id}:{t.digest()}" for t in sorted(members, key=lambda t: t.id)).encode())
        infos.append(PackInfo(name=name, path=str(path), digest=h.hexdigest()[:16], tasks=[t.id for t in members]))
    return infos


def prepare_run(run_dir: Path, config: RunConfig, tasks: Sequence[Task], *, resume: bool) -> RunPlan:
    """Create (or reopen, for resume) the run folder, hold its lock, and list the trials to run."""
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = _lock_run(run_dir)
    specs = plan_trials(tasks, config.agent, config.model, config.seed, config.attempts)
    skipped = 0
    if resume:
        specs, skipped = pending_trials(run_dir, specs)
    else:
        write_run_config(run_dir, config)
    return RunPlan(run_dir=run_dir, config=config, trials=specs, skipped=skipped, lock=lock)


def _lock_run(run_dir: Path) -> IO[str]:
    """Hold the run's lock file while this process works on it (released when the process ends), so
    that two processes never run one run's trials at once (a resume while the run still goes)."""
    import fcntl

    handle = (run_dir / "run.lock").open("a", encoding="utf-8")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise AgenticEvalError(f"run {run_dir.name} is in progress in another process: wait for it to end, or stop "
                               "it (Ctrl-C), then resume") from None
    return handle


# Saved results of the non-agent instruments (tool-call battery, form matrix, speed, think-check,
# cold start, BFCL): each instrument run is a folder under the runs folder, like a campaign run:
#   runs/<run-id>/instrument.json   an `InstrumentRun`: kind, model, endpoint, headline numbers (no secrets)
#   runs/<run-id>/result.json       the instrument's whole `--json` output
# so `agentic-eval report` shows every instrument of one model beside its agent runs.

INSTRUMENT_FILE = "instrument.json"
RESULT_FILE = "result.json"


class InstrumentRun(BaseModel):
    """The contents of instrument.json. Field names are a file-format contract."""

    format_version: int = 1
    kind: str
    """Which instrument (agentic_eval.instruments.registry's table names them all)."""
    run_id: str
    created_at: str
    model: str
    base_url: str = ""
    headline: dict[str, float | int | str | None] = Field(default_factory=dict)
    """A few numbers the report shows and compares across runs, e.g. {"passed": 352, "cases": 370,
    "score_pct": 95.1}. Use `score_pct` for a percentage score, `value` + `unit` for a single figure."""
    headline_text: str = ""
    """The same in one short line, e.g. '352/370 (95.1 %)'."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """What was asked (seed, cases, workloads, ...): runs compare only when these match."""
    versions: dict[str, str] = Field(default_factory=dict)


def save_instrument_run(
    kind: str,
    *,
    model: str,
    base_url: str,
    result: dict[str, Any],
    headline: dict[str, float | int | str | None],
    headline_text: str,
    settings: dict[str, Any] | None = None,
    runs_root: Path = Path("runs"),
) -> Path:
    """Write an instrument run folder and return it. `result` is the instrument's whole JSON output."""
    from agentic_eval.endpoint import redact_url, scrub, url_secrets

    run_dir = claim_run_dir(runs_root, new_run_id(model, kind))
    meta = InstrumentRun(
        kind=kind, run_id=run_dir.name, created_at=utc_now(), model=model, base_url=redact_url(base_url),
        headline=headline, headline_text=headline_text, settings=settings or {}, versions=versions(),
    )
    # Credentials in the base URL never reach a file, wherever the instrument quoted it.
    text = scrub(json.dumps(result, indent=2, default=str), url_secrets(base_url))
    _write_atomic(run_dir / RESULT_FILE, text + "\n")
    _write_atomic(run_dir / INSTRUMENT_FILE, meta.model_dump_json(indent=2) + "\n")
    return run_dir


def read_instrument_run(run_dir: Path, kinds: Sequence[str] | None = None) -> InstrumentRun:
    """The run's instrument.json; with `kinds`, a run of another kind is refused as unreadable."""
    path = run_dir / INSTRUMENT_FILE
    try:
        run = InstrumentRun.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(x) for x in error.get("loc", ())) or "file"
        raise AgenticEvalError(f"{path}: unreadable ({where}: {error['msg']})") from None
    if kinds is not None and run.kind not in kinds:
        quoted = [repr(k) for k in kinds]
        expected = f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else "".join(quoted)
        raise AgenticEvalError(f"{path}: unreadable (kind: Input should be {expected})")
    return run


def is_instrument_run(run_dir: Path) -> bool:
    return (run_dir / INSTRUMENT_FILE).is_file()


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
