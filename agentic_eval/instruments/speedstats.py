"""Pure statistics for the speed instrument: spreads, the per-request decode formula, the prefill
fit, speculative acceptance, the bandwidth law, and bytes streamed per token from a checkpoint.

Everything here works on plain numbers (the checkpoint reader reads only file headers), so it is
tested table-driven without a server.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentic_eval.errors import AgenticEvalError

GB = 1e9
"""Decimal gigabytes, as bandwidth datasheets and the published figures use."""


@dataclass(frozen=True)
class Spread:
    """Median with min and max of a set of samples."""

    median: float
    min: float
    max: float
    n: int

    def as_dict(self) -> dict[str, float]:
        return {"median": self.median, "min": self.min, "max": self.max}


def spread(values: Sequence[float | None]) -> Spread | None:
    """The spread of the non-None values, or None when there are none."""
    vals = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None
    return Spread(median=statistics.median(vals), min=min(vals), max=max(vals), n=len(vals))


def decode_rate(completion_tokens: int | None, t_first: float | None, t_last: float | None) -> float | None:
    """Steady-state decode tok/s: (n - 1) / (t_last - t_first).

    `n` must come from the server's usage count, never from chunk counts (a speculative chunk carries
    several tokens). The first token's time belongs to prefill, so it is not in the numerator.
    None when there are fewer than two tokens or no measurable interval.
    """
    if completion_tokens is None or t_first is None or t_last is None or completion_tokens < 2:
        return None
    dt = t_last - t_first
    return (completion_tokens - 1) / dt if dt > 0 else None


def server_decode_rate(eval_count: int | None, eval_duration_ns: int | None) -> float | None:
    """Decode tok/s from a server's own counters (Ollama's eval_count / eval_duration).

    Corrected for the n/(n - 1) bias: the first token is counted but its time is not.
    """
    if not eval_count or eval_count < 2 or not eval_duration_ns or eval_duration_ns <= 0:
        return None
    return (eval_count - 1) / (eval_duration_ns / 1e9)


@dataclass(frozen=True)
class LinearFit:
    """y = slope * x + intercept by least squares, with its coefficient of determination."""

    slope: float
    intercept: float
    r2: float
    n: int


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> LinearFit | None:
    """Least-squares line through the points; None with fewer than two distinct x values."""
    if len(xs) != len(ys):
        raise ValueError("xs and ys differ in length")
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (slope * x + intercept)) ** 2 for x, y in zip(xs, ys))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return LinearFit(slope=slope, intercept=intercept, r2=r2, n=n)


def prefill_rate(prompt_tokens: Sequence[float], wall_s: Sequence[float]) -> tuple[float, float] | None:
    """(tok/s, r²) from wall time against prompt tokens at a fixed output length: the slope is
    seconds per prompt token. None when the fit is impossible or the slope is not positive."""
    fit = fit_line(prompt_tokens, wall_s)
    if fit is None or fit.slope <= 0:
        return None
    return 1.0 / fit.slope, fit.r2


@dataclass(frozen=True)
class Acceptance:
    """Speculative-decoding acceptance over a set of samples."""

    rate: float | None
    """Accepted draft tokens / proposed draft tokens."""
    mean_length: float | None
    """Tokens per verification step, the bonus token included: 1 + accepted / drafts."""


def acceptance(d_accepted: float | None, d_draft_tokens: float | None, d_drafts: float | None) -> Acceptance:
    """Acceptance from counter deltas (vLLM / llama.cpp style). Missing or zero denominators give None."""
    rate = d_accepted / d_draft_tokens if d_accepted is not None and d_draft_tokens else None
    length = 1.0 + d_accepted / d_drafts if d_accepted is not None and d_drafts else None
    return Acceptance(rate=rate, mean_length=length)


BandwidthStatus = Literal["ok", "high", "impossible"]


@dataclass(frozen=True)
class BandwidthCheck:
    """The bandwidth law applied to one decode figure: decode tok/s x GB read per token <= GB/s."""

    implied_gb_s: float
    limit_gb_s: float
    fraction: float
    status: BandwidthStatus
    message: str


HIGH_FRACTION = 0.9
"""Above this share of the datasheet bandwidth a figure is suspicious: real boxes reach ~70-80 %."""


def check_bandwidth(decode_tok_s: float, gb_per_token: float, bandwidth_gb_s: float,
                    mean_acceptance_length: float | None = None) -> BandwidthCheck:
    """Implied memory traffic of a decode rate, flagged when it exceeds (or nears) the hardware limit."""
    if gb_per_token <= 0 or bandwidth_gb_s <= 0:
        raise ValueError("bytes per token and bandwidth must be positive")
    implied = decode_tok_s * gb_per_token
    fraction = implied / bandwidth_gb_s
    head = f"{decode_tok_s:.1f} tok/s x {gb_per_token:.2f} GB/token = {implied:.0f} GB/s"
    if fraction > 1.0:
        status: BandwidthStatus = "impossible"
        why = "a wrong --bytes-per-token or --bandwidth, or speculative decoding (several tokens per weight read)"
        if mean_acceptance_length and mean_acceptance_length > 1:
            per_read = implied / mean_acceptance_length
            why = (f"speculation reads the weights once per {mean_acceptance_length:.2f} tokens "
                   f"({per_read:.0f} GB/s per verification step), or a wrong input")
        message = f"{head}, above the hardware's {bandwidth_gb_s:.0f} GB/s: impossible; {why}"
    elif fraction > HIGH_FRACTION:
        status = "high"
        message = (f"{head}, {fraction:.0%} of {bandwidth_gb_s:.0f} GB/s: above what hardware usually reaches; "
                   "check the inputs or whether speculation is on")
    else:
        status = "ok"
        message = f"{head}, {fraction:.0%} of {bandwidth_gb_s:.0f} GB/s"
    return BandwidthCheck(implied_gb_s=implied, limit_gb_s=bandwidth_gb_s, fraction=fraction, status=status,
                          message=message)


# --- bytes streamed per token, from safetensors headers -------------------------------------------

_EXCLUDED_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # (kind, name fragments): tensors resident in memory but not read for a text decode step.
    ("mtp", ("mtp.",)),
    ("vision", ("visual.", "vision_tower", "vision_model", "multi_modal_projector", "vision_encoder")),
    ("embedding", ("embed_tokens.", "wte.", "tok_embeddings.", "word_embeddings.")),
)


@dataclass
class CheckpointBytes:
    """What one decode step streams, summed from tensor headers (bytes)."""

    total: int = 0
    always_on: int = 0
    routed_experts: int = 0
    num_experts: int | None = None
    experts_per_tok: int | None = None
    excluded: dict[str, int] = field(default_factory=dict)
    """Resident but not streamed per token: embedding lookup, MTP head, vision tower."""
    files: int = 0

    @property
    def routed_active(self) -> float:
        if not self.routed_experts or not self.num_experts or not self.experts_per_tok:
            return 0.0
        return self.routed_experts * self.experts_per_tok / self.num_experts

    @property
    def per_token(self) -> float:
        return self.always_on + self.routed_active

    @property
    def per_token_gb(self) -> float:
        return self.per_token / GB


def read_safetensors_header(path: Path) -> dict[str, Any]:
    """The JSON header of a .safetensors file: an 8-byte little-endian length, then that much JSON.
    Reads only the header, never the tensor data."""
    from agentic_eval.inputs import check_data_file

    check_data_file(path, what=str(path))  # a FIFO would block the open, a device is not a checkpoint
    with open(path, "rb") as fh:
        raw_len = fh.read(8)
        if len(raw_len) != 8:
            raise AgenticEvalError(f"{path}: too short to be a safetensors file")
        (length,) = struct.unpack("<Q", raw_len)
        if length <= 0 or length > 100_000_000:
            raise AgenticEvalError(f"{path}: implausible safetensors header length {length}")
        raw = fh.read(length)
    try:
        header = json.loads(raw)
    except RecursionError:
        raise AgenticEvalError(f"{path}: safetensors header nests too deep to be one") from None
    except ValueError as exc:
        raise AgenticEvalError(f"{path}: safetensors header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise AgenticEvalError(f"{path}: safetensors header is not a JSON object")
    return header


def _config_int(config: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    for scope in (config, config.get("text_config") or {}, config.get("llm_config") or {}):
        for key in keys:
            value = scope.get(key) if isinstance(scope, dict) else None
            if isinstance(value, int) and value > 0:
                return value
    return None


def _tensor_kind(name: str) -> str:
    for kind, fragments in _EXCLUDED_KINDS:  # first: an MTP head has experts of its own
        if any(name.startswith(f) or f".{f}" in name for f in fragments):
            return kind
    if ".experts." in name:  # ".shared_experts." does not match: its dot is not before "experts"
        return "routed"
    return "always_on"


CONFIG_LIMIT = 16 * 1024 * 1024
"""The largest config.json read from a checkpoint folder (a real one is a few kilobytes)."""


def checkpoint_bytes(folder: Path) -> CheckpointBytes:
    """Sum a safetensors checkpoint's headers into bytes streamed per decoded token: every always-on
    tensor, plus num_experts_per_tok / num_experts of the routed experts (from config.json). The
    embedding table is a lookup (one row), so it is excluded unless the output head is tied to it."""
    folder = Path(folder)
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise AgenticEvalError(f"{folder}: no .safetensors files; pass a checkpoint folder or --bytes-per-token")
    config_path = folder / "config.json"
    config: dict[str, Any] = {}
    if os.path.lexists(config_path):
        from agentic_eval.inputs import read_data_text

        text = read_data_text(config_path, what=str(config_path), limit=CONFIG_LIMIT)
        try:
            config = json.loads(text)
        except RecursionError:
            raise AgenticEvalError(f"{config_path}: not a model config (JSON nested too deep)") from None
        except ValueError as exc:
            raise AgenticEvalError(f"{config_path}: not JSON ({exc})") from None
        if not isinstance(config, dict):
            raise AgenticEvalError(f"{config_path}: not a model config (a JSON object)")
    result = CheckpointBytes(files=len(files))
    result.num_experts = _config_int(config, ("num_experts", "num_local_experts", "n_routed_experts"))
    result.experts_per_tok = _config_int(config, ("num_experts_per_tok", "moe_topk", "top_k_experts"))
    has_lm_head = False
    for path in files:
        for name, info in read_safetensors_header(path).items():
            if name == "__metadata__" or not isinstance(info, dict):
                continue
            offsets = info.get("data_offsets", (0, 0))
            if not (isinstance(offsets, list | tuple) and len(offsets) == 2
                    and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in offsets)):
                raise AgenticEvalError(f"{path}: tensor {str(name)[:80]!r} has no valid data_offsets "
                                       "(two whole numbers)")
            begin, end = offsets
            size = int(end) - int(begin)
            result.total += size
            has_lm_head = has_lm_head or "lm_head" in name
            kind = _tensor_kind(name)
            if kind == "routed":
                result.routed_experts += size
            elif kind == "always_on":
                result.always_on += size
            else:
                result.excluded[kind] = result.excluded.get(kind, 0) + size
    if not has_lm_head and result.excluded.get("embedding"):
        # tied embeddings: the output head is a full matmul over the same table every token
        result.always_on += result.excluded.pop("embedding")
    if result.routed_experts and not (result.num_experts and result.experts_per_tok):
        raise AgenticEvalError(f"{folder}: routed expert tensors found but config.json has no num_experts / "
                               "num_experts_per_tok; pass --bytes-per-token instead")
    return result
