"""The battery's tool catalog: 42 realistic tools in 18 domains, and how to ask for each.

Every tool has a JSON Schema with the things models trip on (nested objects, arrays, enums,
numbers with ranges, patterns, optional parameters), and a *maker*: given a seeded random
generator, it writes one unambiguous request for that tool and the exact arguments that fulfil
it. The battery's phases (`battery.py`) are built from these makers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from random import Random
from typing import Any

JSON = dict[str, Any]


# ---------------------------------------------------------------- schema shorthands


def s(desc: str, **kw: object) -> JSON:
    return {"type": "string", "description": desc, **kw}


def i(desc: str, lo: int | None = None, hi: int | None = None, **kw: object) -> JSON:
    bounds = {k: v for k, v in (("minimum", lo), ("maximum", hi)) if v is not None}
    return {"type": "integer", "description": desc, **bounds, **kw}


def n(desc: str, lo: float | None = None, **kw: object) -> JSON:
    return {"type": "number", "description": desc, **({"minimum": lo} if lo is not None else {}), **kw}


def b(desc: str, **kw: object) -> JSON:
    return {"type": "boolean", "description": desc, **kw}


def e(desc: str, values: list[str], **kw: object) -> JSON:
    return {"type": "string", "description": desc, "enum": values, **kw}


def a(desc: str, items: JSON, **kw: object) -> JSON:
    return {"type": "array", "description": desc, "items": items, **kw}


def o(props: JSON, required: list[str], desc: str | None = None) -> JSON:
    schema: JSON = {"type": "object", "properties": props, "required": required}
    return {"description": desc, **schema} if desc else schema


DATE = {"pattern": r"^\d{4}-\d{2}-\d{2}$"}
TIME = {"pattern": r"^\d{2}:\d{2}$"}
TICKET_ID = {"pattern": r"^[A-Z]{2,6}-\d+$"}
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CHF", "CAD"]


@dataclass(frozen=True)
class Tool:
    """One tool: its name, domain, description and parameters schema."""

    name: str
    domain: str
    description: str
    parameters: JSON
    generic: bool = False
    """Could serve almost any request (a shell, web search, raw HTTP): never offered as a distractor
    or in a negative case, where it would make the request ambiguous."""

    def chat_tool(self) -> JSON:
        """The chat completions form of the tool."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


