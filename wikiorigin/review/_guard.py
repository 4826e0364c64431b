"""The review server's guard: the security headers of every response, the ``Host`` check (no
DNS rebinding), the access token and its cookie, and the checks on every request that changes
state (a same-origin ``POST`` of JSON with the server's secret in ``X-Review-Csrf``): the rules
the :mod:`wikiorigin.review.app` docstring states. Moved out of ``app.py``;
``wikiorigin.review.app`` still exports :func:`is_loopback`."""

from __future__ import annotations

import hmac
import ipaddress

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["is_loopback", "_COOKIE", "_HEADERS", "_guard", "_json_error"]

_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_COOKIE = "wikiorigin_review_{port}"  # one per port: two servers on one host keep their own tokens


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _json_error(status_code: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status_code, headers=_HEADERS)


def _host_name(header: str) -> str:
    """The name in a ``Host`` header, without the port (``[::1]:8765`` -> ``::1``)."""
    if header.startswith("["):
        return header[1 : header.find("]")]
    return header.split(":")[0]


def _guard(app: ASGIApp, csrf: str, token: str | None, hosts: set[str] | None, cookie: str) -> ASGIApp:
    """ASGI middleware: the ``Host`` (when ``hosts`` are given), the access token (when
    required), the checks on state-changing requests, and the security headers on every
    response."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        request = Request(scope)
        if hosts is not None and _host_name(request.headers.get("host", "")) not in hosts:
            return await PlainTextResponse(
                "400: this review answers loopback names only (Host)", 400, headers=_HEADERS
            )(scope, receive, send)
        set_cookie = False
        if token is not None:
            given = request.query_params.get("token") or request.cookies.get(cookie) or ""
            if not hmac.compare_digest(given.encode(), token.encode()):
                return await PlainTextResponse(
                    "403: this review needs the token printed when the server started (open the URL it printed)",
                    403,
                    headers=_HEADERS,
                )(scope, receive, send)
            set_cookie = "token" in request.query_params
        if request.method not in ("GET", "HEAD"):
            refusal = _refuse_write(request, csrf)
            if refusal:
                return await _json_error(403, refusal)(scope, receive, send)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.decode().lower() not in {h.lower() for h in _HEADERS}
                ]
                headers += [(k.encode(), v.encode()) for k, v in _HEADERS.items()]
                if set_cookie:
                    headers.append((b"set-cookie", f"{cookie}={token}; Path=/; HttpOnly; SameSite=Strict".encode()))
                message = {**message, "headers": headers}
            await send(message)

        return await app(scope, receive, send_with_headers)

    return guarded


def _refuse_write(request: Request, csrf: str) -> str | None:
    """Why a state-changing request is refused, or None: it must be a same-origin POST of JSON
    with the server's secret in ``X-Review-Csrf``."""
    if request.method != "POST":
        return "only POST changes state"
    if not hmac.compare_digest(request.headers.get("x-review-csrf", "").encode(), csrf.encode()):
        return "missing or wrong X-Review-Csrf header"
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
        return f"cross-origin request from {origin}"
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return "cross-site request"
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return "expected application/json"
    return None
