"""The model endpoint: where it is, and whether it serves the model, checked before any trial."""

from __future__ import annotations

import functools
import os
import re
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentic_eval.errors import EndpointError, ModelNotServedError

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE_URL = "http://localhost:8000/v1"
PREFLIGHT_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    """Ends in /v1 (or whatever prefix the server uses), no trailing slash."""
    api_key: str

    def __repr__(self) -> str:  # never show the key
        return f"Endpoint(base_url={self.shown_url!r})"

    @property
    def shown_url(self) -> str:
        """The base URL as it may be written or printed: credentials in it redacted."""
        return redact_url(self.base_url)


SECRET_QUERY_WORDS = ("key", "token", "secret", "auth", "password", "sig", "credential")
"""A query parameter whose name contains one of these holds a credential."""
REDACTED = "REDACTED"


def auth_headers(api_key: str) -> dict[str, str]:
    """The headers that present `api_key` to an OpenAI-compatible server (Bearer authorization)."""
    return {"Authorization": f"Bearer {api_key}"}


def http_client(endpoint: Endpoint, **kwargs: Any) -> httpx.Client:
    """An httpx client for `endpoint`: its base URL and its key on every request. `kwargs` go to
    httpx.Client (limits, timeout, ...) and may override either."""
    import httpx

    return httpx.Client(**{"base_url": endpoint.base_url, "headers": auth_headers(endpoint.api_key), **kwargs})


def url_secrets(url: str) -> list[str]:
    """The credentials inside a URL: its user info (user:password@) and key-like query values."""
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        found += [userinfo, *(p for p in userinfo.split(":", 1) if len(p) >= 4)]
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if value and any(word in name.lower() for word in SECRET_QUERY_WORDS):
            found.append(value)
    return sorted({s for s in found if s}, key=len, reverse=True)


def redact_url(url: str) -> str:
    """`url` with its user info and key-like query values replaced by REDACTED."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:  # not parseable (url_secrets finds nothing either): hide whatever precedes an @
        return re.sub(r"//[^/@]*@", f"//{REDACTED}@", url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = parts.query
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(any(word in name.lower() for word in SECRET_QUERY_WORDS) for name, _ in pairs):
        query = urlencode([(name, REDACTED if any(w in name.lower() for w in SECRET_QUERY_WORDS) else value)
                           for name, value in pairs])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def scrub(text: str, secrets: list[str] | tuple[str, ...]) -> str:
    """`text` with every secret in it replaced by REDACTED (longest first)."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


MAX_URL_LENGTH = 2048
"""The longest base URL taken (browsers and servers refuse far shorter ones than a typo can make)."""
MAX_KEY_LENGTH = 16 * 1024
"""The longest API key taken (a JWT is a few kilobytes)."""


def url_problem(url: str) -> str | None:
    """Why `url` cannot be an endpoint's base URL, as the words that follow it in an error ("is not a
    URL (Invalid IPv6 URL)"), or None when it can. Parsed by urllib and by httpx, which sends the
    requests: whatever either refuses is refused here, before anything runs."""
    from urllib.parse import urlsplit

    if len(url) > MAX_URL_LENGTH:
        return f"is longer than {MAX_URL_LENGTH:,} characters"
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        return "is not UTF-8 text"
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        return "holds a space or a control character"
    if not url.startswith(("http://", "https://")):
        return f"must start with http:// or https:// (e.g. {DEFAULT_BASE_URL})"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"is not a URL ({exc})"
    if not parts.hostname:
        return f"has no host (e.g. {DEFAULT_BASE_URL})"
    if port == 0:
        return "has port 0, which no server listens on"
    if url == DEFAULT_BASE_URL:  # httpx takes it (tests/test_endpoint_faults.py): not imported for it
        return None
    import httpx

    try:
        httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:
        return f"is not a URL ({exc})"
    return None


def key_problem(key: str) -> str | None:
    """Why `key` cannot be sent as an API key (the words that follow it in an error; the key itself is
    never quoted), or None when it can: an HTTP header carries printable ASCII only."""
    if len(key) > MAX_KEY_LENGTH:
        return f"is longer than {MAX_KEY_LENGTH:,} characters"
    bad = next((i for i, ch in enumerate(key) if not " " <= ch <= "~"), None)
    if bad is not None:
        return (f"has a character an HTTP header cannot carry (at position {bad + 1}; a key is printable "
                "ASCII)")
    return None


def resolve_endpoint(base_url: str | None = None, api_key: str | None = None) -> Endpoint:
    """Flags first, then OPENAI_BASE_URL / OPENAI_API_KEY, then http://localhost:8000/v1. A URL or a
    key that cannot be used is an EndpointError of one line, wherever it came from."""
    from_env = not base_url and bool(os.environ.get("OPENAI_BASE_URL"))
    url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    if (problem := url_problem(url)) is not None:
        shown = redact_url(url)
        shown = shown if len(shown) <= 80 else shown[:70] + "..."
        raise EndpointError(f"{'OPENAI_BASE_URL' if from_env else 'base URL'} {shown!r} {problem}"
                            + ("; fix it or pass --base-url" if from_env else ""))
    key = api_key or os.environ.get("OPENAI_API_KEY") or "sk-no-key"
    if (problem := key_problem(key)) is not None:
        source = "the API key given" if api_key else "OPENAI_API_KEY"
        raise EndpointError(f"{source} {problem}")
    return Endpoint(base_url=url.rstrip("/"), api_key=key)