_T = Tool
TOOLS: tuple[Tool, ...] = (
    _T("read_file", "files", "Read a text file from the workspace.", o({
        "path": s("Path relative to the workspace root."),
        "start_line": i("First line to return (1-based).", 1),
        "max_lines": i("Maximum number of lines to return.", 1, 5000)}, ["path"])),
    _T("write_file", "files", "Create or replace a text file in the workspace.", o({
        "path": s("Path relative to the workspace root."), "content": s("The whole new file content."),
        "overwrite": b("Replace the file if it exists.")}, ["path", "content"])),
    _T("list_directory", "files", "List the entries of a directory in the workspace.", o({
        "path": s("Directory path relative to the workspace root."), "recursive": b("Descend into subdirectories."),
        "include_hidden": b("Include entries whose name starts with a dot.")}, ["path"])),
    _T("delete_file", "files", "Delete a file from the workspace.",
       o({"path": s("Path of the file to delete.")}, ["path"])),
    _T("move_file", "files", "Move or rename a file in the workspace.", o({
        "source": s("Current path."), "destination": s("New path."),
        "overwrite": b("Replace the destination if it exists.")}, ["source", "destination"])),
    _T("run_command", "shell", "Run a shell command in the workspace and return its output.", o({
        "command": s("The command line to run."), "working_dir": s("Directory to run it in, relative to the root."),
        "timeout_seconds": i("Kill the command after this many seconds.", 1, 3600)}, ["command"]), generic=True),
    _T("grep_code", "code_search", "Search the workspace's files for a regular expression.", o({
        "pattern": s("Regular expression to search for."), "path": s("Directory or file to search in."),
        "case_sensitive": b("Match case exactly."), "file_glob": s("Only search files matching this glob, e.g. *.py.")},
        ["pattern"])),
    _T("web_search", "web", "Search the web and return result titles, links and snippets.", o({
        "query": s("Search query."), "max_results": i("Number of results.", 1, 20),
        "time_range": e("Only results from this period.", ["day", "week", "month", "year", "any"])}, ["query"]),
        generic=True),
    _T("git_commit", "git", "Commit staged changes (or the listed files) to the current branch.", o({
        "message": s("The commit message."), "files": a("Files to stage before committing.", s("File path.")),
        "amend": b("Amend the previous commit instead.")}, ["message"])),
    _T("git_create_branch", "git", "Create a git branch.", o({
        "name": s("Branch name."), "from_ref": s("Branch, tag or commit to start from."),
        "checkout": b("Switch to the new branch.")}, ["name"])),
    _T("git_log", "git", "Show the commit history.", o({
        "max_count": i("Number of commits to show.", 1, 500), "path": s("Only commits touching this path."),
        "author": s("Only commits by this author.")}, [])),
    _T("create_event", "calendar", "Create a calendar event.", o({
        "title": s("Event title."), "date": s("Day of the event, YYYY-MM-DD.", **DATE),
        "start_time": s("Start time, 24-hour HH:MM.", **TIME),
        "duration_minutes": i("Length of the event in minutes.", 5, 720),
        "attendees": a("People to invite.", o({"email": s("Attendee email address."),
                                               "optional": b("Attendance is optional.")}, ["email"])),
        "location": s("Room or address."),
        "recurrence": o({"frequency": e("How often it repeats.", ["daily", "weekly", "monthly"]),
                         "interval": i("Repeat every N periods.", 1, 12),
                         "count": i("Number of occurrences.", 1, 100)}, ["frequency", "count"],
                        "Repeat rule; leave out for a one-off event.")},
        ["title", "date", "start_time", "duration_minutes"])),
    _T("list_events", "calendar", "List the calendar events of one day.", o({
        "date": s("Day, YYYY-MM-DD.", **DATE), "calendar": e("Which calendar.", ["work", "personal", "shared"])},
        ["date"])),
    _T("cancel_event", "calendar", "Cancel a calendar event.", o({
        "event_id": s("Event identifier, as returned by list_events."),
        "notify_attendees": b("Email the attendees about the cancellation.")}, ["event_id"])),
    _T("set_reminder", "calendar", "Set a personal reminder.", o({
        "text": s("What to be reminded of."), "date": s("Day, YYYY-MM-DD.", **DATE),
        "time": s("Time, 24-hour HH:MM.", **TIME)}, ["text", "date", "time"])),
    _T("create_ticket", "tickets", "Open a ticket in the issue tracker.", o({
        "project": s("Project key, e.g. OPS.", pattern=r"^[A-Z]{2,6}$"), "title": s("One-line summary."),
        "priority": e("Priority.", ["low", "medium", "high", "urgent"]),
        "labels": a("Labels to add.", s("A label."), uniqueItems=True), "assignee": s("Username of the assignee.")},
        ["project", "title", "priority"])),
    _T("search_tickets", "tickets", "Search the issue tracker.", o({
        "query": s("Words to search for in titles and descriptions."),
        "status": e("Only tickets in this state.", ["open", "closed", "any"]),
        "limit": i("Maximum number of tickets.", 1, 100)}, ["query"])),
    _T("assign_ticket", "tickets", "Assign a ticket to a user.", o({
        "ticket_id": s("Ticket key, e.g. OPS-123.", **TICKET_ID), "assignee": s("Username.")},
        ["ticket_id", "assignee"])),
    _T("add_comment", "tickets", "Add a comment to a ticket.", o({
        "ticket_id": s("Ticket key, e.g. OPS-123.", **TICKET_ID), "body": s("Comment text (Markdown).")},
        ["ticket_id", "body"])),
    _T("set_ticket_status", "tickets", "Change the status of a ticket.", o({
        "ticket_id": s("Ticket key, e.g. OPS-123.", **TICKET_ID),
        "status": e("New status.", ["open", "in_progress", "resolved", "closed"])}, ["ticket_id", "status"])),
    _T("create_invoice", "payments", "Create and send an invoice to a customer.", o({
        "customer_id": s("Customer identifier, e.g. cus_123."), "currency": e("Invoice currency.", CURRENCIES),
        "line_items": a("What is billed.", o({"description": s("What the line is for."),
                                               "quantity": i("How many.", 1), "unit_price": n("Price of one unit.", 0)},
                                              ["description", "quantity", "unit_price"]), minItems=1),
        "due_date": s("Payment due date, YYYY-MM-DD.", **DATE), "notes": s("Note printed on the invoice.")},
        ["customer_id", "currency", "line_items", "due_date"])),
    _T("refund_payment", "payments", "Refund all or part of a payment.", o({
        "payment_id": s("Payment identifier, e.g. pay_123."), "amount": n("Amount to refund.", exclusiveMinimum=0),
        "reason": e("Why.", ["duplicate", "fraudulent", "requested_by_customer"])},
        ["payment_id", "amount", "reason"])),
    _T("get_account_balance", "payments", "Get the available balance of a bank account.", o({
        "account_id": s("Account identifier, e.g. acc_123.")}, ["account_id"])),
    _T("transfer_funds", "payments", "Move money between two accounts.", o({
        "from_account": s("Source account id."), "to_account": s("Destination account id."),
        "amount": n("Amount to move.", exclusiveMinimum=0), "currency": e("Currency.", CURRENCIES),
        "memo": s("Note shown on both statements.")}, ["from_account", "to_account", "amount", "currency"])),
    _T("get_current_weather", "weather", "Current weather conditions in a city.", o({
        "city": s("City name."), "units": e("Unit system.", ["metric", "imperial"])}, ["city"])),
    _T("get_forecast", "weather", "Daily weather forecast for a city.", o({
        "city": s("City name."), "days": i("Number of days.", 1, 14),
        "units": e("Unit system.", ["metric", "imperial"])}, ["city", "days"])),
    _T("send_email", "comms", "Send an email.", o({
        "to": a("Recipient addresses.", s("Email address."), minItems=1), "subject": s("Subject line."),
        "body": s("Plain-text body."), "cc": a("Copied addresses.", s("Email address.")),
        "priority": e("Priority flag.", ["low", "normal", "high"])}, ["to", "subject", "body"])),
    _T("search_email", "comms", "Search the mailbox.", o({
        "query": s("Words to search for."), "folder": e("Folder.", ["inbox", "sent", "archive", "spam"]),
        "unread_only": b("Only unread messages."), "limit": i("Maximum number of messages.", 1, 200)}, ["query"])),
    _T("post_message", "comms", "Post a message to a team chat channel.", o({
        "channel": s("Channel name with its #, e.g. #deploys.", pattern=r"^#[a-z0-9-]+$"), "text": s("Message text."),
        "thread_id": s("Reply in this thread.")}, ["channel", "text"])),
    _T("lookup_contact", "comms", "Look a person up in the company address book.", o({
        "name": s("Full name of the person.")}, ["name"])),
    _T("run_sql_query", "data", "Run a read-only SQL query on an analytics database.", o({
        "database": e("Database.", ["analytics", "billing", "inventory"]), "query": s("The SQL statement."),
        "max_rows": i("Maximum rows to return.", 1, 10000)}, ["database", "query"]), generic=True),
    _T("http_request", "http", "Send an HTTP request and return the response.", o({
        "method": e("HTTP method.", ["GET", "POST", "PUT", "PATCH", "DELETE"]), "url": s("Absolute URL."),
        "headers": {"type": "object", "description": "Request headers.", "additionalProperties": {"type": "string"}},
        "json_body": {"type": "object", "description": "JSON request body."},
        "timeout_seconds": n("Give up after this many seconds.", exclusiveMinimum=0)},
        ["method", "url"]), generic=True),
    _T("get_directions", "maps", "Route between two places.", o({
        "origin": s("Start address or place."), "destination": s("End address or place."),
        "mode": e("Travel mode.", ["driving", "walking", "bicycling", "transit"]),
        "avoid": a("Route features to avoid.", e("Feature.", ["tolls", "highways", "ferries"]), uniqueItems=True)},
        ["origin", "destination", "mode"])),
    _T("convert_currency", "finance", "Convert an amount between currencies at today's rate.", o({
        "amount": n("Amount to convert.", 0), "from_currency": e("Source currency.", CURRENCIES),
        "to_currency": e("Target currency.", CURRENCIES)}, ["amount", "from_currency", "to_currency"])),
    _T("get_stock_quote", "finance", "Latest price of a listed stock.", o({
        "symbol": s("Ticker symbol.", pattern=r"^[A-Z]{1,5}$")}, ["symbol"])),
    _T("get_local_time", "time", "Current local time in a time zone.", o({
        "timezone": s("IANA time zone, e.g. Europe/Paris.")}, ["timezone"])),
    _T("translate_text", "translate", "Translate text into another language.", o({
        "text": s("Text to translate."), "target_language": e("ISO 639-1 code.", ["de", "fr", "es", "ja", "pt", "it"]),
        "source_language": s("ISO 639-1 code of the source; detected if left out.")}, ["text", "target_language"]),
        generic=True),
    _T("get_order", "orders", "Look up a customer order.", o({"order_id": s("Order number, e.g. ORD-1001.")},
                                                              ["order_id"])),
    _T("ship_order", "orders", "Create a shipment for an order.", o({
        "order_id": s("Order number."), "carrier": e("Carrier.", ["ups", "fedex", "dhl", "usps"]),
        "address": o({"street": s("Street and number."), "city": s("City."), "postal_code": s("Postal code."),
                      "country": s("ISO 3166-1 alpha-2 code.", pattern=r"^[A-Z]{2}$")},
                     ["street", "city", "postal_code", "country"], "Delivery address."),
        "express": b("Next-day delivery.")}, ["order_id", "carrier", "address"])),
    _T("list_pods", "kubernetes", "List the pods of a Kubernetes namespace.", o({
        "namespace": s("Namespace."), "label_selector": s("Label selector, e.g. app=web.")}, ["namespace"])),
    _T("get_pod_logs", "kubernetes", "Fetch the logs of a pod.", o({
        "namespace": s("Namespace."), "pod": s("Pod name."), "tail_lines": i("Only the last N lines.", 1, 10000),
        "since_minutes": i("Only lines from the last N minutes.", 1, 1440)}, ["namespace", "pod"])),
    _T("scale_deployment", "kubernetes", "Set the replica count of a deployment.", o({
        "namespace": s("Namespace."), "deployment": s("Deployment name."),
        "replicas": i("Desired replicas.", 0, 50)}, ["namespace", "deployment", "replicas"])),
)
TOOLS_BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
NESTED_TOOLS = ("create_event", "create_invoice", "ship_order", "http_request", "get_directions", "send_email",
                "create_ticket")


