"""Why a reward verifier failed when the cause is the machine's or the task's, not the model's: a program its
script runs that its container lacks, or the network it fetches that program from, which its container cannot reach.

A Terminal-Bench 2 `tests/test.sh` installs curl and uv from the internet before it runs the tests; on an
engine with no network it writes reward 0 itself after `uvx: command not found`, on a machine where no model
could pass. `verifier_fault` names that cause from the verifier's output, the task's own script and what the
harness knows of the container (whether it had a way out, whether a reward was written): a pure function,
tested table-driven in tests/test_verifier_cause.py. Its callers: `confine/verifier_check.py`'s
`machine_fault` (a trial's verifier), which also confirms that the program is missing from the task's image,
and validate's reason for its reference fix's run. In a fresh container of the task's image either kind
counts; in a snapshot of the agent's own container only the network's (confine/docker_env.py): there a
program merely missing may be the model's doing, and is scored.

What the model's code prints is no evidence (it runs under the verifier and can print anything), so a line
of output counts only beside facts it cannot forge: the program not found is one the task's script runs in a
command's place (`script_commands`: never a word of a comment, an argument such as `echo 1`, or a program it
runs only after `command -v`) and its image lacks (checked apart), and the script could not have installed it
(it fetches nothing, or its container had no network). Even then the verdict is unscored only when a control
run on the task's untouched working directory fails the same way (confine/verifier_control.py). A failed
fetch with no program missing makes an unscored verdict's reason say the cause (no reward written), but never
turns a written reward into an unscored one: the fetch may not have mattered, and the model's own failure would
then go uncounted.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Literal

FaultKind = Literal["program", "network"]

_NOT_FOUND = (
    re.compile(r"^(?:.*?: )?(?:line \d+: )?([\w.+-]+): command not found\s*$", re.MULTILINE),  # bash
    re.compile(r"^(?:.*?: )?\d+: ([\w.+-]+): not found\s*$", re.MULTILINE),  # dash: `sh: 1: uvx: not found`
    re.compile(r"exec: \"?([\w.+-]+)\"?: executable file not found", re.IGNORECASE),
    re.compile(r"^env: '?([\w.+-]+)'?: No such file or directory\s*$", re.MULTILINE),
)
"""A shell that did not find a program (group 1: its name)."""
_NETWORK = re.compile(
    r"Could not resolve host|Temporary failure (?:in name resolution|resolving)|Name or service not known|"
    r"Failed to establish a new connection|Network is unreachable|No route to host|Could not connect to server|"
    r"failed to lookup address information|dns error|error sending request for url|"
    r"getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|Could not fetch URL|Connection timed out|"
    r"Failed to connect to [^\s]+ port|Unable to connect to|unable to access '", re.IGNORECASE)
"""A fetch that failed for want of the network: DNS, routes, refused or timed-out connections (curl, wget, pip,
uv, apt, npm, git)."""
_FETCHES = re.compile(
    r"\b(?:curl|wget|pip3?|uv|uvx|apt-get|apt|apk|npm|npx|yarn|pnpm|cargo|go\s+(?:install|get|mod)|gem|"
    r"git\s+clone|conda|mamba|poetry)\b")
"""What a verifier script runs that fetches from the network."""
_SHELL_WORDS = frozenset({"source", ".", "cd", "exec", "then", "else", "fi", "do", "done"})


@dataclass(frozen=True)
class VerifierFault:
    """A verifier failed for the machine's or the task's want of something, not the model's doing."""

    kind: FaultKind
    """'program': a program the script runs is not in the container; 'network': the script fetched and could not."""
    cause: str
    """One line for the trial's record and validate's reason: what was missing, and the output's line that says so."""
    program: str = ""
    """The first program not found ('' for a failed fetch alone): the caller confirms the task's image lacks it."""


_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time",
                       "in", "esac", "function", "[[", "]]"})
"""Words in a command's place that are the shell's, not a program: the word after them is in a command's place."""
_PREFIXES = frozenset({"sudo", "exec", "env", "nohup", "nice", "xargs", "builtin", "timeout", "stdbuf", "setsid"})
"""Programs that run the program named after their options."""
_SEPARATORS = frozenset(";&|()`\n")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w]*)\1")


def _uncommented(script: str) -> str:
    """The script without its comments and here-documents' bodies (neither runs a program)."""
    kept: list[str] = []
    until = ""
    for line in script.splitlines():
        if until:
            if line.strip() == until:
                until = ""
            continue
        quote = ""
        cut = len(line)
        for i, char in enumerate(line):
            if quote:
                if char == quote:
                    quote = ""
            elif char in "'\"":
                quote = char
            elif char == "#" and (i == 0 or line[i - 1] in " \t;&|("):
                cut = i
                break
        line = line[:cut]
        kept.append(line)
        if heredoc := _HEREDOC.search(line):
            until = heredoc[2]
    return "\n".join(kept)


