"""Sandbox generator `pyservice`: a small rate-limiting and usage-billing service.

The generated repo is a realistic little Python project that runs with the
standard library only (plus pytest for its tests, found through
`pythonpath = ["src"]` in pyproject.toml, so nothing needs installing):

    README.md  pyproject.toml  .gitignore
    config/settings.json        service, limits and billing settings (read by the code)
    config/deploy.yaml          deployment settings (read by ops tooling, not by the code)
    data/usage.csv              a month of metered usage: `timestamp,client,requests`
    docs/cli.md  docs/configuration.md
    src/<pkg>/  __init__ __main__ constants config limiter usage billing report cli
    tests/      test_limiter test_billing test_usage test_config test_cli

Every name and constant that a task could be answered from memory with (the
package name, ports, limits, the legacy constant, function names, the usage
data...) comes from `random.Random(seed)`; the same seed gives byte-identical
files. `params["scenario"]` picks a task-specific variant of the repo:

    base          everything consistent, all tests pass
    failing_test  one bug in the code makes one named unit test fail
    traceback     the invoice command crashes on the shipped usage log (comment line)
    dead_code     an unused v1 tariff module, its test, and a helper only it uses
    stale_docs    docs/ describe an old CLI option and old config values
    duplicated    money formatting written out by hand in several modules

`generate()` returns the variables tasks are templated with (see `_variables`).
"""

# No `from __future__ import annotations` here: generators are loaded by file path
# without an entry in sys.modules, and dataclasses need one to resolve string annotations.
import json
import random
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

from agentic_eval.packs.twinspec import (
    Bind,
    Captured,
    Check,
    Clock,
    Const,
    E,
    Has,
    JsonFile,
    Missing,
    Ref,
    Shipped,
    TestSpec,
    TextFile,
    Words,
    render_imports,
    render_python,
    twins_of,
)

SCENARIOS = ("base", "failing_test", "traceback", "dead_code", "stale_docs", "duplicated")

# Name pools. Fresh names (what a task asks the agent to introduce) must never be
# substrings of anything in the pristine repo; `_check_fresh_names` enforces it.
PACKAGE_NAMES = ("ratekeeper", "quotaflow", "tollgate", "meterly", "pacekeeper", "billrate", "tallyhub", "throttlebox")
LEGACY_RENAMES = (
    ("LEGACY_RATE_TOKEN", "BURST_TOKENS_DEFAULT"),
    ("LEGACY_BUCKET_SIZE", "DEFAULT_BUCKET_TOKENS"),
    ("OLD_QUOTA_UNIT", "FALLBACK_BURST_TOKENS"),
    ("V1_RATE_TOKENS", "BUCKET_CAPACITY_DEFAULT"),
)
CHARGE_FUNCTIONS = ("compute_charge", "charge_for_usage", "price_usage")
BUCKET_CLASSES = ("TokenBucket", "RateBucket", "TokenLimiter")
CLIENT_NAMES = ("acme", "globex", "initech", "umbrella", "hooli", "wonka", "tyrell", "cyberdyne", "soylent", "vandelay")
CURRENCIES = ("EUR", "USD", "GBP", "CHF")
NEW_MODULE_NAMES = ("consumption", "meter_log", "traffic_log")
SPEC_MODULE_NAMES = ("durations", "timespans", "interval_parse")
PRORATE_FUNCTIONS = ("prorate", "prorated_charge", "prorate_cents")
DEAD_MODULES = ("pricing_v1", "legacy_tariffs", "flat_pricing")
DEAD_HELPERS = ("_round_half_down", "_legacy_round", "_v1_round_cents")
DEV_USERS = ("dana", "kim", "lee", "sam", "alex", "robin")
FAILING_VARIANTS = {
    "limiter_cap": ("tests/test_limiter.py", "test_refill_is_capped_at_capacity"),
    "billing_rounding": ("tests/test_billing.py", "test_charge_rounds_half_up"),
    "usage_totals": ("tests/test_usage.py", "test_totals_add_up_per_client"),
}


@dataclass(frozen=True)
class Choices:
    """Everything the seed decides."""

    scenario: str
    pkg: str
    version: str
    new_version: str
    port: int
    new_port: int
    stale_port: int
    rpm: int
    new_rpm: int
    stale_rpm: int
    burst: int
    legacy_const: str
    new_const: str
    legacy_value: int
    currency: str
    price: int
    free_requests: int
    charge_fn: str
    bucket_class: str
    usage_rows: tuple[tuple[str, str, int], ...]
    usage_month: str
    replicas: int
    new_replicas: int
    memory: str
    new_memory: str
    new_module: str
    spec_module: str
    prorate_fn: str
    dead_module: str
    dead_helper: str
    v1_price: int
    dev_user: str
    failing_variant: str
    check_default: int


