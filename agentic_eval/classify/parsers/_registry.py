"""Every engine parser we read, by key `engine:name`, with the reader that does what it does."""

from __future__ import annotations

from dataclasses import dataclass

from agentic_eval.classify.parsers._json_tags import sglang_qwen25, vllm_hermes
from agentic_eval.classify.parsers._llama import vllm_llama3_json
from agentic_eval.classify.parsers._mistral import sglang_mistral, vllm_mistral
from agentic_eval.classify.parsers._pythonic import vllm_llama4_pythonic, vllm_pythonic
from agentic_eval.classify.parsers._qwen3_xml import sglang_qwen3_coder, vllm_qwen3_coder
from agentic_eval.classify.parsers._types import EngineParser, Read

__all__ = ["ROWS", "Row"]

_VLLM = "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser {name}"
_SGLANG = "python -m sglang.launch_server --model-path MODEL --tool-call-parser {name}"


@dataclass(frozen=True)
class Row:
    parser: EngineParser
    read: Read


def _vllm(name: str, families: tuple[str, ...], read: Read, note: str = "") -> Row:
    how = _VLLM.format(name=name) + (f" ({note})" if note else "")
    return Row(EngineParser(f"vllm:{name}", "vllm", name, families, how), read)


def _sglang(name: str, families: tuple[str, ...], read: Read, note: str = "") -> Row:
    how = _SGLANG.format(name=name) + (f" ({note})" if note else "")
    return Row(EngineParser(f"sglang:{name}", "sglang", name, families, how), read)


ROWS: tuple[Row, ...] = (
    _vllm("hermes", ("hermes",), vllm_hermes),
    _vllm("qwen3_coder", ("qwen3_xml",), vllm_qwen3_coder),
    _vllm("qwen3_xml", ("qwen3_xml",), vllm_qwen3_coder),
    _vllm("llama3_json", ("llama_json",), vllm_llama3_json,
          "Llama 3.1/3.2; add --chat-template examples/tool_chat_template_llama3.1_json.jinja"),
    _vllm("llama4_json", ("llama_json",), vllm_llama3_json,
          "Llama 4 JSON calls; add --chat-template examples/tool_chat_template_llama4_json.jinja"),
    _vllm("pythonic", ("pythonic",), vllm_pythonic, "Llama 3.2 / ToolACE pythonic lists"),
    _vllm("llama4_pythonic", ("pythonic",), vllm_llama4_pythonic, "Llama 4"),
    _vllm("mistral", ("mistral",), vllm_mistral, "with --tokenizer-mode mistral for Mistral models"),
    _sglang("qwen25", ("hermes",), sglang_qwen25),
    _sglang("qwen", ("hermes",), sglang_qwen25, "same as qwen25"),
    _sglang("qwen3_coder", ("qwen3_xml",), sglang_qwen3_coder),
    _sglang("mistral", ("mistral",), sglang_mistral),
)