def _tokens(text: str) -> list[str]:
    lex = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>`\n")
    lex.whitespace, lex.commenters = " \t\r", ""
    return list(lex)


def script_commands(script: str) -> frozenset[str]:
    """The programs the shell script runs: the words in a command's place (at a line's start, after `|`, `&&`,
    `;`, `$(`, a keyword such as `then`, a variable's assignment, or `sudo`/`env`/`timeout N`...), never a
    comment's word, an argument (`echo 1`) or a redirection's target. A line the lexer cannot read (an unclosed
    quote) is read alone, or left out."""
    text = _uncommented(script)
    try:
        tokens = _tokens(text)
    except ValueError:
        tokens = []
        for line in text.splitlines():
            try:
                tokens += [*_tokens(line), "\n"]
            except ValueError:
                tokens.append("\n")
    found: set[str] = set()
    place, skip, prefixed = True, False, False
    for token in tokens:
        if token and set(token) <= _SEPARATORS:
            place, skip, prefixed = True, False, False
            continue
        if skip:
            skip = False
            continue
        if "<" in token or ">" in token:  # a redirection: the next word is its target
            skip = True
            continue
        if token == "$":  # `$VAR ...` runs what a variable holds (its name is no program); `$(` is a separator
            skip = True
            place = False
            continue
        if not place:
            continue
        if token in _KEYWORDS or re.fullmatch(r"[A-Za-z_]\w*=.*", token, re.DOTALL):
            continue
        if token in ("for", "case", "select"):
            place = False
            continue
        if prefixed and re.fullmatch(r"-\S*|\d+(?:\.\d+)?[smhd]?", token):
            continue  # a prefix's option: the program it runs comes after
        name = token.lstrip("\\")
        found.add(name)
        prefixed = name in _PREFIXES
        place = prefixed
    return frozenset(found)


_GUARD = re.compile(r"\b(?:command\s+-[vV]|which|type(?:\s+-[a-zA-Z]+)?|hash)\s+([\w.+-]+)")
"""A script that asks whether a program is there: it runs it only when it is, so its absence is no one's fault."""


def _runs(script: str, program: str) -> bool:
    """Whether the script runs `program` as a command (`script_commands`), not only when it finds it (a
    `command -v jq` guard): a word of its comment or an argument is none, whatever the model's code prints."""
    if program not in script_commands(script):
        return False
    return program not in {m[1] for m in _GUARD.finditer(_uncommented(script))}


def _first_line(output: str, pattern: re.Pattern[str]) -> str:
    for line in output.splitlines():
        if pattern.search(line):
            return " ".join(line.split())[:160]
    return ""


def verifier_fault(output: str, script: str, *, offline: bool, reward: float | None) -> VerifierFault | None:
    """The machine's or task's fault in a verifier run that did not pass, from its `output`, the text of the
    task's own verifier `script` (tests/test.sh), whether its container had no way out (`offline`) and the
    reward it wrote (None: none); None when nothing says so (the verdict stands).

    A program the script runs that the shell did not find is a fault (worded as the network's when the script
    fetches and the container was offline: it would have installed it), unless the script fetches and the
    container had the network (then it could have, and what went wrong is not shown to be the machine's). With
    no reward written, a failed fetch of a script that fetches is named too."""
    if reward is not None and reward >= 1.0:
        return None
    fetches = bool(_FETCHES.search(script))
    network = _first_line(output, _NETWORK) if fetches else ""
    found: list[tuple[int, str, str]] = []
    for pattern in _NOT_FOUND:
        for match in pattern.finditer(output):
            name = match[1]
            if name not in _SHELL_WORDS and _runs(script, name) and name not in (f[1] for f in found):
                found.append((match.start(), name, " ".join(match[0].split())[:160]))
    found.sort()
    names = [name for _, name, _ in found][:3]
    missing = " and ".join(f"`{name}`" for name in names)
    line = found[0][2] if found else ""
    if found and fetches and not offline:
        return None
    if found and fetches:
        seen = f"{network}; then: {line}" if network else line
        return VerifierFault("network", f"the verifier needs {missing}, which its script installs from the network, "
                                        f"and its container had none ({seen})", names[0])
    if found:
        return VerifierFault("program", f"the verifier needs {missing}, which the task's image lacks and its "
                                        f"script does not install ({line})", names[0])
    if network and reward is None:
        return VerifierFault("network", f"the verifier fetches from the network, which its container could not "
                                        f"reach ({network})")
    return None