# ---------------------------------------------------------------- value pools

CITIES = ["Lisbon", "Tokyo", "Nairobi", "Toronto", "Oslo", "Santiago", "Melbourne", "Cairo", "Reykjavik", "Hanoi",
          "Denver", "Krakow", "Montreal", "Seville", "Auckland", "Bogota"]
CITY_COUNTRY = [("Lisbon", "PT"), ("Porto", "PT"), ("Toronto", "CA"), ("Montreal", "CA"), ("Oslo", "NO"),
                ("Tokyo", "JP"), ("Krakow", "PL"), ("Seville", "ES"), ("Denver", "US"), ("Melbourne", "AU")]
USERS = ["dana", "marco", "priya", "kenji", "olga", "tomas", "aisha", "liam", "mei", "sven"]
PEOPLE = ["Dana Whitfield", "Marco Bellini", "Priya Raman", "Kenji Watanabe", "Olga Petrova", "Tomas Novak",
          "Aisha Bello", "Liam O'Connor"]
DOMAINS = ["example.com", "acme.io", "northwind.test"]
PROJECTS = ["OPS", "PAY", "WEB", "DATA", "MOB", "SEC"]
FILES = ["src/app/config.py", "docs/setup.md", "scripts/deploy.sh", "config/settings.yaml", "tests/test_api.py",
         "README.md", "src/billing/invoice.py", "web/static/app.js", "migrations/0042_add_index.sql", "Makefile"]
