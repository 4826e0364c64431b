"""How a command that made LLM requests ends: the usage lines, and its exit status from the
requests that failed; and the library's warnings (its logger) on stderr, as the command line
words its own."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from .stderr import show_log

__all__ = ["requests_outcome", "print_usage", "show_log"]


def print_usage(clients) -> None:
    """One usage line on stderr per ``(name, client)`` pair (``name: requests, tokens, cost,
    waits``), priced with the client's own prices, and the client's warnings (a reasoning effort
    the server seems to ignore, requests the model refused), its parameters said as the LLM
    options' flags; a client that is None is passed over. The tokens and cost are of every
    response the server sent, usable or not."""
    from .options import FLAGS, in_flags

    for name, client in clients:
        if client is not None:
            print(f"{name}: {client.usage.summary(client.prices)}", file=sys.stderr)
            for warning in client.warnings():
                print(f"wikiorigin: warning: {in_flags(warning, FLAGS)}", file=sys.stderr)


def requests_outcome(
    clients, where: str, names: Mapping[str, str | None] | None = None, *, allow_failures: bool = False
) -> int:
    """A run's exit status from its LLM clients' requests: 1 when any request failed after its
    retries (one line: how many, the first error, which says why, in the words of ``names``: the
    command's flags, :func:`~wikiorigin.cli.options.flags`; and how to go on), else 0. With
    ``allow_failures`` a run with some failures is accepted (0, a warning line); one whose every
    request failed is never accepted. ``where`` says where the failed rows and their reasons are."""
    from .options import in_flags

    clients = [c for c in clients if c is not None]
    asked = sum(c.usage.requests for c in clients)
    failed = sum(c.usage.failures for c in clients)
    if not failed:
        return 0
    first = next((c.first_error for c in clients if c.first_error), None)
    first = in_flags(first, names or {}) if first else first
    if failed == asked:
        what = "the only request failed:" if asked == 1 else f"all {asked} requests failed; the first:"
        print(f"wikiorigin: error: {what} {first} (rows and reasons -> {where})", file=sys.stderr)
        return 1
    said = f"{failed} of {asked} requests failed after their retries; the first: {first} (rows and reasons -> {where})"
    if allow_failures:
        print(f"wikiorigin: warning: {said}; accepted as it is (--allow-failures): complete: false", file=sys.stderr)
        return 0
    print(
        f"wikiorigin: error: {said}; the run is incomplete (complete: false): {_going_on(clients, failed)}, "
        "or add --allow-failures to accept it as it is",
        file=sys.stderr,
    )
    return 1


def _going_on(clients, failed: int) -> str:
    """How an incomplete run goes on: the same command again re-asks what failed, except the
    model's refusals, which the cache remembers (``--retry-refusals`` asks them again)."""
    refused = sum(c.usage.refused for c in clients)
    again = "run the same command again to retry only those (answers paid for come from the cache)"
    if not refused:
        return again
    if refused == failed:
        return f"the model refused {'it' if failed == 1 else 'them'} (remembered: --retry-refusals asks again)"
    others = again.replace("only those", f"the {failed - refused} that got no answer")
    return f"{others}; --retry-refusals asks the {refused} refused again"
