"""The review web app (Starlette, served by uvicorn): one page, plain HTML and JavaScript, and a
small JSON API over the dataset's items and the decisions database.

Safe by default. It listens on loopback unless told otherwise, and then accepts only requests
whose ``Host`` is a loopback name (no DNS rebinding). Bound to another address, every request
needs the access token printed at start (``?token=`` in the URL once; a ``SameSite=Strict``,
``HttpOnly`` cookie named after the port afterwards). Every request that changes state is a ``POST`` of JSON that
carries the server's secret in the ``X-Review-Csrf`` header (the page reads it from its own
HTML, which another site cannot), and is refused when its ``Origin`` is another site's or
``Sec-Fetch-Site`` says cross-site. The page shows every text of the dataset as text (never as
HTML) and the Content-Security-Policy allows no inline script.

Routes: ``GET /`` the page, ``GET /static/...`` its script and style, ``GET /api/state`` the
items' states and progress (``?who=`` another annotator's), ``GET /api/item/{index}`` one
item's view and decisions, ``POST /api/decide`` and ``POST /api/undo``.

A decision is kept for ever, so what it may hold is capped (a note :data:`NOTE_CHARS`, edits
:data:`EDITS_CHARS`; a request larger than any decision is refused unread, 413: by its
``Content-Length``, or a chunked one once its body passes the limit, the connection closed
without reading the rest; malformed chunked encoding is uvicorn's 400). A decision the
database cannot take (a full disk) is a JSON error, 507, saying why: nothing of it is written
and everything before it is kept.
"""

from __future__ import annotations

import json
import secrets
import socket
from collections.abc import Awaitable, Callable
from importlib.resources import files as resource_files
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from ..errors import ParameterError, WikioriginError
from ..log import logger
from ._guard import _COOKIE, _HEADERS, _guard, _json_error, is_loopback
from .export import apply_edits, check_edits
from .items import EDITABLE, find_article, footnote_numbers, load_articles, load_dataset, plain, view
from .store import DECISIONS, REASONS, NotSaved, ReviewStore, edits_key, status

__all__ = ["Review", "make_app", "is_loopback", "bind", "serve", "NOTE_CHARS", "EDITS_CHARS"]

NOTE_CHARS = 2000
"""The longest note a decision keeps, in characters (the page's box stops there too)."""
EDITS_CHARS = 50_000
"""The most an accept's edits may hold, in characters of their JSON (every field edited
together: a long preference answer rewritten fits, a pasted file does not): decisions are kept
for ever, so a larger edit is refused, not stored."""
_BODY_BYTES = 6 * (EDITS_CHARS + NOTE_CHARS) + 4096  # larger than any decision, even as \u-escaped JSON: refused unread

GROUP_BY = {"mcq": "type", "freeform": "language", "preferences": "category"}
"""The field each dataset kind's progress is counted by."""