DIRS = ["src", "docs", "config", "scripts", "tests/fixtures", "web/static", "migrations"]
COMMANDS = ["pytest -q tests/test_api.py", "npm run build", "make lint", "df -h", "git status --short",
            "docker ps -a", "cargo test --release", "du -sh node_modules"]
QUERIES = ["rust async cancellation safety", "postgres vacuum full locking", "kubernetes pod disruption budget",
           "python 3.13 free threading", "http 429 retry-after header", "sqlite wal mode concurrency"]
TITLES = ["Disk full on db-3", "Login button misaligned on Safari", "Webhook retries exceed limit",
          "Nightly export job times out", "Typo in billing email footer", "Search returns stale results"]
LABELS = ["bug", "backend", "frontend", "infra", "billing", "regression", "customer"]
TIMEZONES = ["Europe/Lisbon", "Asia/Tokyo", "America/Toronto", "Africa/Nairobi", "Australia/Melbourne",
             "America/Denver", "Europe/Oslo"]
SYMBOLS = ["AAPL", "MSFT", "NVDA", "TSLA", "AMZN", "SAP", "ASML"]
LANGUAGES = {"de": "German", "fr": "French", "es": "Spanish", "ja": "Japanese", "pt": "Portuguese", "it": "Italian"}
NAMESPACES = ["payments", "web", "staging", "search"]
DEPLOYMENTS = ["api-gateway", "worker", "checkout", "indexer"]
PHRASES = ["The deploy is finished.", "Please restart the worker.", "The meeting moved to Thursday.",
           "Our office is closed on Monday."]


