"""How a command that made LLM requests ends: the usage lines, and its exit status from the
requests that failed."""

from __future__ import annotations

import sys

__all__ = ["requests_outcome", "print_usage"]


def print_usage(clients) -> None:
    """One usage line on stderr per ``(name, client)`` pair (``name: requests, tokens, cost,
    waits``), priced with the client's own prices, and the client's warnings (a reasoning effort
    the server seems to ignore); a client that is None is passed over."""
    for name, client in clients:
        if client is not None:
            print(f"{name}: {client.usage.summary(client.prices)}", file=sys.stderr)
            for warning in client.warnings():
                print(f"wikiorigin: warning: {warning}", file=sys.stderr)


def requests_outcome(clients, where: str) -> int:
    """A run's exit status from its LLM clients' requests: 1 when every request failed (the
    first error says why), else 0 after a line that counts the failures; ``where`` says where
    the failed rows and their reasons are."""
    clients = [c for c in clients if c is not None]
    asked = sum(c.usage.requests for c in clients)
    failed = sum(c.usage.failures for c in clients)
    first = next((c.first_error for c in clients if c.first_error), None)
    if asked and failed == asked:
        what = "the only request failed:" if asked == 1 else f"all {asked} requests failed; the first:"
        print(f"wikiorigin: error: {what} {first} (rows and reasons -> {where})", file=sys.stderr)
        return 1
    if failed:
        print(f"wikiorigin: warning: {failed} of {asked} requests failed; the first: {first} "
              f"(rows and reasons -> {where})", file=sys.stderr)
    return 0