def list_models(endpoint: Endpoint, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> list[str] | None:
    """The model ids the endpoint lists, or None if it has no /models route. Raises EndpointError if down."""
    import httpx

    url = f"{endpoint.base_url}/models"
    shown = f"{endpoint.shown_url}/models"
    try:
        resp = httpx.get(url, headers=auth_headers(endpoint.api_key), timeout=timeout_s)
    except httpx.HTTPError as exc:
        if (hint := plain_http_hint(endpoint, exc, timeout_s)) is not None:
            raise EndpointError(scrub(hint, url_secrets(endpoint.base_url))) from None
        raise EndpointError(
            scrub(f"cannot reach {endpoint.shown_url} ({type(exc).__name__}: {exc}); start the server or pass "
                  "--base-url", url_secrets(endpoint.base_url))
        ) from None
    if resp.status_code == 404:
        if (hint := missing_prefix_hint(endpoint, timeout_s)) is not None:
            raise EndpointError(scrub(hint, url_secrets(endpoint.base_url)))
        return None
    if resp.status_code in (401, 403):
        raise EndpointError(f"{shown} answered {resp.status_code}: pass the right key with --api-key-file, "
                            "OPENAI_API_KEY or --api-key")
    if resp.status_code >= 400:
        raise EndpointError(f"{shown} answered HTTP {resp.status_code}: {resp.text[:200]!r}")
    try:
        data = resp.json()
        return [str(m["id"]) for m in data.get("data", [])]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise EndpointError(f"{shown} did not answer a model list (got {resp.text[:120]!r}); is this an "
                            "OpenAI-compatible endpoint?") from None


def _answers_model_list(url: str, api_key: str, timeout_s: float) -> bool:
    """Whether GET `url` answers an OpenAI model list (any status other than that, or no answer: False)."""
    import httpx

    try:
        resp = httpx.get(url, headers=auth_headers(api_key), timeout=timeout_s)
        return resp.status_code == 200 and isinstance(resp.json().get("data"), list)
    except (httpx.HTTPError, ValueError, AttributeError):
        return False


def missing_prefix_hint(endpoint: Endpoint, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> str | None:
    """The most common typo, a base URL without `/v1`: every request would be a 404. When `.../models`
    is 404 but `.../v1/models` answers, the one line that says which --base-url to use; else None."""
    if endpoint.base_url.endswith("/v1"):
        return None
    fixed = f"{endpoint.base_url}/v1"
    if not _answers_model_list(f"{fixed}/models", endpoint.api_key, timeout_s):
        return None
    return (f"{endpoint.base_url}/models is 404 but {fixed}/models answers: use --base-url {fixed} "
            "(OpenAI-compatible servers serve under /v1)")


def plain_http_hint(endpoint: Endpoint, exc: Exception, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> str | None:
    """`https://` against a plain-HTTP server fails in the TLS handshake: say so in one line, naming
    the http:// URL when it answers. None when the failure was not a TLS one."""
    if not endpoint.base_url.startswith("https://"):
        return None
    text = f"{exc} {exc.__cause__ or ''} {exc.__context__ or ''}".lower()
    if not any(word in text for word in ("ssl", "tls", "wrong_version_number", "record layer", "handshake")):
        return None
    plain = "http://" + endpoint.base_url.removeprefix("https://")
    if _answers_model_list(f"{plain}/models", endpoint.api_key, timeout_s):
        return f"{endpoint.base_url} failed the TLS handshake but {plain} answers: use --base-url {plain}"
    return (f"{endpoint.base_url} failed the TLS handshake ({type(exc).__name__}: {exc}): is this an http:// "
            f"server? try --base-url {plain}")


def preflight(endpoint: Endpoint, model: str) -> list[str] | None:
    """Fail early, in one line, if the endpoint is down or does not serve `model`; else the models it lists (None
    without a /models route: the first request will tell)."""
    models = list_models(endpoint)
    if models is not None and model not in models:
        raise ModelNotServedError(not_served(endpoint, model, models))
    return models


LISTED_MODELS = 10
"""At most this many of the endpoint's models are named in a "not served" error (an Ollama lists hundreds)."""


def not_served(endpoint: Endpoint, model: str, models: list[str]) -> str:
    """The one line for a model the endpoint does not list: the nearest listed name first (a typo, or a
    case or tag the server spells otherwise), then what it lists (the first LISTED_MODELS of them)."""
    import difflib

    close = difflib.get_close_matches(model, models, n=1, cutoff=0.6) or [
        m for m in models if m.lower() == model.lower() or m.split(":")[0] == model]
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    listed = ", ".join(models[:LISTED_MODELS]) if models else "none"
    more = f" and {len(models) - LISTED_MODELS} more" if len(models) > LISTED_MODELS else ""
    return f"model {model!r} is not served by {endpoint.shown_url}{hint}; it lists: {listed}{more}"


def not_an_event_stream(content_type: str) -> str | None:
    """Why a reply to `stream: true` cannot be read as a stream (its content type), or None if it can."""
    if "text/event-stream" in content_type:
        return None
    return f"the reply is not an event stream ({content_type or 'no content-type'}): the server ignored stream: true"


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every HTTP client the harness makes. Loading the CA bundle
    costs ~25 ms of CPU per client, and a campaign makes two clients per trial."""
    import certifi

    # Like httpx's own default: SSL_CERT_FILE / SSL_CERT_DIR when set, else certifi's bundle.
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    return ssl.create_default_context(cafile=cafile or (None if capath else certifi.where()), capath=capath)
