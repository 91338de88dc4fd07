"""HTTP hardening shared by every route: security headers, CORS, body limits, rate limits.

`install(app, settings, ...)` adds the middleware in the right order; routers call
`rate_limit(request, ...)` for the limits that need to know who is calling.
"""

import ipaddress
import json
import logging
import math
import time
from collections.abc import Mapping

from fastapi import FastAPI, HTTPException, Request, status
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from limits import RateLimitItem, parse
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter
from sqlalchemy.exc import DataError
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from quanta.core.config import Settings

log = logging.getLogger(__name__)

# The built UI loads only its own scripts and styles (Vite emits no inline script). Inline
# style attributes are allowed because the chart library sets them; nothing may frame us.
SPA_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)
# The /docs and /redoc pages (quanta.core.apidocs) load Swagger UI / ReDoc from the app
# itself; ReDoc styles inline and runs a worker from a blob.
DOCS_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; "
    "connect-src 'self'; object-src 'none'; frame-ancestors 'none'"
)
DOCS_PATHS = ("/docs", "/redoc")
API_PATH = "/api/"
HSTS_MAX_AGE_SECONDS = 180 * 24 * 3600
MAX_REASON_CHARS = 200

_BASE_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
)


class SecurityHeaders:
    """Adds the security headers to every response (the app's own values win)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        csp = DOCS_CSP if path.startswith(DOCS_PATHS) else SPA_CSP
        extra = [*_BASE_HEADERS, (b"content-security-policy", csp.encode())]
        if path.startswith(API_PATH):
            # Answers carry token secrets, examples and user data: no cache may keep them.
            extra.append((b"cache-control", b"no-store"))
        if scope.get("scheme") == "https":
            extra.append((b"strict-transport-security", f"max-age={HSTS_MAX_AGE_SECONDS}".encode()))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in extra if name not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


TrustedProxies = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
FORWARDED_SCHEMES = ("http", "https")


def trusted_networks(settings: Settings) -> TrustedProxies:
    """QUANTA_TRUSTED_PROXIES as networks (the settings validated them)."""
    return tuple(ipaddress.ip_network(proxy, strict=False) for proxy in settings.trusted_proxies)


def _is_trusted(address: str, trusted: TrustedProxies) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:  # "testclient", a unix socket's path: not a proxy we know
        return False
    return any(ip in network for network in trusted)


def forwarded_client(
    peer: str, forwarded_for: str | None, forwarded_proto: str | None, trusted: TrustedProxies
) -> tuple[str, str | None]:
    """The client's address and scheme: the one place X-Forwarded-* is interpreted.

    Only a trusted proxy's headers count; anyone else could write any address in them and
    get a fresh rate-limit bucket per request. X-Forwarded-For is read from the right (each
    proxy appends the address it saw) and the first address no trusted proxy owns is the
    client. Returns (address, scheme), the scheme None when the connection's own applies.

    >>> nets = (ipaddress.ip_network("10.0.0.0/8"),)
    >>> forwarded_client("10.0.0.2", "6.6.6.6, 203.0.113.7", "https", nets)
    ('203.0.113.7', 'https')
    >>> forwarded_client("192.0.2.1", "203.0.113.7", "https", nets)
    ('192.0.2.1', None)
    """
    if not _is_trusted(peer, trusted):
        return peer, None
    client = peer
    for hop in reversed([h.strip() for h in (forwarded_for or "").split(",") if h.strip()]):
        client = hop
        if not _is_trusted(hop, trusted):
            break
    proto = (forwarded_proto or "").split(",")[-1].strip().lower()
    return client, proto if proto in FORWARDED_SCHEMES else None


class ProxyHeaders:
    """Puts the client's address and scheme from a trusted proxy's X-Forwarded-For and
    X-Forwarded-Proto in the request (uvicorn's own proxy_headers is switched off: it trusts
    127.0.0.1 by default, which lets any local client pick its address)."""

    def __init__(self, app: ASGIApp, *, trusted: TrustedProxies) -> None:
        self.app = app
        self.trusted = trusted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if scope["type"] in ("http", "websocket") and client and self.trusted:
            headers = _joined_headers(scope, (b"x-forwarded-for", b"x-forwarded-proto"))
            address, proto = forwarded_client(
                client[0],
                headers.get(b"x-forwarded-for"),
                headers.get(b"x-forwarded-proto"),
                self.trusted,
            )
            scope = {**scope, "client": (address, client[1])}
            if proto is not None:
                scope["scheme"] = proto if scope["type"] == "http" else proto.replace("http", "ws")
        await self.app(scope, receive, send)


def _joined_headers(scope: Scope, names: tuple[bytes, ...]) -> dict[bytes, str]:
    """The named headers, repeated ones joined with commas (as HTTP says they combine)."""
    found: dict[bytes, list[str]] = {}
    for name, value in scope.get("headers", []):
        if name in names:
            found.setdefault(name, []).append(value.decode("latin-1"))
    return {name: ", ".join(values) for name, values in found.items()}


def cookies_secure(request: Request, settings: Settings) -> bool:
    """Whether to mark cookies Secure: QUANTA_COOKIE_SECURE, or on auto the request's scheme
    (https directly, or X-Forwarded-Proto: https from a trusted proxy)."""
    if isinstance(settings.cookie_secure, bool):
        return settings.cookie_secure
    return request.url.scheme == "https"


class BodyTooLarge(HTTPException):
    """The request body passed its limit while it was being read."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            status.HTTP_413_CONTENT_TOO_LARGE,
            f"Request body exceeds {limit} bytes: send less per request.",
        )