class Review:
    """A review in progress: the dataset (re-read when its file changes), the articles, the
    decisions database and this server's annotator."""

    def __init__(self, dataset, db, annotator: str, articles=None):
        if not annotator or len(annotator) > 64 or not annotator.isprintable():
            raise ParameterError("annotator", "{annotator}: give a name of 1 to 64 printable characters", annotator)
        self.path = Path(dataset)
        self._stamp = self._file_stamp() if self.path.exists() else None
        self.dataset = load_dataset(self.path)
        self.articles = load_articles(articles) if articles else None
        self.store = ReviewStore(
            db, self.path.name, self.dataset.kind, list(self.dataset.by_key), self.dataset.keyed_by
        )
        self.annotator = annotator

    def _file_stamp(self):
        st = self.path.stat()
        return st.st_mtime_ns, st.st_size

    def refresh(self) -> None:
        """Read the dataset again if its file changed since (decisions on changed items turn stale)."""
        if not self.path.exists():
            return
        stamp = self._file_stamp()  # taken before reading: a change while it is read shows next time
        if stamp != self._stamp:
            self.dataset = load_dataset(self.path)
            self._stamp = stamp

    def state(self, who: str | None = None) -> dict:
        """Every item's state for ``who`` (default: this annotator), progress by group, and the
        item to start at (this annotator's first item never decided, else first pending)."""
        who = who or self.annotator
        current = self.store.current()
        deciders: dict[str, list[str]] = {}
        for key, annotator in sorted(current):
            deciders.setdefault(key, []).append(annotator)
        group = GROUP_BY[self.dataset.kind]
        rows: list[dict] = []
        by_group: dict[str, list[int]] = {}
        for item in self.dataset.items:
            st = status(current.get((item.key, who)), item.sha1)
            name = str(item.row.get(group) or "(none)")
            done = by_group.setdefault(name, [0, 0])
            done[0] += st in ("accepted", "rejected")
            done[1] += 1
            others = [a for a in deciders.get(item.key, []) if a != who]
            rows.append({"index": item.index, "group": name, "status": st, "others": others})
        mine = {k for (k, a) in current if a == self.annotator}
        start = next(
            (i.index for i in self.dataset.items if i.key not in mine),
            next((r["index"] for r in rows if r["status"] in ("pending", "stale")), 0),
        )
        return {
            "kind": self.dataset.kind,
            "dataset": self.path.name,
            "annotator": self.annotator,
            "who": who,
            "annotators": sorted({a for _, a in current} | {self.annotator}),
            "items": rows,
            "reviewed": sum(r["status"] in ("accepted", "rejected") for r in rows),
            "total": len(rows),
            "by_group": by_group,
            "group_by": group,
            "start": start if who == self.annotator else 0,
            "reasons": list(REASONS),
            "editable": list(EDITABLE[self.dataset.kind]),
            "types": self.dataset.classes.get("types", []),
            "regions": self.dataset.classes.get("regions", []),
            "several_regions": bool(self.dataset.classes.get("several_regions")),
        }

    def item(self, index: int) -> dict:
        """One item's view (:func:`~wikiorigin.review.items.view`) with every annotator's
        decision in force on it (``stale`` when made on other content); with this annotator's
        edits applied (``row``; ``original``, ``edited``, the fields changed, and ``edits``
        beside it: the page resends them when the annotator accepts again)."""
        if not 0 <= index < len(self.dataset.items):
            raise KeyError(index)
        item = self.dataset.items[index]
        current = self.store.current(item.key)
        decisions = [{**d.as_dict(), "stale": d.content_sha1 != item.sha1} for _, d in sorted(current.items())]
        mine = current.get((item.key, self.annotator))
        if mine is not None and mine.edits and status(mine, item.sha1) == "accepted":
            edited, changed = apply_edits(self.dataset.kind, item.row, mine.edits)
            shown = view(self.dataset, item, self.articles, row=edited)  # e.g. the edited footnotes marked
            shown.update(original=plain(item.row), edited=changed, edits=mine.edits)
        else:
            shown = view(self.dataset, item, self.articles)
        return {**shown, "decisions": decisions}

    def footnotes(self, row: dict) -> set[int] | None:
        """The footnote numbers of the article ``row`` was written from, or None when it is not
        known (no ``--articles``, or none matches)."""
        article = find_article(row, self.articles) if self.articles else None
        return None if article is None else footnote_numbers(article)

    def decide(self, body: dict) -> dict:
        """Record this annotator's decision on the item ``body["index"]``, made on the content
        ``body["sha1"]`` (refused when the item has changed since the page showed it); an edit
        of its footnotes (``ref``) is checked against its article's when the article is known."""
        index = body.get("index")
        if not isinstance(index, int) or not 0 <= index < len(self.dataset.items):
            raise ValueError(f"no item {index!r}")
        item = self.dataset.items[index]
        if body.get("sha1") != item.sha1:
            raise ValueError("the item changed since the page showed it: reload")
        decision, reason, note = body.get("decision"), body.get("reason") or None, body.get("note") or None
        if reason is not None and reason not in REASONS:
            raise ValueError(f"reason {reason!r}: expected one of {', '.join(REASONS)}")
        edits = body.get("edits") or None
        if edits is not None:
            if decision != "accept" or not isinstance(edits, dict):
                raise ValueError("edits come with an accept, as an object")
            size = len(edits_key(edits))
            if size > EDITS_CHARS:
                raise ValueError(
                    f"the edits hold {size:,} characters, more than the {EDITS_CHARS:,} an item's "
                    "edits may: shorten them"
                )
            footnotes = self.footnotes(item.row) if "ref" in edits else None
            edits = check_edits(self.dataset.kind, edits, classes=self.dataset.classes or None, footnotes=footnotes)
            apply_edits(self.dataset.kind, item.row, edits)  # e.g. an answer beyond the options
        if note is not None and (not isinstance(note, str) or len(note) > NOTE_CHARS):
            raise ValueError(f"the note must be a text of at most {NOTE_CHARS} characters")
        if not isinstance(decision, str):  # said as the store says any decision it does not take
            raise ValueError(f"decision {decision!r}: expected one of {', '.join(DECISIONS)}")
        d = self.store.add(item.key, item.sha1, self.annotator, decision, reason, note, edits)
        return {"saved": d.as_dict()}

    def undo(self) -> dict:
        """Take back this annotator's latest decision; says which item it was on."""
        undone = self.store.undo(self.annotator)
        if undone is None:
            return {"undone": None}
        item = self.dataset.by_key.get(undone.item)
        return {"undone": undone.as_dict(), "index": item.index if item else None}


def _too_large() -> JSONResponse:
    """413, the connection closed after it: the rest of the body is not read."""
    response = _json_error(
        413,
        f"the request is larger than any decision can be (edits hold at most "
        f"{EDITS_CHARS:,} characters, a note {NOTE_CHARS:,}): nothing was saved",
    )
    response.headers["Connection"] = "close"
    return response