def date(r: Random) -> str:
    return f"2025-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"


def hhmm(r: Random) -> str:
    return f"{r.randint(7, 19):02d}:{r.choice(['00', '15', '30', '45'])}"


def email(r: Random) -> str:
    return f"{r.choice(USERS)}@{r.choice(DOMAINS)}"


def ident(r: Random, prefix: str, digits: int = 6) -> str:
    return prefix + "".join(r.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(digits))


def money(r: Random, lo: int = 5, hi: int = 900) -> float:
    return r.randint(lo * 4, hi * 4) / 4  # quarters: exact in binary and in prose


def fmt(amount: float) -> str:
    return f"{amount:.2f}"


@dataclass
class Intent:
    """One request for one tool and the arguments that fulfil it."""

    tool: str
    text: str
    args: JSON
    alts: dict[str, list[Any]] = field(default_factory=dict)
    """Other acceptable values for a top-level argument (e.g. 'New York' for 'New York City')."""
    texts: dict[str, list[str]] = field(default_factory=dict)
    """Free-text arguments: the words each must contain (freeform phase)."""
    defaults: tuple[str, ...] = ()
    """Arguments whose stated value is what leaving them out means (recursive=False): may be omitted."""


Maker = Callable[[Random], Intent]


# ---------------------------------------------------------------- one maker per tool


def _read_file(r: Random) -> Intent:
    path = r.choice(FILES)
    if r.random() < 0.5:
        return Intent("read_file", f"Show me the contents of {path}.", {"path": path})
    start, count = r.randint(2, 300), r.choice([20, 50, 80, 120])
    return Intent("read_file", f"Read {path} starting at line {start}, at most {count} lines.",
                  {"path": path, "start_line": start, "max_lines": count})


def _write_file(r: Random) -> Intent:
    path, line = f"notes/{r.choice(['todo', 'release', 'oncall'])}-{r.randint(1, 99)}.txt", r.choice(PHRASES)
    return Intent("write_file", f"Create the file {path} containing exactly this line: {line}",
                  {"path": path, "content": line}, texts={"content": [line]})


def _list_directory(r: Random) -> Intent:
    path, deep = r.choice(DIRS), r.random() < 0.5
    how = "recursively, including every subdirectory" if deep else "without descending into subdirectories"
    return Intent("list_directory", f"List what is in the {path} directory {how}.", {"path": path, "recursive": deep},
                  defaults=() if deep else ("recursive",))


def _delete_file(r: Random) -> Intent:
    path = r.choice(FILES).replace(".", f"_old{r.randint(1, 9)}.", 1)
    return Intent("delete_file", f"Delete the file {path}; it is no longer needed.", {"path": path})


def _move_file(r: Random) -> Intent:
    src = r.choice(FILES)
    dst = f"archive/{r.randint(2019, 2024)}/{src.rsplit('/', 1)[-1]}"
    return Intent("move_file", f"Move {src} to {dst}.", {"source": src, "destination": dst})


def _run_command(r: Random) -> Intent:
    cmd, t = r.choice(COMMANDS), r.choice([30, 60, 120, 300])
    return Intent("run_command", f"Run the shell command `{cmd}` with a timeout of {t} seconds.",
                  {"command": cmd, "timeout_seconds": t})


def _grep_code(r: Random) -> Intent:
    word = r.choice(["TODO", "FIXME", "LEGACY_RATE_TOKEN", "retry_limit", "deprecated"])
    glob = r.choice(["*.py", "*.js", "*.sql"])
    return Intent("grep_code", f"Search the code for the exact, case-sensitive pattern {word} in {glob} files only.",
                  {"pattern": word, "case_sensitive": True, "file_glob": glob})


def _web_search(r: Random) -> Intent:
    q, k = r.choice(QUERIES), r.choice([3, 5, 10])
    return Intent("web_search", f"Search the web for \"{q}\" and give me the top {k} results from the past month.",
                  {"query": q, "max_results": k, "time_range": "month"})


def _git_commit(r: Random) -> Intent:
    msg = f"Fix {r.choice(['typo', 'race', 'timeout'])} in {r.choice(FILES)}"
    return Intent("git_commit", f"Commit the staged changes with the message \"{msg}\".", {"message": msg},
                  texts={"message": [msg]})