class BodySizeLimit:
    """Refuses bodies over the limit with 413: at once when Content-Length says so, else
    as soon as the streamed body passes it (so a chunked upload cannot exhaust memory)."""

    def __init__(self, app: ASGIApp, *, default: int, by_path: Mapping[str, int]) -> None:
        self.app = app
        self.default = default
        self.by_path = dict(by_path)

    def limit_for(self, path: str) -> int:
        """The limit of a path: a configured prefix's, else the default."""
        for prefix, limit in self.by_path.items():
            if path == prefix or path.startswith(prefix + "/"):
                return limit
        return self.default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _send_json(send, BodyTooLarge(limit))
            return
        received = 0
        exceeded = False
        started = False

        async def counting_receive() -> Message:
            nonlocal received, exceeded
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    exceeded = True
                    raise BodyTooLarge(limit)
            return message

        async def guarded_send(message: Message) -> None:
            # Whatever the app made of the exception (FastAPI may turn a failed body read
            # into a 400), the client is told the truth: the body was too large.
            nonlocal started
            if exceeded:
                if message["type"] == "http.response.start" and not started:
                    started = True
                    await _send_json(send, BodyTooLarge(limit))
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except BodyTooLarge as exc:
            if started:
                raise
            await _send_json(send, exc)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _send_json(send: Send, exc: HTTPException) -> None:
    body = json.dumps({"detail": exc.detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": exc.status_code,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RateLimiter:
    """Fixed-window limits per name and key, in Redis when configured (shared by every API
    process), else in this process's memory. Uses the `limits` library."""

    def __init__(self, settings: Settings) -> None:
        self._storage = storage_from_string(settings.redis_url or "memory://")
        self._limiter = FixedWindowRateLimiter(self._storage)
        self._items: dict[str, RateLimitItem] = {
            "login": parse(settings.login_rate_limit),
            "login_address": parse(settings.login_address_rate_limit),
            "ingest": parse(settings.ingest_rate_limit),
        }

    def hit(self, name: str, key: str) -> float | None:
        """Count one request; None when allowed, else the seconds until the window resets."""
        item = self._items[name]
        try:
            if self._limiter.hit(item, name, key):
                return None
            reset_at = self._limiter.get_window_stats(item, name, key).reset_time
        except Exception:
            # A limiter outage must not take the API down with it: let the request through.
            log.warning("rate limiter unavailable; %s request allowed", name, exc_info=True)
            return None
        return max(1.0, reset_at - time.time())

    def reset(self) -> None:
        """Forget every count (tests, and after changing limits)."""
        self._storage.reset()


def rate_limit(request: Request, name: str, key: str) -> None:
    """Count a request against the named limit for `key`; 429 with Retry-After when over."""
    limiter: RateLimiter = request.app.state.rate_limiter
    wait = limiter.hit(name, key)
    if wait is not None:
        seconds = math.ceil(wait)
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            f"Too many {name} requests: try again in {seconds} s.",
            headers={"Retry-After": str(seconds)},
        )


def client_address(request: Request) -> str:
    """The client's address: the peer's, or what a trusted proxy forwarded (ProxyHeaders)."""
    return request.client.host if request.client else "unknown"


async def value_out_of_range(request: Request, exc: Exception) -> JSONResponse:
    """422 for a request value the store cannot hold (an id beyond 64 bits, a string longer
    than its column on PostgreSQL): bad input, not a server fault."""
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:MAX_REASON_CHARS]
    # Only the type is logged: the reason may quote the value (a search string can be SQL) and
    # a DataError's full text holds the statement and its parameters.
    log.info(
        "value out of range on %s %s: %s", request.method, request.url.path, type(exc).__name__
    )
    return JSONResponse(
        {"detail": f"A value in the request is out of range for the store: {reason}."},
        status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
    )


async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
    """422 listing what is wrong, like FastAPI's own handler, but with every echoed input made
    JSON-safe: a body holding NaN or Infinity (Python's JSON parser accepts them) must get
    its 422, not a 500 from encoding the echo."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    return JSONResponse(
        {"detail": json_safe(jsonable_encoder(errors))},
        status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
    )


def json_safe(value: object) -> object:
    """``value`` with every non-finite float replaced by its name ('nan', 'inf', '-inf')."""
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def install(app: FastAPI, settings: Settings, *, body_limits: Mapping[str, int]) -> None:
    """Add the hardening middleware: security headers outermost, so every answer has them
    (413s included); CORS only for configured origins (none by default: closed)."""
    app.state.rate_limiter = RateLimiter(settings)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(OverflowError, value_out_of_range)
    app.add_exception_handler(DataError, value_out_of_range)
    app.add_middleware(BodySizeLimit, default=settings.http_max_body_bytes, by_path=body_limits)
    if settings.cors_allow_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_allow_origins,
            allow_credentials=True,
            allow_methods=["GET", "POST", "PATCH", "PUT", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Content-Encoding", "X-CSRF-Token"],
        )
    app.add_middleware(SecurityHeaders)
    # Outermost: every layer below (HSTS, cookies, rate limits) sees the real client.
    app.add_middleware(ProxyHeaders, trusted=trusted_networks(settings))
