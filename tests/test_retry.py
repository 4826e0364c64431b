"""The one backoff policy of the retry loops (dump downloads, LLM requests)."""

import math

import pytest

from wikiorigin.retry import Backoff


def test_exponential_waits_and_the_last_try():
    backoff = Backoff(3, base=0.5)
    assert list(backoff.tries) == [0, 1, 2, 3]
    assert [backoff.delay(a) for a in range(3)] == [0.5, 1.0, 2.0]
    assert not backoff.exhausted(2) and backoff.exhausted(3)
    assert backoff.max_wait == math.inf and not backoff.refuses(10**6)


def test_bounded_jittered_and_the_servers_word():
    backoff = Backoff(5, base=1.0, max_wait=3.0, jitter=True)
    for attempt in range(5):
        assert min(3.0, 0.5 * 2**attempt) <= backoff.delay(attempt) <= min(3.0, 1.5 * 2**attempt)
    assert backoff.delay(0, retry_after=2.5) == 2.5  # Retry-After replaces the backoff
    assert backoff.delay(0, retry_after=0.0) == 0.0
    assert backoff.refuses(3.5) and not backoff.refuses(3.0) and not backoff.refuses(None)


def test_no_retries():
    backoff = Backoff(0)
    assert list(backoff.tries) == [0] and backoff.exhausted(0)


@pytest.mark.parametrize("attempt", [0, 4])
def test_never_more_than_max_wait(attempt):
    assert Backoff(5, base=100.0, max_wait=1.0).delay(attempt) == 1.0


def test_retry_after_reads_the_forms_servers_send():
    import email.utils
    import time

    from wikiorigin.retry import retry_after

    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5  # the finer one wins
    assert retry_after({"retry-after": "-3"}) == 0.0
    soon = email.utils.formatdate(time.time() + 100, usegmt=True)
    assert 95 <= retry_after({"retry-after": soon}) <= 100
    assert retry_after({"retry-after": email.utils.formatdate(time.time() - 100, usegmt=True)}) == 0.0
    for unreadable in ({}, {"retry-after": "soon"}, {"retry-after": "nan"}, {"retry-after": "inf"}):
        assert retry_after(unreadable) is None