def _git_create_branch(r: Random) -> Intent:
    name = f"feature/{r.choice(['retry', 'export', 'billing', 'search'])}-{r.randint(100, 999)}"
    base = r.choice(["main", "develop", "release-2.4"])
    return Intent("git_create_branch", f"Create a git branch named {name} from {base} and switch to it.",
                  {"name": name, "from_ref": base, "checkout": True})


def _git_log(r: Random) -> Intent:
    k, path = r.choice([5, 10, 20]), r.choice(FILES)
    return Intent("git_log", f"Show the last {k} commits that touched {path}.", {"max_count": k, "path": path})


def _attendees(r: Random) -> list[JSON]:
    people = r.sample(USERS, 2)
    return [{"email": f"{people[0]}@{DOMAINS[0]}"}, {"email": f"{people[1]}@{DOMAINS[0]}", "optional": True}]


def _create_event(r: Random) -> Intent:
    title, d, t, mins = (r.choice(["Design review", "Sprint planning", "1:1", "Incident retro"]), date(r), hhmm(r),
                         r.choice([30, 45, 60, 90]))
    who, count = _attendees(r), r.randint(3, 10)
    text = (f"Schedule \"{title}\" on {d} at {t} for {mins} minutes. Invite {who[0]['email']} (required) and "
            f"{who[1]['email']} (optional). It repeats weekly, {count} times in total.")
    return Intent("create_event", text, {"title": title, "date": d, "start_time": t, "duration_minutes": mins,
                                         "attendees": who, "recurrence": {"frequency": "weekly", "count": count}})


def _list_events(r: Random) -> Intent:
    d, cal = date(r), r.choice(["work", "personal", "shared"])
    return Intent("list_events", f"What is on my {cal} calendar on {d}?", {"date": d, "calendar": cal})


def _cancel_event(r: Random) -> Intent:
    ev = ident(r, "evt_")
    return Intent("cancel_event", f"Cancel the event {ev} and notify the attendees.",
                  {"event_id": ev, "notify_attendees": True})


def _set_reminder(r: Random) -> Intent:
    what, d, t = r.choice(["renew the TLS certificate", "call the bank", "submit the expense report"]), date(r), hhmm(r)
    return Intent("set_reminder", f"Remind me to {what} on {d} at {t}.", {"text": what, "date": d, "time": t},
                  texts={"text": [what.split()[-1]]})


def _create_ticket(r: Random) -> Intent:
    p, title, prio, labels = (r.choice(PROJECTS), r.choice(TITLES), r.choice(["low", "medium", "high", "urgent"]),
                              r.sample(LABELS, 2))
    return Intent("create_ticket", f"Open a {prio}-priority ticket in project {p} titled \"{title}\" with the labels "
                  f"{labels[0]} and {labels[1]}.", {"project": p, "title": title, "priority": prio, "labels": labels})


def _search_tickets(r: Random) -> Intent:
    q, k = r.choice(["webhook timeout", "login safari", "export job", "stale search"]), r.choice([5, 10, 25])
    return Intent("search_tickets", f"Find at most {k} closed tickets matching \"{q}\".",
                  {"query": q, "status": "closed", "limit": k})


def _assign_ticket(r: Random) -> Intent:
    t, u = f"{r.choice(PROJECTS)}-{r.randint(100, 9999)}", r.choice(USERS)
    return Intent("assign_ticket", f"Assign ticket {t} to {u}.", {"ticket_id": t, "assignee": u})


def _add_comment(r: Random) -> Intent:
    t, note = f"{r.choice(PROJECTS)}-{r.randint(100, 9999)}", r.choice(PHRASES)
    return Intent("add_comment", f"Comment on ticket {t}: \"{note}\"", {"ticket_id": t, "body": note},
                  texts={"body": [note]})


def _set_ticket_status(r: Random) -> Intent:
    t, st = f"{r.choice(PROJECTS)}-{r.randint(100, 9999)}", r.choice(["in_progress", "resolved", "closed"])
    said = {"in_progress": "in progress", "resolved": "resolved", "closed": "closed"}[st]
    return Intent("set_ticket_status", f"Mark ticket {t} as {said}.", {"ticket_id": t, "status": st})


