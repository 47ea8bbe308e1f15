"""Every engine parser we read, by key `engine:name`, with the reader that does what it does."""

from __future__ import annotations

from dataclasses import dataclass

from agentic_eval.classify.parsers._glm import sglang_glm, vllm_glm
from agentic_eval.classify.parsers._harmony import sglang_gpt_oss, vllm_openai
from agentic_eval.classify.parsers._invoke import sglang_minimax_m2, sglang_step3, vllm_minimax_m2, vllm_step3
from agentic_eval.classify.parsers._json_lists import (
    vllm_granite,
    vllm_granite_20b_fc,
    vllm_internlm,
    vllm_jamba,
    vllm_minimax,
    vllm_phi4_mini,
    vllm_xlam,
)
from agentic_eval.classify.parsers._json_tags import (
    sglang_qwen25,
    vllm_ernie45,
    vllm_functiongemma,
    vllm_gigachat3,
    vllm_hermes,
    vllm_hunyuan_a13b,
    vllm_longcat,
)
from agentic_eval.classify.parsers._llama import sglang_llama3, vllm_llama3_json
from agentic_eval.classify.parsers._llamacpp import (
    llamacpp_command_r7b,
    llamacpp_generic,
    llamacpp_hermes_2_pro,
    llamacpp_llama_3_x,
    llamacpp_mistral_nemo,
)
from agentic_eval.classify.parsers._mistral import sglang_mistral, vllm_mistral
from agentic_eval.classify.parsers._ollama import ollama_template
from agentic_eval.classify.parsers._pythonic import sglang_pythonic, vllm_llama4_pythonic, vllm_olmo3, vllm_pythonic
from agentic_eval.classify.parsers._qwen3_xml import sglang_qwen3_coder, vllm_qwen3_coder, vllm_seed_oss
from agentic_eval.classify.parsers._tokens import (
    sglang_deepseek_v3,
    sglang_deepseek_v31,
    sglang_kimi_k2,
    vllm_deepseek_v3,
    vllm_deepseek_v31,
    vllm_kimi_k2,
)
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


_LLAMACPP = "llama-server -m MODEL.gguf --jinja"


def _llamacpp(name: str, title: str, families: tuple[str, ...], read: Read, templates: str) -> Row:
    how = (f"{_LLAMACPP}: the GGUF's chat template selects \"{title}\" ({templates}); if the embedded template "
           f"lacks tool calls add --chat-template-file with one of those templates (llama.cpp's models/templates/)")
    return Row(EngineParser(f"llama.cpp:{name}", "llama.cpp", title, families, how), read)


def _ollama(name: str, families: tuple[str, ...], prefix: str | None, models: str) -> Row:
    written = f"writes {prefix!r} before its calls" if prefix else "writes bare JSON calls"
    how = (f"ollama: a model whose template {written}, as {models} in the Ollama library do; a custom Modelfile "
           "TEMPLATE needs the same tool-call block; Ollama parses calls only when the request offers tools")
    return Row(EngineParser(f"ollama:{name}", "ollama", name, families, how), ollama_template(prefix))


def _sglang(name: str, families: tuple[str, ...], read: Read, note: str = "") -> Row:
    how = _SGLANG.format(name=name) + (f" ({note})" if note else "")
    return Row(EngineParser(f"sglang:{name}", "sglang", name, families, how), read)


