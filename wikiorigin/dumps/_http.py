"""The mirror's side of a download: :class:`Client` (HTTP GETs with a User-Agent naming the
tool and a contact, range requests, an HTML page refused), :class:`RemoteFile` (a file to fetch)
and :class:`FetchError`. Moved out of ``fetch.py``; ``wikiorigin.dumps.fetch`` still exports
these names."""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..errors import ParameterError, WikioriginError
from ..retry import retry_after

__all__ = ["Client", "FetchError", "RemoteFile"]


class FetchError(WikioriginError):
    """A download that failed: unreachable, missing, not a file, or a wrong checksum.

    ``retry`` says whether trying again may help (connection trouble, 429, 5xx);
    ``retry_after`` is the mirror's ``Retry-After`` in seconds, when it sent one."""

    def __init__(self, message: str, retry: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.retry, self.retry_after = retry, retry_after


@dataclass(slots=True)
class RemoteFile:
    """One file to fetch: its ``url``, where it goes (``dest``) and, when the mirror lists
    them, its ``size`` and ``sha1`` / ``md5`` (checked after the download)."""

    url: str
    dest: Path
    size: int | None = None
    sha1: str | None = None
    md5: str | None = None


@dataclass(slots=True)
class Client:
    """HTTP GETs with a User-Agent that names the tool and a contact, retries and resume.
    A wait between tries is at most ``max_wait`` seconds; a mirror whose ``Retry-After`` asks
    for more ends that file's download at once."""

    contact: str
    user_agent: str | None = None
    timeout: float = 60.0
    retries: int = 5
    backoff: float = 1.0
    max_wait: float = 300.0

    def __post_init__(self):
        if not self.user_agent:
            if not self.contact:
                raise ParameterError(
                    "contact",
                    "downloads need a contact for the User-Agent (Wikimedia blocks generic "
                    "ones): give {contact} (an email or URL) or set WIKIORIGIN_CONTACT",
                )
            self.user_agent = f"wikiorigin/{__version__} (dump downloads for research; contact: {self.contact})"

    def open(self, url: str, start: int = 0):
        """An open HTTP response for ``url``, from byte ``start`` on (a range request). Raises
        :class:`FetchError` (with ``retry`` set for 429, 5xx and connection errors) on an HTTP
        error, no connection, or an HTML page where a file was expected."""
        headers = {"User-Agent": self.user_agent or ""}  # set by __post_init__
        if start:
            headers["Range"] = f"bytes={start}-"
        request = urllib.request.Request(url, headers=headers)
        try:
            response = urllib.request.urlopen(request, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            retry = exc.code == 429 or exc.code >= 500
            raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}", retry, retry_after(exc.headers)) from None
        except (urllib.error.URLError, OSError) as exc:
            raise FetchError(f"{url}: cannot connect: {getattr(exc, 'reason', exc)}", True) from None
        if response.headers.get_content_type() == "text/html" and not url.endswith(("/", ".html")):
            response.close()
            raise FetchError(f"{url}: the mirror sent an HTML page, not the file")
        return response

    def text(self, url: str) -> str:
        """The body of ``url`` as text (UTF-8); errors as :meth:`open`."""
        with self.open(url) as response:
            return response.read().decode("utf-8", "replace")