def _create_invoice(r: Random) -> Intent:
    cus, cur, due = ident(r, "cus_"), r.choice(CURRENCIES), date(r)
    items: list[JSON] = [{"description": d, "quantity": r.randint(1, 12), "unit_price": money(r, 5, 400)}
             for d in r.sample(["Consulting hours", "Support plan", "Onboarding workshop", "Extra seats"], 2)]
    lines = " and ".join(f"{x['quantity']} x \"{x['description']}\" at {fmt(x['unit_price'])} each" for x in items)
    return Intent("create_invoice", f"Invoice customer {cus} in {cur} for {lines}, due {due}.",
                  {"customer_id": cus, "currency": cur, "line_items": items, "due_date": due})


def _refund_payment(r: Random) -> Intent:
    pay, amt = ident(r, "pay_"), money(r)
    return Intent("refund_payment", f"Refund {fmt(amt)} of payment {pay}; the customer was charged twice.",
                  {"payment_id": pay, "amount": amt, "reason": "duplicate"})


def _get_account_balance(r: Random) -> Intent:
    acc = ident(r, "acc_")
    return Intent("get_account_balance", f"What is the available balance of account {acc}?", {"account_id": acc})


def _transfer_funds(r: Random) -> Intent:
    src, dst, amt, cur = ident(r, "acc_"), ident(r, "acc_"), money(r, 50, 5000), r.choice(CURRENCIES)
    return Intent("transfer_funds", f"Transfer {fmt(amt)} {cur} from account {src} to account {dst}.",
                  {"from_account": src, "to_account": dst, "amount": amt, "currency": cur})


def _get_current_weather(r: Random) -> Intent:
    city, imperial = r.choice(CITIES), r.random() < 0.5
    unit = "Fahrenheit" if imperial else "Celsius"
    return Intent("get_current_weather", f"What is the weather in {city} right now? Give me the temperature in {unit}.",
                  {"city": city, "units": "imperial" if imperial else "metric"})


def _get_forecast(r: Random) -> Intent:
    city, days = r.choice(CITIES), r.randint(2, 10)
    return Intent("get_forecast", f"Give me the {days}-day weather forecast for {city}, in metric units.",
                  {"city": city, "days": days, "units": "metric"})


def _send_email(r: Random) -> Intent:
    to, cc, subj = (r.sample([f"{u}@{DOMAINS[1]}" for u in USERS], 2), f"{r.choice(USERS)}@{DOMAINS[0]}",
                    r.choice(TITLES))
    note = r.choice(PHRASES)
    return Intent("send_email", f"Email {to[0]} and {to[1]}, copying {cc}, with the subject \"{subj}\" and the body "
                  f"\"{note}\"", {"to": to, "cc": [cc], "subject": subj, "body": note}, texts={"body": [note]})


def _search_email(r: Random) -> Intent:
    q, folder = r.choice(["invoice overdue", "offsite agenda", "security audit"]), r.choice(["inbox", "archive"])
    return Intent("search_email", f"Find unread emails in my {folder} folder about \"{q}\".",
                  {"query": q, "folder": folder, "unread_only": True})


def _post_message(r: Random) -> Intent:
    ch, note = r.choice(["#deploys", "#oncall", "#general", "#release-train"]), r.choice(PHRASES)
    return Intent("post_message", f"Post \"{note}\" in the {ch} channel.", {"channel": ch, "text": note},
                  texts={"text": [note]})


def _lookup_contact(r: Random) -> Intent:
    who = r.choice(PEOPLE)
    return Intent("lookup_contact", f"Look up {who} in the company address book.", {"name": who})


def _run_sql_query(r: Random) -> Intent:
    db, table, k = (r.choice(["analytics", "billing", "inventory"]), r.choice(["orders", "events", "customers"]),
                    r.choice([10, 100, 500]))
    q = f"SELECT count(*) FROM {table}"
    return Intent("run_sql_query", f"On the {db} database, run the query `{q}` with at most {k} rows.",
                  {"database": db, "query": q, "max_rows": k}, texts={"query": [q]})


def _http_request(r: Random) -> Intent:
    res, key = r.choice(["orders", "users", "flags"]), ident(r, "k_", 10)
    url = f"https://api.{r.choice(DOMAINS)}/v2/{res}"
    body = {"name": r.choice(["beta", "dark-mode", "checkout-v2"]), "enabled": r.random() < 0.5}
    return Intent("http_request", f"Send a POST to {url} with the header X-Api-Key set to {key} and the JSON body "
                  f"{{\"name\": \"{body['name']}\", \"enabled\": {str(body['enabled']).lower()}}}.",
                  {"method": "POST", "url": url, "headers": {"X-Api-Key": key}, "json_body": body})


