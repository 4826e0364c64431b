"""Helpers shared by the benchmarks: cached synthetic inputs, child-process peak RSS and the
wall and CPU time of a whole command; the figures a bench prints, kept for the performance page.

A bench's figure lines (a label, two spaces or more, a number, the anchor in brackets: what every
bench prints last) are kept as they are printed and written to ``bench/out/results/NAME.json``
when the bench ends well (:func:`write_results`, unless the bench wrote its own rows);
``scripts/bench_table.py`` makes the page's table from them."""

from __future__ import annotations

import atexit
import os
import re
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"

QUICK = "--quick" in sys.argv
"""``--quick``: the bench on small inputs, in seconds (``make bench-quick``, run by CI so that a
bench that breaks fails the build); its figures go to ``NAME.quick.json``, never to the docs."""


def size(full: int, quick: int, variable: str | None = None, unit: int = 1) -> int:
    """An input's size: ``quick`` under ``--quick``, else the environment's ``variable`` (when
    set, in ``unit``s: megabytes, millions) or ``full``."""
    if QUICK:
        return quick
    return int(float(os.environ[variable]) * unit) if variable and os.environ.get(variable) else full


def cached(name: str, make) -> Path:
    """``bench/out/NAME``, made by ``make(path)`` once (written to a temporary name first)."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    if not path.exists():
        tmp = path.with_name(path.name + ".tmp")
        started = time.perf_counter()
        make(tmp)
        os.replace(tmp, path)
        print(f"  made {name}: {path.stat().st_size / 1e6:,.0f} MB in {time.perf_counter() - started:.0f} s")
    return path


def timed(fn, *args, **kw) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn(*args, **kw)
    return time.perf_counter() - started, result


_PEAK = "import os, subprocess, sys; p = subprocess.Popen(sys.argv[1:], stdout=-3, stderr=-3); " + (
    "_, s, u = os.wait4(p.pid, 0); print(u.ru_maxrss if s == 0 else -s)"
)


def peak_rss_mb(argv: list[str]) -> float:
    """Peak resident memory (MB) of the largest process of ``argv``, started by a small Python
    of its own: a child's peak counts the memory of the process it was spawned from (Linux
    records the parent's high-water mark at exec), so a bench holding 300 MB would add it."""
    done = subprocess.run([sys.executable, "-c", _PEAK, *argv], capture_output=True, text=True, check=True)
    peak = int(done.stdout)
    if peak <= 0:
        raise RuntimeError(f"{argv} failed with status {-peak}")
    return peak / 1024  # kB on Linux


def installed_env() -> dict[str, str]:
    """The environment in which a command starts as an installed one does: its modules' compiled
    bytecode cached (in bench/out/pycache) even where PYTHONDONTWRITEBYTECODE is set, which would
    make every start compile wikiorigin's modules again (about 0.05 s here)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(OUT / "pycache")
    return env


def command_seconds(argv: list[str]) -> tuple[float, float]:
    """Wall seconds of a child process running ``argv`` from its start to its end (its
    interpreter's start-up included, as an installed command starts: :func:`installed_env`), and
    the CPU seconds it used (user and system, all threads)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=installed_env())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise RuntimeError(f"{argv} failed with status {status}")
    return wall, usage.ru_utime + usage.ru_stime


PY = sys.executable


RESULTS = OUT / "results"


def write_results(name: str, rows: list[dict], *, quick: bool = QUICK) -> Path:
    """A bench's figures for the performance page: ``rows`` of ``benchmark``, ``figure`` and
    ``anchor`` (Markdown), written to ``bench/out/results/NAME.json`` (``NAME.quick.json`` for
    small inputs), from which ``scripts/bench_table.py`` writes the page's table."""
    import json

    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}{'.quick' if quick else ''}.json"
    stamp = time.strftime("%Y-%m-%d", time.gmtime())
    path.write_text(
        json.dumps({"bench": name, "date": stamp, "quick": quick, "rows": rows}, ensure_ascii=False, indent=1)
    )
    _printed.written = True
    return path


_FIGURE = re.compile(r"^(?P<label>\S.*?)\s{2,}(?P<value>-?[\d.,]+(?: ?(?:MB|GB|s|ms|µs|x|×))?)(?P<rest>(?:\s.*)?)$")


class _Printed:
    """The figure lines a bench prints (see the module docstring), passed on to ``stream``."""

    def __init__(self, stream):
        self.stream, self.rows, self.line, self.written, self.failed = stream, [], "", False, False

    def write(self, text: str) -> int:
        self.line += text
        *lines, self.line = self.line.split("\n")
        for line in lines:
            found = _FIGURE.match(line)
            if found:
                anchor, more = re.fullmatch(r"(?:\((.*?)\))?\s*(.*)", found["rest"].strip()).groups()
                self.rows.append(
                    {
                        "benchmark": f"{found['label']} (`{Path(sys.argv[0]).name}`)",
                        "figure": f"**{found['value']}**" + (f" {more}" if more else ""),
                        "anchor": anchor or "—",
                    }
                )
        return self.stream.write(text)

    def __getattr__(self, name):
        return getattr(self.stream, name)

    def save(self) -> None:
        """At exit: the rows, when the bench ended well and wrote none of its own."""
        if self.rows and not self.written and not self.failed and Path(sys.argv[0]).stem.startswith("bench_"):
            write_results(Path(sys.argv[0]).stem, self.rows)


def _failed(kind, value, trace, hook=sys.excepthook) -> None:
    _printed.failed = True
    hook(kind, value, trace)


_printed = _Printed(sys.stdout)
sys.stdout, sys.excepthook = _printed, _failed
atexit.register(_printed.save)