ROWS: tuple[Row, ...] = (
    _vllm("hermes", ("hermes",), vllm_hermes, "Hermes 2/3, Qwen2.5, Qwen3 and most <tool_call> JSON models"),
    _vllm("qwen3_coder", ("qwen3_xml",), vllm_qwen3_coder, "Qwen3-Coder"),
    _vllm("qwen3_xml", ("qwen3_xml",), vllm_qwen3_coder, "Qwen3-Coder, XML-streaming variant"),
    _vllm("llama3_json", ("llama_json",), vllm_llama3_json,
          "Llama 3.1/3.2; add --chat-template examples/tool_chat_template_llama3.1_json.jinja"),
    _vllm("llama4_json", ("llama_json",), vllm_llama3_json,
          "Llama 4 JSON calls; add --chat-template examples/tool_chat_template_llama4_json.jinja"),
    _vllm("pythonic", ("pythonic",), vllm_pythonic, "Llama 3.2 / ToolACE pythonic lists"),
    _vllm("llama4_pythonic", ("pythonic",), vllm_llama4_pythonic, "Llama 4"),
    _vllm("olmo3", ("pythonic",), vllm_olmo3, "OLMo 3"),
    _vllm("mistral", ("mistral",), vllm_mistral, "add --tokenizer-mode mistral for Mistral models"),
    _vllm("deepseek_v3", ("deepseek",), vllm_deepseek_v3, "DeepSeek-V3 / R1"),
    _vllm("deepseek_v31", ("deepseek",), vllm_deepseek_v31, "DeepSeek-V3.1"),
    _vllm("kimi_k2", ("kimi",), vllm_kimi_k2, "Kimi-K2"),
    _vllm("glm45", ("glm",), vllm_glm, "GLM-4.5 / 4.6"),
    _vllm("glm47", ("glm",), vllm_glm, "GLM-4.7"),
    _vllm("granite", ("granite",), vllm_granite, "Granite 3.x"),
    _vllm("granite-20b-fc", ("granite_fc",), vllm_granite_20b_fc, "Granite-20B-FunctionCalling"),
    _vllm("internlm", ("internlm",), vllm_internlm, "InternLM2.5"),
    _vllm("jamba", ("jamba",), vllm_jamba, "Jamba"),
    _vllm("phi4_mini_json", ("phi4_mini",), vllm_phi4_mini, "Phi-4-mini"),
    _vllm("xlam", ("json", "llama_json"), vllm_xlam, "Salesforce xLAM-2"),
    _vllm("minimax", ("jamba",), vllm_minimax, "MiniMax-M1"),
    _vllm("minimax_m2", ("minimax",), vllm_minimax_m2, "MiniMax-M2"),
    _vllm("seed_oss", ("seed_oss",), vllm_seed_oss, "Seed-OSS"),
    _vllm("step3", ("anthropic_xml",), vllm_step3, "Step-3; vLLM's own tests fail its non-streaming path"),
    _vllm("openai", ("harmony",), vllm_openai, "gpt-oss"),
    _vllm("longcat", ("hermes",), vllm_longcat, "LongCat-Flash"),
    _vllm("hunyuan_a13b", ("jamba",), vllm_hunyuan_a13b, "Hunyuan-A13B"),
    _vllm("gigachat3", ("json",), vllm_gigachat3, "GigaChat 3 / 3.1"),
    _vllm("ernie45", ("hermes",), vllm_ernie45, "ERNIE 4.5"),
    _vllm("functiongemma", ("function_gemma",), vllm_functiongemma, "FunctionGemma"),
    _sglang("qwen25", ("hermes",), sglang_qwen25, "Qwen2.5 / Qwen3"),
    _sglang("qwen", ("hermes",), sglang_qwen25, "same as qwen25"),
    _sglang("qwen3_coder", ("qwen3_xml",), sglang_qwen3_coder, "Qwen3-Coder"),
    _sglang("llama3", ("llama_json",), sglang_llama3, "Llama 3.1/3.2"),
    _sglang("pythonic", ("pythonic",), sglang_pythonic, "Llama 3.2 / 4 pythonic lists"),
    _sglang("mistral", ("mistral",), sglang_mistral),
    _sglang("deepseekv3", ("deepseek",), sglang_deepseek_v3, "DeepSeek-V3 / R1"),
    _sglang("deepseekv31", ("deepseek",), sglang_deepseek_v31, "DeepSeek-V3.1"),
    _sglang("kimi_k2", ("kimi",), sglang_kimi_k2, "Kimi-K2"),
    _sglang("glm45", ("glm",), sglang_glm, "GLM-4.5 / 4.6"),
    _sglang("glm", ("glm",), sglang_glm, "same as glm45"),
    _sglang("glm47", ("glm",), sglang_glm, "GLM-4.7"),
    _sglang("minimax-m2", ("minimax",), sglang_minimax_m2, "MiniMax-M2"),
    _sglang("step3", ("anthropic_xml",), sglang_step3, "Step-3"),
    _sglang("gpt-oss", ("harmony",), sglang_gpt_oss, "gpt-oss"),
    _llamacpp("hermes_2_pro", "Hermes 2 Pro", ("hermes", "json", "llama_json", "functionary"), llamacpp_hermes_2_pro,
              "Hermes 2 Pro / Hermes 3, Qwen2.5, Qwen3, QwQ"),
    _llamacpp("llama_3_x", "Llama 3.x", ("llama_json", "pythonic"), llamacpp_llama_3_x, "Llama 3.1 / 3.2 / 3.3"),
    _llamacpp("mistral_nemo", "Mistral Nemo", ("mistral",), llamacpp_mistral_nemo, "Mistral Nemo"),
    _llamacpp("command_r7b", "Command R7B", ("command_r",), llamacpp_command_r7b, "Command R7B"),
    _llamacpp("generic", "Generic", ("json",), llamacpp_generic, "any template without tool syntax of its own"),
    _llamacpp("qwen3_coder", "Qwen3 Coder", ("qwen3_xml",), vllm_qwen3_coder, "Qwen3-Coder"),
    _llamacpp("deepseek_v3_1", "DeepSeek V3.1", ("deepseek",), vllm_deepseek_v31, "DeepSeek-V3.1"),
    _llamacpp("kimi_k2", "Kimi K2", ("kimi",), vllm_kimi_k2, "Kimi-K2"),
    _llamacpp("glm_4_5", "GLM 4.5", ("glm",), vllm_glm, "GLM-4.5 / 4.6"),
    _llamacpp("minimax_m2", "MiniMax-M2", ("minimax",), vllm_minimax_m2, "MiniMax-M2"),
    _llamacpp("seed_oss", "Seed-OSS", ("seed_oss",), vllm_seed_oss, "Seed-OSS"),
    _llamacpp("gpt_oss", "GPT-OSS", ("harmony",), vllm_openai, "gpt-oss"),
    _ollama("qwen2.5", ("hermes",), "<tool_call>", "qwen2.5, qwen2.5-coder, qwen3, hermes3, llama3-groq-tool-use"),
    _ollama("mistral", ("mistral",), "[TOOL_CALLS]", "mistral, mistral-nemo, mistral-small"),
    _ollama("llama3.2", ("llama_json",), None, "llama3.1, llama3.2, llama3.3"),
    _ollama("command-r-plus", ("json",), "Action: ```json", "command-r-plus"),
    _ollama("firefunction", ("phi4_mini",), "functools", "firefunction-v2"),
    _ollama("xlam", ("json",), None, "xlam"),
)