def _get_directions(r: Random) -> Intent:
    o_, d_ = r.sample(["Central Station", "City Airport", "Harbour Bridge", "Old Town Square", "Tech Park"], 2)
    mode, avoid = r.choice(["driving", "bicycling"]), r.sample(["tolls", "highways", "ferries"], 2)
    return Intent("get_directions", f"Directions from {o_} to {d_} by {'car' if mode == 'driving' else 'bike'}, "
                  f"avoiding {avoid[0]} and {avoid[1]}.",
                  {"origin": o_, "destination": d_, "mode": mode, "avoid": avoid})


def _convert_currency(r: Random) -> Intent:
    amt, (src, dst) = money(r), r.sample(CURRENCIES, 2)
    return Intent("convert_currency", f"How much is {fmt(amt)} {src} in {dst}?",
                  {"amount": amt, "from_currency": src, "to_currency": dst})


def _get_stock_quote(r: Random) -> Intent:
    sym = r.choice(SYMBOLS)
    return Intent("get_stock_quote", f"What is the latest share price of ticker {sym}?", {"symbol": sym})


def _get_local_time(r: Random) -> Intent:
    tz = r.choice(TIMEZONES)
    return Intent("get_local_time", f"What time is it now in the {tz} time zone?", {"timezone": tz})


def _translate_text(r: Random) -> Intent:
    code, phrase = r.choice(sorted(LANGUAGES)), r.choice(PHRASES)
    return Intent("translate_text", f"Translate \"{phrase}\" into {LANGUAGES[code]}.",
                  {"text": phrase, "target_language": code})


def _get_order(r: Random) -> Intent:
    oid = f"ORD-{r.randint(1000, 99999)}"
    return Intent("get_order", f"Look up order {oid}.", {"order_id": oid})


def _ship_order(r: Random) -> Intent:
    oid, carrier = f"ORD-{r.randint(1000, 99999)}", r.choice(["ups", "fedex", "dhl"])
    city, country = r.choice(CITY_COUNTRY)
    addr = {"street": f"{r.randint(1, 250)} {r.choice(['Harbour Road', 'Elm Street', 'Station Square'])}",
            "city": city, "postal_code": str(r.randint(10000, 99999)), "country": country}
    return Intent("ship_order", f"Ship order {oid} with {carrier.upper()} by express to {addr['street']}, "
                  f"{addr['postal_code']} {addr['city']}, country code {addr['country']}.",
                  {"order_id": oid, "carrier": carrier, "address": addr, "express": True})


def _list_pods(r: Random) -> Intent:
    ns, app = r.choice(NAMESPACES), r.choice(DEPLOYMENTS)
    return Intent("list_pods", f"List the pods in the {ns} namespace with the label app={app}.",
                  {"namespace": ns, "label_selector": f"app={app}"})


def _get_pod_logs(r: Random) -> Intent:
    ns, pod, k = r.choice(NAMESPACES), f"{r.choice(DEPLOYMENTS)}-{ident(r, '', 5).lower()}", r.choice([50, 200, 500])
    return Intent("get_pod_logs", f"Show the last {k} log lines of pod {pod} in namespace {ns}.",
                  {"namespace": ns, "pod": pod, "tail_lines": k})


def _scale_deployment(r: Random) -> Intent:
    ns, dep, k = r.choice(NAMESPACES), r.choice(DEPLOYMENTS), r.randint(0, 12)
    return Intent("scale_deployment", f"Scale the {dep} deployment in {ns} to {k} replicas.",
                  {"namespace": ns, "deployment": dep, "replicas": k})


MAKERS: dict[str, Maker] = {name[1:]: f for name, f in list(globals().items())
                            if name.startswith("_") and name[1:] in TOOLS_BY_NAME and callable(f)}
assert set(MAKERS) == set(TOOLS_BY_NAME), set(TOOLS_BY_NAME) - set(MAKERS)

GROUPS: dict[str, str] = {
    "files": "workspace", "code_search": "workspace", "git": "workspace", "shell": "workspace",
    "calendar": "work", "tickets": "work", "comms": "work",
    "payments": "money", "finance": "money", "orders": "money",
    "kubernetes": "ops", "http": "ops", "data": "ops", "web": "ops",
    "weather": "world", "maps": "world", "time": "world", "translate": "world",
}
"""Domains that could stand in for one another. A negative case offers no tool of its request's group."""


def group_of(tool: str) -> str:
    return GROUPS[TOOLS_BY_NAME[tool].domain]
