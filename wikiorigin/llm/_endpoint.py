"""Where an endpoint is: :func:`endpoint_key`, its address as one key however it is typed
(every loopback name as ``localhost``, the default port left out), and the TLS contexts the
backend's HTTP client takes (:func:`_certificates`, made once; :func:`_no_certificates`). Moved
out of ``openai_backend.py``; ``wikiorigin.llm.openai_backend`` still exports these names."""

from __future__ import annotations

import functools
import ipaddress
import posixpath
import re
from urllib.parse import urlsplit

__all__ = ["endpoint_key", "_certificates", "_no_certificates"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


@functools.lru_cache(maxsize=4)
def _certificates(cert_file: str | None, cert_dir: str | None):
    """The TLS context the SDK's HTTP client makes by default (the system's certificates, or
    those ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name: the arguments, so that another value makes
    another), made once: loading the certificates takes 20 ms, a tenth of a small build."""
    import importlib

    import openai

    http = importlib.import_module(openai.DefaultAsyncHttpxClient.__mro__[1].__module__.split(".")[0])  # httpx(2)
    make = getattr(http, "create_ssl_context", None)
    return make() if make is not None else True  # True: the client makes its own


@functools.cache
def _no_certificates():
    """A TLS context that trusts no certificate (it verifies, and so refuses every server)."""
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def endpoint_key(url: str) -> str:
    """``url`` as one server is one key: the scheme and host in lower case, the default port
    (80, 443) left out, no trailing slash, no user name or password, and every loopback name
    (``localhost``, ``127.x.x.x``, ``::1``) as ``localhost``."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:  # not a URL the SDK could use either: kept as typed
        return url
    scheme, host = parts.scheme.lower(), (parts.hostname or "").rstrip(".")
    if _loopback(host):
        host = "localhost"
    elif ":" in host:
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        host += f":{port}"
    path = posixpath.normpath("/" + parts.path).lstrip("/")  # /./v1, //v1/, /v1/ -> v1
    path = f"/{path}" if path not in ("", ".") else ""
    return f"{scheme}://{host}{path}" + (f"?{parts.query}" if parts.query else "")


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return _short_ipv4(host)
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def _short_ipv4(host: str) -> bool:
    """``127.1`` and other short forms the resolver takes for an IPv4 loopback address."""
    import socket

    if not re.fullmatch(r"[0-9.]+|0x[0-9a-f.x]+", host):
        return False
    try:
        return ipaddress.ip_address(socket.inet_aton(host)).is_loopback
    except (OSError, ValueError):
        return False