async def _body(request: Request) -> bytes | None:
    """The request's body, read as it comes (a chunked one has no length to refuse it by):
    None once it passes :data:`_BODY_BYTES`, the rest left unread."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > _BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def make_app(review: Review, token: str | None = None, allowed_hosts=None, port: int = 0) -> ASGIApp:
    """The Starlette app of a review. ``token``: required on every request when given (its
    cookie is named after ``port``, the port served on); ``allowed_hosts``: the ``Host`` names
    accepted (None: any)."""
    csrf = secrets.token_urlsafe(24)
    static = resource_files("wikiorigin.review") / "static"
    page = (static / "index.html").read_text(encoding="utf-8").replace("{{CSRF}}", csrf)

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers=_HEADERS)

    async def state(request: Request) -> Response:
        return JSONResponse(review.state(request.query_params.get("who")))

    async def item(request: Request) -> Response:
        try:
            return JSONResponse(review.item(int(request.path_params["index"])))
        except (KeyError, ValueError):
            return _json_error(404, "no such item")

    async def decide(request: Request) -> Response:
        return await _decide(review, request)

    async def undo(request: Request) -> Response:
        try:
            return JSONResponse(review.undo())
        except NotSaved as exc:
            return _json_error(507, str(exc))

    routes = [
        Route("/", index),
        Route("/api/state", _fresh(review, state)),
        Route("/api/item/{index:int}", _fresh(review, item)),
        Route("/api/decide", _fresh(review, decide), methods=["POST"]),
        Route("/api/undo", undo, methods=["POST"]),
        Route("/favicon.ico", _no_icon),
        Mount("/static", app=StaticFiles(directory=str(static)), name="static"),
    ]
    app = Starlette(routes=routes)
    hosts = {h.strip("[]") for h in allowed_hosts} if allowed_hosts else None
    return _guard(app, csrf, token, hosts, _COOKIE.format(port=port))


def _fresh(
    review: Review, handler: Callable[[Request], Awaitable[Response]]
) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` on the dataset as its file is now (read again if it changed); a file that
    cannot be read (e.g. half-written by a rebuild) or a database row that cannot is a JSON
    error, until it is whole."""

    async def refreshed(request: Request) -> Response:
        try:
            review.refresh()
            return await handler(request)
        except WikioriginError as exc:
            return _json_error(503, str(exc))

    return refreshed


async def _decide(review: Review, request: Request) -> Response:
    """``POST /api/decide``: the body read within :data:`_BODY_BYTES` (413 past it, unread),
    parsed, and the decision recorded (400 when refused, 507 when the disk is full)."""
    size = request.headers.get("content-length", "")
    if size.isdigit() and int(size) > _BODY_BYTES:
        return _too_large()
    raw = await _body(request)
    if raw is None:  # a chunked body past the limit: refused, the rest not read
        return _too_large()
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested past Python's stack: refused alike
        return _json_error(400, "the body is not a JSON object")
    try:
        return JSONResponse(review.decide(body if isinstance(body, dict) else {}))
    except NotSaved as exc:  # a full disk: 507 Insufficient Storage, the reason in one line
        return _json_error(507, str(exc))
    except (ValueError, WikioriginError) as exc:
        return _json_error(400, str(exc))


async def _no_icon(request: Request) -> Response:
    return Response(status_code=204)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; a port in use or an address that is not this
    machine's is a one-line error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(64)
    except OSError as exc:
        sock.close()
        raise ParameterError(
            "port",
            f"{host}:{port}: cannot listen there ({exc.strerror}); give another {{port}} (0: any free one) or {{host}}",
            also=("host",),
        ) from None
    sock.set_inheritable(True)
    return sock


def serve(
    dataset,
    db,
    *,
    articles=None,
    host: str = "127.0.0.1",
    port: int = 8765,
    annotator: str = "annotator",
    show: Callable[[str], object] | None = None,
) -> None:
    """Serve the review of ``dataset`` until interrupted. The URL to open (with its access
    token beyond loopback) is said first, a line each, to ``show`` (the command line prints
    them; by default they are logged at warning level, so a notebook shows them)."""
    say = show or logger.warning
    import uvicorn

    review = Review(dataset, db, annotator, articles)
    sock = bind(host, port)
    port = sock.getsockname()[1]
    loopback = is_loopback(host)
    token = None if loopback else secrets.token_urlsafe(18)
    hosts = ["127.0.0.1", "localhost", "::1", host] if loopback else None
    if host in ("0.0.0.0", "::", ""):  # every interface: name one others can reach
        host = socket.getfqdn() or socket.gethostname()
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/" + ("" if token is None else f"?token={token}")
    say(
        f"reviewing {review.path} ({len(review.dataset.items)} {review.dataset.kind} items) as "
        f"{annotator}, decisions in {db}: open {url}"
    )
    if token:
        say("listening beyond loopback: every request needs the token in that URL")
    config = uvicorn.Config(make_app(review, token, hosts, port), log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
    review.store.close()
