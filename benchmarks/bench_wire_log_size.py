"""Measure how big a trial's wire log grows: six 5 MB `write_file` calls by the built-in agent.

    python benchmarks/bench_wire_log_size.py [--calls 6] [--mb 5] [--stream]

An agent resends its whole history with every request. Stored whole (wire format 1), the log of
this trial grows with the square of the conversation; stored by reference (format 2, `request_ref`),
with what was said. Prints both sizes: the log as written, and the same records with every
request whole (what format 1 wrote), plus the time the recorder took to write and to read back.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_eval.agents.base import AgentContext, AgentOptions
from agentic_eval.agents.builtin.loop import BuiltinAgent
from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import load_task
from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body, chat_stream, tool_call
from agentic_eval.wire.recorder import WireRecorder, read_wire_log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=6)
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--stream", action="store_true", help="streamed replies (the events are kept too)")
    args = parser.parse_args()
    content = "x" * int(args.mb * 1_000_000)
    calls = [tool_call("write_file", {"path": f"big{n}.txt", "content": content}, f"call_{n}")
             for n in range(args.calls)]
    if args.stream:
        replies = [ScriptedReply(events=chat_stream(tool_calls=[c], piece_chars=65536)) for c in calls]
        replies.append(ScriptedReply(events=chat_stream("Done.")))
    else:
        replies = [ScriptedReply(body=chat_body(tool_calls=[c])) for c in calls]
        replies.append(ScriptedReply(body=chat_body("Done.")))
    task = load_task(ROOT / "tests" / "packs" / "mini" / "answer-file")
    with tempfile.TemporaryDirectory(prefix="ae-bench-wire-size-") as tmp, FakeEndpoint(replies) as fake:
        sandbox = materialize_sandbox(task, 7, Path(tmp) / "sandbox")
        log_path = Path(tmp) / "trial" / "wire.jsonl"
        t0 = time.perf_counter()
        with WireRecorder(fake.base_url, log_path) as recorder:
            ctx = AgentContext(task=task, sandbox=sandbox, instruction="write the files", base_url=recorder.base_url,
                               api_key="k", model="fake-model", timeout_s=600, max_turns=args.calls + 2,
                               trial_dir=Path(tmp) / "trial",
                               options=AgentOptions(stream=args.stream, extra={"max_retries": 0}),
                               cancel=threading.Event())
            outcome = BuiltinAgent().run(ctx)
        trial_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        records = read_wire_log(log_path)
        read_s = time.perf_counter() - t1
        written = log_path.stat().st_size
        whole = sum(len(record.model_dump_json()) + 1 for record in records)
        said = args.calls * len(json.dumps(content))
    print(f"{args.calls} write_file calls of {args.mb:g} MB, {'streamed' if args.stream else 'not streamed'}: "
          f"agent {outcome.status} after {outcome.turns} turns, {len(records)} exchanges")
    print(f"  what the model said (write_file contents):   {said / 1e6:8.1f} MB")
    print(f"  wire log, requests whole (format 1):          {whole / 1e6:8.1f} MB")
    print(f"  wire log, requests by reference (format 2):   {written / 1e6:8.1f} MB  ({whole / written:.1f}x smaller)")
    print(f"  trial through the recorder {trial_s:.1f} s; read_wire_log {read_s:.2f} s")


if __name__ == "__main__":
    main()