def _choose(seed: int, scenario: str) -> Choices:
    rng = random.Random(seed)
    pkg = rng.choice(PACKAGE_NAMES)
    major, minor, patch = rng.randint(0, 2), rng.randint(1, 9), rng.randint(0, 9)
    port, new_port, stale_port = rng.sample(range(7000, 9900), 3)
    rpm, new_rpm, stale_rpm = rng.sample((60, 90, 120, 180, 240, 300, 450, 600), 3)
    legacy_const, new_const = rng.choice(LEGACY_RENAMES)
    clients = sorted(rng.sample(CLIENT_NAMES, rng.randint(3, 4)))
    year, month = rng.choice((2023, 2024)), rng.randint(1, 12)
    rows = []
    for hour in range(rng.randint(9, 13)):
        rows.append((f"{year}-{month:02d}-{1 + hour // 4:02d}T{(hour * 6) % 24:02d}:00:00Z",
                     rng.choice(clients), rng.randint(40, 4000)))
    memory_mi = rng.choice((256, 384, 512))
    replicas = rng.randint(2, 4)
    return Choices(
        scenario=scenario,
        pkg=pkg,
        version=f"{major}.{minor}.{patch}",
        new_version=f"{major}.{minor + 1}.0",
        port=port,
        new_port=new_port,
        stale_port=stale_port,
        rpm=rpm,
        new_rpm=new_rpm,
        stale_rpm=stale_rpm,
        burst=rng.choice((10, 15, 20, 25, 40)),
        legacy_const=legacy_const,
        new_const=new_const,
        legacy_value=rng.choice([n for n in range(17, 97) if n % 5]),
        currency=rng.choice(CURRENCIES),
        price=rng.randint(7, 59),  # below every rate limit: docs must not show a stale limit by chance
        free_requests=rng.choice((0, 250, 500, 1000)),
        charge_fn=rng.choice(CHARGE_FUNCTIONS),
        bucket_class=rng.choice(BUCKET_CLASSES),
        usage_rows=tuple(rows),
        usage_month=f"{year}-{month:02d}",
        replicas=replicas,
        new_replicas=replicas + rng.randint(2, 4),
        memory=f"{memory_mi}Mi",
        new_memory=f"{memory_mi * 2}Mi",
        new_module=rng.choice(NEW_MODULE_NAMES),
        spec_module=rng.choice(SPEC_MODULE_NAMES),
        prorate_fn=rng.choice(PRORATE_FUNCTIONS),
        dead_module=rng.choice(DEAD_MODULES),
        dead_helper=rng.choice(DEAD_HELPERS),
        v1_price=rng.randint(2, 9),
        dev_user=rng.choice(DEV_USERS),
        failing_variant=rng.choice(sorted(FAILING_VARIANTS)),
        check_default=rng.choice((50, 100, 200)),
    )


# --------------------------------------------------------------------------- expected outputs


def charge_cents(requests: int, price: int, free_requests: int) -> int:
    """The service's billing rule: per 1000 billable requests, rounded half up."""
    return (max(0, requests - free_requests) * price + 500) // 1000


def money(cents: int, currency: str) -> str:
    return f"{cents // 100}.{cents % 100:02d} {currency}"


def usage_totals(c: Choices) -> dict[str, int]:
    totals: dict[str, int] = {}
    for _, client, requests in c.usage_rows:
        totals[client] = totals.get(client, 0) + requests
    return dict(sorted(totals.items()))


