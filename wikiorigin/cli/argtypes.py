"""The argparse types of the command line's options, checked at the edge (a wrong value is one
line, exit 2): numbers (:func:`positive`, :func:`temperature`), rating scales, prices, memory
sizes and namespace lists."""

from __future__ import annotations

import argparse
import json
import math
import re

__all__ = ["positive", "temperature", "rating_scale", "prices", "memory_size", "namespaces"]


def namespaces(text: str) -> list[int]:
    """An argparse type: comma-separated namespace numbers (``0`` or ``0,14``)."""
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def memory_size(text: str) -> str:
    """A memory size as DuckDB takes it (``4GB``, ``512MB``, ``1.5GiB``), checked at the command line."""
    if not re.fullmatch(r"\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*", text, re.I):
        raise argparse.ArgumentTypeError(f"{text!r} is not a memory size such as 4GB or 512MB")
    return text.strip()


def positive(kind, zero: bool = False):
    """An argparse type: a finite number > 0 (>= 0 with ``zero``)."""

    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
            raise argparse.ArgumentTypeError(f"expected a number {'>=' if zero else '>'} 0, got {text!r}")
        return value

    return convert


def rating_scale(text: str) -> tuple[float, float]:
    """An argparse type: a rating scale ``LOW-HIGH`` (``1-10``, ``0-5``, ``-3-3``, ``1.5-4.5``),
    finite, the lowest first."""
    found = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*(?:-|\.\.|to)\s*(-?\d+(?:\.\d+)?)\s*", text)
    low, high = (float(found[1]), float(found[2])) if found else (math.nan, math.nan)
    if not low < high:
        raise argparse.ArgumentTypeError(f"expected LOW-HIGH with LOW under HIGH (e.g. 1-10), got {text!r}")
    return (low, high)


def prices(text: str) -> dict:
    """``--prices``: JSON with numbers for ``input`` and ``output`` (USD per 1M tokens), checked
    at the command line, before anything runs."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if not (isinstance(value, dict) and all(_price(value.get(k)) for k in ("input", "output"))):
        raise argparse.ArgumentTypeError(
            f'{text!r} is not JSON such as {{"input": 0.15, "output": 0.6}} (USD per 1M tokens: numbers >= 0)'
        )
    return value


def _price(value) -> bool:
    """A price: a finite number >= 0 (not a boolean, not NaN)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < float("inf")


def temperature(text: str) -> float:
    """An argparse type: a sampling temperature, 0 to 2 (the range OpenAI's API and vLLM take)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value <= 2:  # nan too
        raise argparse.ArgumentTypeError(f"expected a temperature from 0 to 2, got {text!r}")
    return value
