"""Hidden checks of the node pack's service, shared by its graders (this folder is on their import path).

The checks drive the model's API (its own modules, e.g. loadConfig, loadCatalog and createApp on the shipped
files) in one node process apart from the grader (gradelib's `make_calls`); only what the calls return crosses
back, as JSON, and it is judged here, in the grader, against values the grader computes.
"""

import json
import secrets

from gradelib import Call, CallResult, Grader, make_calls, ref

MISSING = object()
"""What `got` gives when a call raised or returned no such part: equal to nothing a grader expects."""


def got(result: CallResult, path: str = "") -> object:
    """What a call returned (or its part at the dotted `path`); MISSING when it raised or there is none."""
    node = result.value if result.ok and not result.unserializable else MISSING
    for part in path.split(".") if path else []:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return MISSING
    return node


def shown(value: object) -> str:
    """JSON, type-strict (1 is not 1.0, true is not 1), with what was missing named."""
    try:
        return json.dumps(value, sort_keys=True, default=lambda _: "<missing>")
    except (RecursionError, ValueError):  # nested too deep to show: equal to nothing the grader expects
        return "<too deep>"


def expect(g: Grader, what: str, actual: object, expected: object, result: CallResult) -> bool:
    """A check of what came back (`actual`, plain data) against what the grader computed."""
    why = f"got {shown(actual)[:400]}" if result.ok else result.describe()
    return g.check(what, shown(actual) == shown(expected), why)


def client_error(status: object) -> bool:
    """A 4xx status (an int: true or "400" is none)."""
    return type(status) is int and 400 <= status < 500


class Batch:
    """Calls into the service's modules (src/NAME.js as NAME.*), made in order in one node process apart
    from the grader (`make_calls`): only what they return crosses back, as JSON."""

    def __init__(self, g: Grader, modules: tuple[str, ...] = ("app", "catalog", "config"), helpers: str = "") -> None:
        self.g = g
        self.calls: list[Call] = []
        self.setup: list[int] = []
        self.files: dict[str, str] = {}
        """Fixtures to write beside the module (absolute paths under the scratch folder)."""
        # One module of the grader's, in the scratch folder, holding the service's modules (so that one
        # process can call into all of them) and the grader's `helpers`.
        self.source = "".join(f"export * as {name} from {json.dumps((g.work / f'src/{name}.js').as_uri())};\n"
                              for name in modules) + helpers

    def add(self, target: str, *args: object, call: bool = True) -> int:
        self.calls.append(Call(target, list(args), call=call))
        return len(self.calls) - 1

    def app(self) -> int:
        """A fresh app on the shipped config and catalog, made as the service makes it."""
        settings = self.add("config.loadConfig", "config/service.json")
        catalog = self.add("catalog.loadCatalog", "data/catalog.json")
        app = self.add("app.createApp", {"settings": ref(settings), "catalog": ref(catalog)})
        self.setup += [settings, catalog, app]
        return app

    def request(self, app: int, method: str, path: object, body: object = None) -> int:
        return self.add(f"${app}.handle", {"method": method, "path": path, **({} if body is None else {"body": body})})

    def run(self) -> list[CallResult]:
        """Make the calls on a fresh copy of the tree, the module and the fixtures written in the same process
        start (nothing the model's code did earlier in this grading is left)."""
        module = f"{self.g.scratch}/probe_{secrets.token_hex(4)}.mjs"
        results = make_calls(module, self.calls, language="node", files={module: self.source, **self.files},
                             fresh=True, sandbox=self.g.sandbox)
        broken = [i for i in self.setup if not results[i].ok or results[i].unserializable == "undefined"]
        if self.setup:
            self.g.check("the app is made from the shipped files (loadConfig, loadCatalog, createApp)", not broken,
                         f"{self.calls[broken[0]].target.split('.')[-1]} {results[broken[0]].describe()}"
                         if broken else "")
        return results


def reply(result: CallResult, status: int, fields: dict) -> tuple[dict, dict]:
    """(what came back, what should have) for a reply's status and these fields of its body."""
    return ({"status": got(result, "status"), **{k: got(result, f"body.{k}") for k in fields}},
            {"status": status, **fields})