def invoice_text(c: Choices) -> str:
    """Exactly what `python -m <pkg> invoice data/usage.csv` prints with the shipped settings."""
    lines = [f"Invoice ({c.currency}, {c.price} cents per 1000 requests, first {c.free_requests} free per client)"]
    total_requests = total_cents = 0
    for client, requests in usage_totals(c).items():
        cents = charge_cents(requests, c.price, c.free_requests)
        total_requests += requests
        total_cents += cents
        lines.append(f"{client:<12}{requests:>10} requests {money(cents, c.currency):>14}")
    lines.append(f"{'TOTAL':<12}{total_requests:>10} requests {money(total_cents, c.currency):>14}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- repo files


def _t(text: str, c: Choices, **extra: Any) -> str:
    """Fill `$name` placeholders from the choices (and `extra`); a missing name is a bug."""
    values = {**c.__dict__, **extra}
    return Template(text.lstrip("\n")).substitute(values)


def _pyproject(c: Choices) -> str:
    return _t('''
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "$pkg"
version = "$version"
description = "Rate limiting and usage billing for the $pkg API gateway"
requires-python = ">=3.10"

[project.scripts]
$pkg = "$pkg.cli:main"

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
''', c)


def _readme(c: Choices) -> str:
    return _t('''
# $pkg

Rate limiting and usage billing for the $pkg API gateway: a token-bucket
limiter per client, and monthly invoices computed from metered usage logs.

## Quick start

Everything runs from the repository root with the standard library only:

    PYTHONPATH=src python -m $pkg show-config
    PYTHONPATH=src python -m $pkg invoice data/usage.csv
    python -m pytest

## Layout

- `src/$pkg/`: the package (`limiter`, `usage`, `billing`, `report`, `cli`, ...)
- `config/settings.json`: service, limits and billing settings
- `config/deploy.yaml`: deployment settings for the ops tooling
- `data/usage.csv`: the current month's usage export
- `docs/`: the command line and the configuration reference
- `tests/`: the unit tests
''', c)


GITIGNORE = "__pycache__/\n*.pyc\n.pytest_cache/\n*.egg-info/\n.venv/\nbuild/\ndist/\n"


def _settings_json(c: Choices) -> str:
    data = {
        "service": {"name": c.pkg, "host": "127.0.0.1", "port": c.port},
        "limits": {"requests_per_minute": c.rpm, "burst": c.burst},
        "billing": {"currency": c.currency, "price_per_1k_cents": c.price, "free_requests": c.free_requests},
        "log_level": "INFO",
    }
    return json.dumps(data, indent=2) + "\n"


def _deploy_yaml(c: Choices) -> str:
    return _t('''
# Deployment of the $pkg service. Read by the ops tooling, not by the service itself.
service: $pkg
replicas: $replicas
container:
  image: $pkg-api
  resources:
    cpu: 250m
    memory: $memory
healthcheck:
  path: /healthz
  interval_s: 10
  timeout_s: 2
rollout:
  max_unavailable: 1
  max_surge: 1
''', c)


def _usage_csv(c: Choices) -> str:
    lines = [f"# usage export for {c.usage_month} from the gateway meters"]
    previous_day = c.usage_rows[0][0][:10]
    for timestamp, client, requests in c.usage_rows:
        if timestamp[:10] != previous_day:  # the export separates days with a blank line
            lines.append("")
            previous_day = timestamp[:10]
        lines.append(f"{timestamp},{client},{requests}")
    return "\n".join(lines) + "\n"


def _docs_cli(c: Choices) -> str:
    if c.scenario == "stale_docs":
        invoice_rows = (
            "| `--currency CODE` | bill in this currency instead of `billing.currency` |\n"
            "| `--free N` | free requests per client instead of `billing.free_requests` |\n"
        )
    else:
        invoice_rows = (
            "| `--currency CODE` | bill in this currency instead of `billing.currency` |\n"
            "| `--free-requests N` | free requests per client instead of `billing.free_requests` |\n"
            "| `--price-per-1k CENTS` | price per 1000 billable requests instead of `billing.price_per_1k_cents` |\n"
        )
    return _t('''
# Command line

Run from the repository root:

    PYTHONPATH=src python -m $pkg [--settings PATH] COMMAND [OPTIONS]

`--settings PATH` selects the settings file (default `config/settings.json`).
A missing or invalid settings file exits with status 2.

## `invoice USAGE_FILE`

Prints one line per client (total requests and charge) and a `TOTAL` line.
The usage file holds one `timestamp,client,requests` line per metering interval.

| option | meaning |
| --- | --- |
$invoice_rows
## `check`

Sends a burst of requests to a fresh limiter and prints how many were allowed.

| option | meaning |
| --- | --- |
| `--requests N` | requests sent at once (default $check_default) |

## `show-config`

Prints the effective settings, one `key: value` per line.
''', c, invoice_rows=invoice_rows)


def _docs_configuration(c: Choices) -> str:
    port, rpm = (c.stale_port, c.stale_rpm) if c.scenario == "stale_docs" else (c.port, c.rpm)
    return _t('''
# Configuration

The service reads `config/settings.json` (another file with `--settings PATH`).

| key | value in this repo | meaning |
| --- | --- | --- |
| `service.host` | `127.0.0.1` | address the API binds to |
| `service.port` | `$doc_port` | port the API listens on |
| `limits.requests_per_minute` | `$doc_rpm` | sustained request rate per client |
| `limits.burst` | `$burst` | bucket size: requests a client may send at once |
| `billing.currency` | `$currency` | currency of invoices |
| `billing.price_per_1k_cents` | `$price` | price per 1000 billable requests, in cents |
| `billing.free_requests` | `$free_requests` | free requests per client and month |

`service.port` and `limits.requests_per_minute` are required. When
`limits.burst` is omitted the bucket holds `$legacy_const` ($legacy_value) tokens.

Deployment settings (replicas, resources, health check) live in
`config/deploy.yaml`; the ops tooling reads them, the service does not.
''', c, doc_port=port, doc_rpm=rpm)


def _init_py(c: Choices) -> str:
    return _t('''
"""$pkg: rate limiting and usage billing for the $pkg API gateway."""

__version__ = "$version"
''', c)


MAIN_PY = '''"""`python -m {pkg}`: run the command line."""

from .cli import main

raise SystemExit(main())
'''


def _constants_py(c: Choices) -> str:
    return _t('''
"""Constants shared by the $pkg modules."""

DEFAULT_SETTINGS_PATH = "config/settings.json"

# Tokens a client may bank when the settings give no burst (the v1 limiter's bucket size).
$legacy_const = $legacy_value

DEFAULT_CURRENCY = "EUR"
''', c)


def _config_py(c: Choices) -> str:
    return _t('''
"""Load the service settings from a JSON file (config/settings.json)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .constants import $legacy_const, DEFAULT_CURRENCY


class SettingsError(ValueError):
    """The settings file is missing, unreadable, or holds a bad value."""


@dataclass(frozen=True)
class Settings:
    """The settings the service runs with."""

    host: str
    port: int
    requests_per_minute: int
    burst: int
    currency: str
    price_per_1k_cents: int
    free_requests: int


def _required(section: dict[str, Any], key: str, where: str) -> Any:
    if key not in section:
        raise SettingsError(f"{where}: missing required setting {key!r}")
    return section[key]


def load_settings(path: str | Path) -> Settings:
    """Read the settings file at `path`, filling in defaults for optional keys."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(f"settings file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{path}: invalid JSON: {exc}") from None
    service = data.get("service", {})
    limits = data.get("limits", {})
    billing = data.get("billing", {})
    settings = Settings(
        host=str(service.get("host", "127.0.0.1")),
        port=int(_required(service, "port", f"{path}: service")),
        requests_per_minute=int(_required(limits, "requests_per_minute", f"{path}: limits")),
        burst=int(limits.get("burst", $legacy_const)),
        currency=str(billing.get("currency", DEFAULT_CURRENCY)),
        price_per_1k_cents=int(billing.get("price_per_1k_cents", 0)),
        free_requests=int(billing.get("free_requests", 0)),
    )
    if settings.requests_per_minute <= 0:
        raise SettingsError(f"{path}: limits.requests_per_minute must be positive")
    return settings
''', c)


def _limiter_py(c: Choices) -> str:
    refill = (
        "self._tokens = self._tokens + elapsed * self.refill_per_second"
        if c.scenario == "failing_test" and c.failing_variant == "limiter_cap"
        else "self._tokens = min(float(self.capacity), self._tokens + elapsed * self.refill_per_second)"
    )
    return _t('''
"""A token bucket per client: `capacity` tokens, refilled continuously."""

from __future__ import annotations

import time
from collections.abc import Callable

from .constants import $legacy_const


class $bucket_class:
    """Allows bursts of up to `capacity` requests, then `refill_per_second` on average."""

    def __init__(
        self,
        capacity: int = $legacy_const,
        refill_per_second: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self.refill_per_second = refill_per_second
        self._clock = clock
        self._tokens = float(capacity)
        self._updated = clock()

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(0.0, now - self._updated)
        $refill
        self._updated = now

    def available(self) -> float:
        """Tokens in the bucket right now."""
        self._refill()
        return self._tokens

    def allow(self, cost: int = 1) -> bool:
        """Take `cost` tokens if the bucket holds them; False (and take nothing) otherwise."""
        if cost > self.capacity:
            raise ValueError(f"cost {cost} exceeds the bucket capacity {self.capacity}")
        self._refill()
        if self._tokens >= cost:
            self._tokens -= cost
            return True
        return False
''', c, refill=refill)


def _usage_py(c: Choices) -> str:
    if c.scenario == "traceback":
        docstring = "Parse usage lines into records."
        loop = '''    for number, raw in enumerate(lines, start=1):
        timestamp, client, count = raw.strip().split(",")'''
    else:
        docstring = "Parse usage lines into records; blank lines and `#` comments are skipped."
        loop = '''    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        timestamp, client, count = line.split(",")'''
    add = (
        "totals[record.client] = record.requests"
        if c.scenario == "failing_test" and c.failing_variant == "usage_totals"
        else "totals[record.client] = totals.get(record.client, 0) + record.requests"
    )
    return _t('''
"""Usage logs: one `timestamp,client,requests` line per metering interval."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class UsageRecord:
    timestamp: str
    client: str
    requests: int


def parse_usage(lines: Iterable[str]) -> list[UsageRecord]:
    """$docstring"""
    records = []
$loop
        requests = int(count)
        if requests < 0:
            raise ValueError(f"line {number}: negative request count {requests}")
        records.append(UsageRecord(timestamp.strip(), client.strip(), requests))
    return records


def totals_by_client(records: Iterable[UsageRecord]) -> dict[str, int]:
    """Total requests per client, sorted by client name."""
    totals: dict[str, int] = {}
    for record in records:
        $add
    return dict(sorted(totals.items()))
''', c, docstring=docstring, loop=loop, add=add)


def _billing_py(c: Choices) -> str:
    rounding = (
        "return billable * price_per_1k_cents // 1000"
        if c.scenario == "failing_test" and c.failing_variant == "billing_rounding"
        else "return (billable * price_per_1k_cents + 500) // 1000"
    )
    text = _t('''
"""Turn request counts into charges."""

from __future__ import annotations


def $charge_fn(requests: int, price_per_1k_cents: int, free_requests: int = 0) -> int:
    """Charge in cents for `requests`: the first `free_requests` are free, the rest
    cost `price_per_1k_cents` per 1000, rounded half up to a whole cent."""
    if requests < 0:
        raise ValueError("requests must not be negative")
    billable = max(0, requests - free_requests)
    $rounding
''', c, rounding=rounding)
    if c.scenario != "duplicated":
        text += '''

def format_money(cents: int, currency: str) -> str:
    """`1234, "EUR"` -> `"12.34 EUR"`."""
    return f"{cents // 100}.{cents % 100:02d} {currency}"
'''
    if c.scenario == "dead_code":
        text = text.replace("from __future__ import annotations\n", "from __future__ import annotations\n\nimport math\n")
        text += "\n\n" + _t('''
def $dead_helper(value: float) -> int:
    """Round to whole cents, halves down (the v1 tariff's rounding rule)."""
    return math.ceil(value - 0.5)
''', c)
    return text


def _dead_module_py(c: Choices) -> str:
    return _t('''
"""Flat per-request tariffs of the v1 pricing.

Superseded by the per-1000 pricing in billing.py; kept while clients migrated.
"""

from __future__ import annotations

from .billing import $dead_helper

V1_PRICE_PER_REQUEST_MILLICENTS = $v1_price


def v1_charge(requests: int) -> int:
    """Charge in cents under the v1 flat tariff."""
    return $dead_helper(requests * V1_PRICE_PER_REQUEST_MILLICENTS / 1000)


def v1_invoice(totals: dict[str, int]) -> dict[str, int]:
    """Charge per client under the v1 flat tariff."""
    return {client: v1_charge(requests) for client, requests in totals.items()}
''', c)


def _report_py(c: Choices) -> str:
    if c.scenario == "duplicated":
        imports = f"from .billing import {c.charge_fn}"
        line_money = 'f"{cents // 100}.{cents % 100:02d} {settings.currency}"'
        total_money = 'f"{total_cents // 100}.{total_cents % 100:02d} {settings.currency}"'
    else:
        imports = f"from .billing import {c.charge_fn}, format_money"
        line_money = "format_money(cents, settings.currency)"
        total_money = "format_money(total_cents, settings.currency)"
    return _t('''
"""Render invoices as text."""

from __future__ import annotations

$imports
from .config import Settings


def render_invoice(totals: dict[str, int], settings: Settings) -> str:
    """One line per client (requests and charge), then a TOTAL line."""
    lines = [
        f"Invoice ({settings.currency}, {settings.price_per_1k_cents} cents per 1000 requests, "
        f"first {settings.free_requests} free per client)"
    ]
    total_requests = 0
    total_cents = 0
    for client, requests in totals.items():
        cents = $charge_fn(requests, settings.price_per_1k_cents, settings.free_requests)
        total_requests += requests
        total_cents += cents
        amount = $line_money
        lines.append(f"{client:<12}{requests:>10} requests {amount:>14}")
    total = $total_money
    lines.append(f"{'TOTAL':<12}{total_requests:>10} requests {total:>14}")
    return "\\n".join(lines) + "\\n"
''', c, imports=imports, line_money=line_money, total_money=total_money)


def _cli_py(c: Choices) -> str:
    if c.scenario == "duplicated":
        money_import = ""
        price = 'f"{settings.price_per_1k_cents // 100}.{settings.price_per_1k_cents % 100:02d} {settings.currency}"'
    else:
        money_import = "from .billing import format_money\n"
        price = "format_money(settings.price_per_1k_cents, settings.currency)"
    return _t('''
"""Command line: `python -m $pkg [--settings PATH] COMMAND ...` (see docs/cli.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace

${money_import}from .config import Settings, SettingsError, load_settings
from .constants import DEFAULT_SETTINGS_PATH
from .limiter import $bucket_class
from .report import render_invoice
from .usage import parse_usage, totals_by_client


def cmd_invoice(args: argparse.Namespace, settings: Settings) -> int:
    overrides = {
        "currency": args.currency,
        "free_requests": args.free_requests,
        "price_per_1k_cents": args.price_per_1k,
    }
    settings = replace(settings, **{k: v for k, v in overrides.items() if v is not None})
    with open(args.usage_file, encoding="utf-8") as handle:
        records = parse_usage(handle)
    sys.stdout.write(render_invoice(totals_by_client(records), settings))
    return 0


def cmd_check(args: argparse.Namespace, settings: Settings) -> int:
    bucket = $bucket_class(
        capacity=settings.burst,
        refill_per_second=settings.requests_per_minute / 60,
        clock=lambda: 0.0,  # all requests arrive at the same instant
    )
    allowed = sum(1 for _ in range(args.requests) if bucket.allow())
    print(f"allowed {allowed} of {args.requests} requests "
          f"(bucket of {settings.burst}, refill {settings.requests_per_minute}/min)")
    return 0


def cmd_show_config(args: argparse.Namespace, settings: Settings) -> int:
    print(f"host: {settings.host}")
    print(f"port: {settings.port}")
    print(f"requests_per_minute: {settings.requests_per_minute}")
    print(f"burst: {settings.burst}")
    price = $price
    print(f"price: {price} per 1000 requests (first {settings.free_requests} free per client)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="$pkg", description="Rate limiting and usage billing.")
    parser.add_argument("--settings", default=DEFAULT_SETTINGS_PATH, help="settings file (default: %(default)s)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    invoice = commands.add_parser("invoice", help="print the invoice for a usage log")
    invoice.add_argument("usage_file", help="usage log: timestamp,client,requests lines")
    invoice.add_argument("--currency", help="override billing.currency")
    invoice.add_argument("--free-requests", type=int, help="override billing.free_requests")
    invoice.add_argument("--price-per-1k", type=int, help="override billing.price_per_1k_cents")
    invoice.set_defaults(handler=cmd_invoice)

    check = commands.add_parser("check", help="send a burst of requests to a fresh limiter")
    check.add_argument("--requests", type=int, default=$check_default, help="requests sent at once")
    check.set_defaults(handler=cmd_check)

    show = commands.add_parser("show-config", help="print the effective settings")
    show.set_defaults(handler=cmd_show_config)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings(args.settings)
    except SettingsError as exc:
        print(f"$pkg: error: {exc}", file=sys.stderr)
        return 2
    return args.handler(args, settings)
''', c, money_import=money_import, price=price)


# --------------------------------------------------------------------------- the repo's tests
# Each test is a spec (agentic_eval/packs/twinspec.py): the pytest source the model sees is rendered from it,
# and so is its twin, the same calls and expected values as data the grader judges (variables["twins"]).

HELPERS = {
    "clock": '''

class FakeClock:
    """A clock the tests move by hand."""

    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now
''',
    "write": '''

def write(tmp_path, name, text):
    """A fixture file in the test's own folder; its path."""
    path = tmp_path / name
    path.write_text(text)
    return str(path)
''',
    "root": '''

ROOT = Path(__file__).resolve().parent.parent
''',
}


@dataclass(frozen=True)
class TestFile:
    """One test file of the repo: its docstring, the names its tests import, helpers, and the tests."""

    __test__ = False

    doc: str
    imports: dict[str, str]
    tests: tuple[TestSpec, ...]
    helpers: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    """Standard modules the header imports (json, pathlib's Path)."""

    def source(self) -> str:
        head = f'"""{self.doc}"""\n\n'
        stdlib = [f"import {m}" if m != "Path" else "from pathlib import Path" for m in self.modules]
        if any(s.raises for t in self.tests for s in t.steps if isinstance(s, Check)):
            stdlib.append("import pytest")
        stdlib = sorted(s for s in stdlib if s.startswith("import") and s != "import pytest") + \
            [s for s in stdlib if s.startswith("from")] + (["", "import pytest"] if "import pytest" in stdlib else [])
        head += "\n".join(stdlib) + ("\n\n" if stdlib else "") + render_imports(self.imports)
        head += "".join(HELPERS[h] for h in self.helpers)
        return head + "".join("\n\n" + render_python(t) for t in self.tests)

    def twins(self, file: str) -> list[dict[str, Any]]:
        return twins_of(file, self.tests, self.imports)


def _limiter_tests(c: Choices) -> TestFile:
    bucket, const = c.bucket_class, Const(c.legacy_const, c.legacy_value)
    capped = (Clock("clock", 1000.0), Bind("bucket", E(bucket, capacity=4, refill_per_second=10.0, clock=Ref("clock"))),
              Check(E("bucket.allow", 4), True), Clock("clock", 1060.0), Check(E("bucket.available"), 4.0))
    return TestFile("Tests for the token bucket.", {c.legacy_const: f"{c.pkg}.constants", bucket: f"{c.pkg}.limiter"}, (
        TestSpec("test_default_capacity_is_the_legacy_bucket_size",
                 (Bind("bucket", E(bucket)), Check(E("bucket.capacity", call=False), const))),
        TestSpec("test_allows_a_burst_then_denies", (
            Clock("clock", 1000.0), Bind("bucket", E(bucket, capacity=3, refill_per_second=1.0, clock=Ref("clock"))),
            *(Check(E("bucket.allow"), n < 3) for n in range(4)))),
        TestSpec("test_refills_over_time", (
            Clock("clock", 1000.0), Bind("bucket", E(bucket, capacity=2, refill_per_second=0.5, clock=Ref("clock"))),
            Check(E("bucket.allow", 2), True), Check(E("bucket.allow"), False), Clock("clock", 1002.0),
            Check(E("bucket.allow"), True))),
        TestSpec("test_refill_is_capped_at_capacity", capped),
        TestSpec("test_cost_above_capacity_is_rejected", (
            Bind("bucket", E(bucket, capacity=2)), Check(E("bucket.allow", 3), raises="ValueError"))),
    ), helpers=("clock",))


def _billing_tests(c: Choices) -> TestFile:
    fn = c.charge_fn
    imports = {fn: f"{c.pkg}.billing"}
    tests = [
        TestSpec("test_free_requests_are_not_charged",
                 (Check(E(fn, 800, price_per_1k_cents=40, free_requests=1000), 0),)),
        TestSpec("test_charge_per_thousand", (Check(E(fn, 5000, price_per_1k_cents=40, free_requests=1000), 160),)),
        TestSpec("test_charge_rounds_half_up", (Check(E(fn, 1020, price_per_1k_cents=25), 26, note="25.5 cents"),
                                                Check(E(fn, 1019, price_per_1k_cents=25), 25, note="25.475 cents"))),
        TestSpec("test_negative_requests_are_rejected", (Check(E(fn, -1, price_per_1k_cents=10), raises="ValueError"),)),
    ]
    if c.scenario != "duplicated":
        imports["format_money"] = f"{c.pkg}.billing"
        tests.append(TestSpec("test_format_money", (
            Check(E("format_money", 0, "EUR"), "0.00 EUR"), Check(E("format_money", 5, "USD"), "0.05 USD"),
            Check(E("format_money", 123456, c.currency), f"1234.56 {c.currency}"))))
    return TestFile("Tests for billing.", imports, tuple(tests))


def _usage_tests(c: Choices) -> TestFile:
    module = f"{c.pkg}.usage"
    imports = {"UsageRecord": module, "parse_usage": module, "totals_by_client": module, "len": "builtins",
               "vars": "builtins", "list": "builtins"}
    lines = ["2024-06-01T10:00:00Z,acme,120\n", "2024-06-01T10:05:00Z,globex,30\n"]
    tests = [
        TestSpec("test_parses_lines", (
            Bind("records", E("parse_usage", lines)), Check(E("len", Ref("records")), 2),
            Bind("first", E("records[0]", call=False)), Bind("second", E("records[1]", call=False)),
            Check(E("vars", Ref("first")), {"timestamp": "2024-06-01T10:00:00Z", "client": "acme", "requests": 120}),
            Check(E("vars", Ref("second")), {"timestamp": "2024-06-01T10:05:00Z", "client": "globex",
                                              "requests": 30}))),
        TestSpec("test_negative_counts_are_rejected",
                 (Check(E("parse_usage", ["2024-06-01T10:00:00Z,acme,-3\n"]), raises="ValueError"),)),
        TestSpec("test_totals_add_up_per_client", (
            Bind("a", E("UsageRecord", "t1", "beta", 5)), Bind("b", E("UsageRecord", "t2", "alpha", 7)),
            Bind("c", E("UsageRecord", "t3", "beta", 1)),
            Bind("totals", E("totals_by_client", [Ref("a"), Ref("b"), Ref("c")])),
            Check(E("totals", call=False), {"alpha": 7, "beta": 6}), Check(E("list", Ref("totals")), ["alpha", "beta"]))),
    ]
    if c.scenario != "traceback":
        tests.append(TestSpec("test_skips_blank_and_comment_lines", (
            Bind("records", E("parse_usage", ["# export\n", "\n", "t,acme,5\n"])), Check(E("len", Ref("records")), 1),
            Bind("only", E("records[0]", call=False)),
            Check(E("vars", Ref("only")), {"timestamp": "t", "client": "acme", "requests": 5}))))
    return TestFile("Tests for usage log parsing.", imports, tuple(tests))


def _config_tests(c: Choices) -> TestFile:
    module = f"{c.pkg}.config"
    imports = {"SettingsError": module, "load_settings": module, c.legacy_const: f"{c.pkg}.constants"}
    every = {"service": {"host": "localhost", "port": 8001}, "limits": {"requests_per_minute": 120, "burst": 7},
             "billing": {"currency": "USD", "price_per_1k_cents": 12, "free_requests": 100}}
    values = {"host": "localhost", "port": 8001, "requests_per_minute": 120, "burst": 7, "currency": "USD",
              "price_per_1k_cents": 12, "free_requests": 100}
    minimal = {"service": {"port": 8000}, "limits": {"requests_per_minute": 60}}
    return TestFile("Tests for loading settings.", imports, (
        TestSpec("test_loads_every_value", (Bind("settings", E("load_settings", JsonFile(every))),
                                            *(Check(E(f"settings.{k}", call=False), v) for k, v in values.items()))),
        TestSpec("test_burst_defaults_to_the_legacy_bucket_size", (
            Bind("settings", E("load_settings", JsonFile(minimal))),
            Check(E("settings.burst", call=False), Const(c.legacy_const, c.legacy_value)))),
        TestSpec("test_missing_port_is_an_error", (
            Check(E("load_settings", JsonFile({"limits": {"requests_per_minute": 60}})), raises="SettingsError"),)),
        TestSpec("test_missing_file_is_an_error", (Check(E("load_settings", Missing()), raises="SettingsError"),)),
        TestSpec("test_rate_must_be_positive", (Check(E("load_settings", JsonFile(
            {"service": {"port": 8000}, "limits": {"requests_per_minute": 0}})), raises="SettingsError"),)),
        TestSpec("test_the_shipped_settings_load", (
            Bind("settings", E("load_settings", Shipped("config/settings.json"))),
            Check(E("settings.port", call=False), above=0))),
    ), helpers=("write", "root"), modules=("json", "Path"))


def _cli_tests(c: Choices) -> TestFile:
    settings = JsonFile({"service": {"port": 8100}, "limits": {"requests_per_minute": 60, "burst": 5},
                         "billing": {"currency": "EUR", "price_per_1k_cents": 50, "free_requests": 1000}})
    usage = TextFile("2024-06-01T00:00:00Z,acme,3000\n2024-06-01T01:00:00Z,acme,1000\n")
    with_settings = (Bind("settings", settings),)
    return TestFile("Tests for the command line.", {"main": f"{c.pkg}.cli"}, (
        TestSpec("test_invoice", (*with_settings, Bind("usage", usage), Captured(
            E("main", ["--settings", Ref("settings"), "invoice", Ref("usage")]), 0,
            out=(Words(1, ("acme", "4000", "requests", "1.50", "EUR")),
                 Words(-1, ("TOTAL", "4000", "requests", "1.50", "EUR")))))),
        TestSpec("test_show_config", (*with_settings, Captured(
            E("main", ["--settings", Ref("settings"), "show-config"]), 0,
            out=(Has("port: 8100"), Has("price: 0.50 EUR per 1000 requests")))),),
        TestSpec("test_check_denies_after_the_burst", (*with_settings, Captured(
            E("main", ["--settings", Ref("settings"), "check", "--requests", "8"]), 0,
            out=(Has("allowed 5 of 8 requests"),)))),
        TestSpec("test_missing_settings_exit_with_status_2", (Captured(
            E("main", ["--settings", Missing(), "show-config"]), 2, err=(Has("not found"),)),)),
    ), helpers=("write",), modules=("json",))


def _dead_module_tests(c: Choices) -> TestFile:
    module = f"{c.pkg}.{c.dead_module}"
    return TestFile("Tests for the v1 flat tariffs.", {"v1_charge": module, "v1_invoice": module}, (
        TestSpec("test_v1_charge", (Check(E("v1_charge", 0), 0), Check(E("v1_charge", 1000), c.v1_price))),
        TestSpec("test_v1_invoice", (Check(E("v1_invoice", {"acme": 2000}), {"acme": 2 * c.v1_price}),)),
    ))


def _test_files(c: Choices) -> dict[str, TestFile]:
    files = {"tests/test_limiter.py": _limiter_tests(c), "tests/test_billing.py": _billing_tests(c),
             "tests/test_usage.py": _usage_tests(c), "tests/test_config.py": _config_tests(c),
             "tests/test_cli.py": _cli_tests(c)}
    if c.scenario == "dead_code":
        files[f"tests/test_{c.dead_module}.py"] = _dead_module_tests(c)
    return files


# --------------------------------------------------------------------------- assembling


def _files(c: Choices) -> dict[str, str]:
    src = f"src/{c.pkg}"
    files = {
        ".gitignore": GITIGNORE,
        "README.md": _readme(c),
        "pyproject.toml": _pyproject(c),
        "config/settings.json": _settings_json(c),
        "config/deploy.yaml": _deploy_yaml(c),
        "data/usage.csv": _usage_csv(c),
        "docs/cli.md": _docs_cli(c),
        "docs/configuration.md": _docs_configuration(c),
        f"{src}/__init__.py": _init_py(c),
        f"{src}/__main__.py": MAIN_PY.format(pkg=c.pkg),
        f"{src}/constants.py": _constants_py(c),
        f"{src}/config.py": _config_py(c),
        f"{src}/limiter.py": _limiter_py(c),
        f"{src}/usage.py": _usage_py(c),
        f"{src}/billing.py": _billing_py(c),
        f"{src}/report.py": _report_py(c),
        f"{src}/cli.py": _cli_py(c),
        **{rel: tests.source() for rel, tests in _test_files(c).items()},
    }
    if c.scenario == "dead_code":
        files[f"{src}/{c.dead_module}.py"] = _dead_module_py(c)
    return files


def _line_of(text: str, needle: str) -> int:
    """1-based number of the first line of `text` containing `needle`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise ValueError(f"generator bug: {needle!r} not found")


def _traceback(c: Choices, files: dict[str, str]) -> str:
    """What the crash of `invoice data/usage.csv` looks like in the traceback scenario."""
    src = f"src/{c.pkg}"
    where = f"/home/{c.dev_user}/{c.pkg}/src/{c.pkg}"
    # (module, statement, function, the part Python 3.11 underlines with carets)
    frames = [
        ("__main__.py", "raise SystemExit(main())", "<module>", "main()"),
        ("cli.py", "return args.handler(args, settings)", "main", "args.handler(args, settings)"),
        ("cli.py", "records = parse_usage(handle)", "cmd_invoice", "parse_usage(handle)"),
        ("usage.py", 'timestamp, client, count = raw.strip().split(",")', "parse_usage", "timestamp, client, count"),
    ]
    lines = [
        "Traceback (most recent call last):",
        '  File "<frozen runpy>", line 198, in _run_module_as_main',
        '  File "<frozen runpy>", line 88, in _run_code',
    ]
    for module, statement, function, underlined in frames:
        number = _line_of(files[f"{src}/{module}"], statement)
        lines.append(f'  File "{where}/{module}", line {number}, in {function}')
        lines.append(f"    {statement}")
        lines.append(" " * (4 + statement.index(underlined)) + "^" * len(underlined))
    lines.append("ValueError: not enough values to unpack (expected 3, got 1)")
    return "\n".join(lines)


def _variables(c: Choices, files: dict[str, str]) -> dict[str, Any]:
    totals = usage_totals(c)
    charges = {client: charge_cents(n, c.price, c.free_requests) for client, n in totals.items()}
    variables: dict[str, Any] = {
        "scenario": c.scenario,
        "pkg": c.pkg,
        "src_dir": f"src/{c.pkg}",
        "version": c.version,
        "new_version": c.new_version,
        "host": "127.0.0.1",
        "port": c.port,
        "new_port": c.new_port,
        "rpm": c.rpm,
        "new_rpm": c.new_rpm,
        "burst": c.burst,
        "legacy_const": c.legacy_const,
        "legacy_value": c.legacy_value,
        "new_const": c.new_const,
        "currency": c.currency,
        "price_per_1k_cents": c.price,
        "free_requests": c.free_requests,
        "charge_fn": c.charge_fn,
        "bucket_class": c.bucket_class,
        "usage_file": "data/usage.csv",
        "usage_month": c.usage_month,
        "usage_totals": totals,
        "charges": charges,
        "total_cents": sum(charges.values()),
        "invoice_output": invoice_text(c),
        "replicas": c.replicas,
        "new_replicas": c.new_replicas,
        "memory": c.memory,
        "new_memory": c.new_memory,
        "new_module": c.new_module,
        "spec_module": c.spec_module,
        "prorate_fn": c.prorate_fn,
        "env_var": f"{c.pkg.upper()}_PORT",
        "cli_options": ["--settings", "--currency", "--free-requests", "--price-per-1k", "--requests"],
        "test_count": sum(text.count("\ndef test_") for path, text in files.items() if path.startswith("tests/")),
        "twins": [twin for rel, tests in _test_files(c).items() for twin in tests.twins(rel)],
    }
    for path, text in files.items():
        if path.startswith("tests/test_"):
            variables[f"{Path(path).stem}_count"] = text.count("\ndef test_")
    if c.scenario == "failing_test":
        test_file, test_name = FAILING_VARIANTS[c.failing_variant]
        variables.update(failing_test=f"{test_file}::{test_name}", failing_test_file=test_file,
                         failing_test_name=test_name)
    elif c.scenario == "traceback":
        variables["traceback"] = _traceback(c, files)
        variables["traceback_command"] = f"PYTHONPATH=src python -m {c.pkg} invoice data/usage.csv"
    elif c.scenario == "dead_code":
        variables.update(dead_module=c.dead_module, dead_helper=c.dead_helper)
    elif c.scenario == "stale_docs":
        variables.update(stale_option="--free", stale_port=c.stale_port, stale_rpm=c.stale_rpm)
    return variables


FRESH_VARIABLES = ("new_const", "new_module", "spec_module", "prorate_fn", "env_var")
"""Names some task asks the agent to introduce: they must not occur in the pristine repo."""


def _check_fresh_names(variables: dict[str, Any], files: dict[str, str]) -> None:
    for key in FRESH_VARIABLES:
        needle = str(variables[key])
        for path, text in files.items():
            if needle in text or needle in path:
                raise AssertionError(f"generator bug: fresh name {needle!r} ({key}) occurs in {path}")


def generate(root: Path, seed: int, params: dict[str, Any]) -> dict[str, Any]:
    """Write the service repo for `seed` and `params["scenario"]` under `root`; return its variables."""
    scenario = str(params.get("scenario", "base"))
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r} (known: {', '.join(SCENARIOS)})")
    choices = _choose(seed, scenario)
    files = _files(choices)
    variables = _variables(choices, files)
    _check_fresh_names(variables, files)
    for rel_path in sorted(files):
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[rel_path].encode("utf-8"))
    return variables
