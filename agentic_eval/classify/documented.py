"""The tool parser each serving engine's documentation recommends for a model family: data, with its source.

A reply does not say which parser the server runs, but the model implies one: whoever serves Qwen2.5 on vLLM
is told `--tool-call-parser hermes`, Qwen3-Coder `qwen3_xml`, Kimi-K2 `kimi_k2`. The diagnosis
(agentic_eval.classify.diagnosis) holds the text calls against it: a documented parser that reads them is the
fix to name first; one that does not read them is how a server configured by the book still returns them as
text (the model writes a family other than its documented one).

Sources, as read in December 2026 (each row names the one it rests on):

    vLLM      docs/features/tool_calling.md ("Tool Calling": one section per model family, its `--tool-call-parser`)
              and the vLLM recipes for gpt-oss (`--tool-call-parser openai`)
    SGLang    docs/advanced_features/tool_parser.md ("Tool Parser": the table of parsers and supported models)
    Qwen      Qwen's own docs (qwen.readthedocs.io, Function Calling, vLLM: `--tool-call-parser hermes` for Qwen3)

Call ids are evidence too: vLLM names a structured call `chatcmpl-tool-<hex>` (`make_tool_call_id`), and vLLM
and SGLang name a Kimi-K2 model's calls `functions.NAME:INDEX`; `call_id_style` reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["DOCUMENTED", "Documented", "call_id_style", "documented_for", "documented_for_ids"]

VLLM_DOCS = "vLLM docs, Tool Calling"
SGLANG_DOCS = "SGLang docs, Tool Parser"


@dataclass(frozen=True)
class Documented:
    """One model family and the parsers the engines' docs recommend for it (registry keys, vLLM's first)."""

    models: str
    """The family as the docs name it, e.g. 'Qwen2.5 / QwQ'."""
    pattern: str
    """A regex searched in the served model name (lower case, `_` and spaces as `-`)."""
    parsers: tuple[str, ...]
    """agentic_eval.classify.parsers keys, e.g. ('vllm:hermes', 'sglang:qwen25')."""
    source: str
    """Where the recommendation is written."""


DOCUMENTED: tuple[Documented, ...] = (
    # First match wins: the narrower families before the wider ones they share a name with.
    Documented("xLAM", r"xlam", ("vllm:xlam",), f"{VLLM_DOCS}: xLAM Models"),
    Documented("Hermes 2 Pro / 2 Theta / 3", r"hermes-?[23]", ("vllm:hermes",), f"{VLLM_DOCS}: Hermes Models"),
    Documented("Qwen3-Coder", r"qwen3-coder|qwen3-480b-a35b", ("vllm:qwen3_xml", "sglang:qwen3_coder"),
               f"{VLLM_DOCS}: Qwen3-Coder Models; {SGLANG_DOCS}: qwen3_coder"),
    Documented("Qwen2.5 / QwQ", r"qwen-?2\.5|qwq", ("vllm:hermes", "sglang:qwen25"),
               f"{VLLM_DOCS}: Qwen Models; {SGLANG_DOCS}: qwen (Qwen series except Qwen3-Coder)"),
    Documented("Qwen (other than Qwen2.5 and Qwen3-Coder)", r"qwen", ("vllm:hermes", "sglang:qwen25"),
               f"Qwen docs, Function Calling (vLLM: hermes); {SGLANG_DOCS}: qwen (Qwen series except Qwen3-Coder)"),
    Documented("Kimi-K2", r"kimi-k2", ("vllm:kimi_k2", "sglang:kimi_k2"),
               f"{VLLM_DOCS}: Kimi-K2 Models; {SGLANG_DOCS}: kimi_k2"),
    Documented("DeepSeek-V3.1", r"deepseek-v3[.-][12]", ("vllm:deepseek_v31", "sglang:deepseekv31"),
               f"{VLLM_DOCS}: DeepSeek-V3.1 Models; {SGLANG_DOCS}: deepseekv31 (V3.1, V3.2-Exp)"),
    Documented("DeepSeek-V3 / R1-0528", r"deepseek-v3|deepseek-r1-0528", ("vllm:deepseek_v3", "sglang:deepseekv3"),
               f"{VLLM_DOCS}: DeepSeek-V3 Models; {SGLANG_DOCS}: deepseekv3"),
    Documented("GLM-4.5 / 4.6", r"glm-?4\.[56]", ("vllm:glm45", "sglang:glm"),
               f"{VLLM_DOCS}: GLM-4.5 Models; {SGLANG_DOCS}: glm (GLM series)"),
    Documented("GLM", r"glm-?4\.7|glm-?5", ("sglang:glm",), f"{SGLANG_DOCS}: glm (GLM series)"),
    Documented("Llama 4", r"llama-?4", ("vllm:llama4_pythonic", "sglang:pythonic"),
               f"{VLLM_DOCS}: Llama Models (Llama 4: llama4_pythonic); {SGLANG_DOCS}: pythonic"),
    Documented("Llama 3.1 / 3.2 / 3.3", r"llama-?3[.-][123]", ("vllm:llama3_json", "sglang:llama3"),
               f"{VLLM_DOCS}: Llama Models; {SGLANG_DOCS}: llama3"),
    Documented("Mistral", r"mistral|mixtral|ministral|devstral|codestral|magistral",
               ("vllm:mistral", "sglang:mistral"), f"{VLLM_DOCS}: Mistral Models; {SGLANG_DOCS}: mistral"),
    Documented("Granite 4.0", r"granite-4", ("vllm:hermes",), f"{VLLM_DOCS}: IBM Granite"),
    Documented("Granite-20B-FunctionCalling", r"granite-20b-functioncalling", ("vllm:granite-20b-fc",),
               f"{VLLM_DOCS}: IBM Granite"),
    Documented("Granite 3.0 / 3.1", r"granite-3", ("vllm:granite",), f"{VLLM_DOCS}: IBM Granite"),
    Documented("InternLM2.5", r"internlm-?2[.-]?5", ("vllm:internlm",), f"{VLLM_DOCS}: InternLM Models"),
    Documented("Jamba 1.5", r"jamba", ("vllm:jamba",), f"{VLLM_DOCS}: Jamba Models"),
    Documented("MiniMax-M1", r"minimax-m1", ("vllm:minimax",), f"{VLLM_DOCS}: MiniMax Models"),
    Documented("Hunyuan-A13B", r"hunyuan-a13b", ("vllm:hunyuan_a13b",), f"{VLLM_DOCS}: Hunyuan Models"),
    Documented("LongCat-Flash", r"longcat-flash", ("vllm:longcat",), f"{VLLM_DOCS}: LongCat-Flash-Chat Models"),
    Documented("Olmo 3", r"olmo-?3", ("vllm:olmo3",), f"{VLLM_DOCS}: Olmo 3 Models"),
    Documented("GigaChat 3", r"gigachat-?3", ("vllm:gigachat3",), f"{VLLM_DOCS}: Gigachat 3 Models"),
    Documented("ToolACE", r"toolace", ("vllm:pythonic",), f"{VLLM_DOCS}: Models with Pythonic Tool Calls"),
    Documented("gpt-oss", r"gpt-oss", ("vllm:openai", "sglang:gpt-oss"),
               f"vLLM recipes, GPT-OSS (--tool-call-parser openai); {SGLANG_DOCS}: gpt-oss"),
    Documented("Step-3", r"step-?3", ("sglang:step3",), f"{SGLANG_DOCS}: step3"),
)
_COMPILED = tuple((re.compile(row.pattern), row) for row in DOCUMENTED)
_KIMI_ID = re.compile(r"functions\.[\w.\-]+:\d+")


def documented_for(model: str | None) -> Documented | None:
    """The documented parsers for a served model name ('Qwen/Qwen2.5-7B-Instruct', 'qwen2.5-coder:7b',
    'qwen2.5-coder-1.5b-instruct-q4_k_m'), or None when no engine documents its family."""
    if not model:
        return None
    name = re.sub(r"[_\s]+", "-", model.strip().lower())
    return next((row for pattern, row in _COMPILED if pattern.search(name)), None)


def call_id_style(call_id: object) -> str:
    """Which engine a structured call's id comes from: 'kimi_k2' (`functions.NAME:INDEX`, vLLM's and SGLang's
    ids for Kimi-K2), 'vllm' (`chatcmpl-tool-...`), else 'other'."""
    if not isinstance(call_id, str):
        return "other"
    if _KIMI_ID.fullmatch(call_id):
        return "kimi_k2"
    return "vllm" if call_id.startswith("chatcmpl-tool-") else "other"


def documented_for_ids(styles: Iterable[str]) -> Documented | None:
    """The documented row the structured calls' ids imply: Kimi-K2's when any id is `functions.NAME:INDEX`."""
    return documented_for("kimi-k2") if "kimi_k2" in set(styles) else None
