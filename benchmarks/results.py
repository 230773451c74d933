"""The benchmarks' JSON results: one file per benchmark, read by `benchmarks.table`.

A full run writes `<DIR>/<name>.json` when given `--results DIR` (`python -m benchmarks`
passes `benchmarks/results`; a `--quick` run writes nothing): when and where it ran, and one
`Target` per goal it measures, met or not, with the limit that the machine, or work the goal
leaves in, sets where there is one. The README's speed table is generated from these files,
never typed by hand.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True, slots=True)
class Target:
    """One goal as measured: `measured` against `target` (`at_least`: higher is better)."""

    goal: str
    measured: float
    target: float
    unit: str = "x"
    at_least: bool = True
    limit: float | None = None
    """The best attainable for this goal where something beyond it sets one: the machine (its
    cores, a parser's rate), or work the goal's own terms leave in; the note says which."""
    note: str = ""
    noise: float | None = None
    """How much this figure moved within the run, relative to it (`spread` of its passes, the
    contenders' added for a ratio): the margin `benchmarks.regress` allows beyond its tolerance
    before calling a worse figure a regression. None: not measured (no margin)."""

    @property
    def met(self) -> bool:
        return self.measured >= self.target if self.at_least else self.measured <= self.target

    def line(self) -> str:
        sign = ">=" if self.at_least else "<="
        verdict = "met" if self.met else "NOT met"
        limit = f"; limit {amount(self.limit, self.unit)}" if self.limit is not None else ""
        note = f" ({self.note})" if self.note else ""
        noise = f", noise {100 * self.noise:.1f}%" if self.noise is not None else ""
        return (f"  target {self.goal}: {amount(self.measured, self.unit)}"
                f" (target {sign} {amount(self.target, self.unit)}: {verdict}{limit}{noise}){note}")


def amount(value: float, unit: str) -> str:
    """`1.23x` for ratios, `1.23 s` / `142.00 MB` for quantities."""
    return f"{value:.2f}x" if unit == "x" else f"{value:.2f} {unit}"


def spread(seconds: Sequence[float]) -> float:
    """The noise of timed passes of one thing: (median - best) / best (0 for one pass)."""
    ordered = sorted(seconds)
    best = ordered[0]
    return (statistics.median(ordered) - best) / best if best > 0 else 0.0


def cpu_model() -> str | None:
    """The processor's model name (Linux: /proc/cpuinfo), part of the machine class."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _probe_work() -> int:
    """A fixed piece of interpreter work: arithmetic, strings, a dict and a list, as the
    benchmarks' own Python code does (about 30 ms here)."""
    table: dict[str, int] = {}
    total = 0
    for number in range(60_000):
        text = str(number * 7)
        table[text] = len(text)
        total += number % 13
    return total + len(sorted(table.values()))


def machine_speed(passes: int = 7) -> float:
    """CPU seconds of `_probe_work`, best of `passes`: how fast one core of this machine runs
    Python right now. Recorded with every result, so `benchmarks.regress` can compare a time or
    a rate measured in a slow minute with one recorded in a fast one (the VM's speed moves by
    a third within an hour; ratios measured in one run need no such help)."""
    return best_cpu_seconds(_probe_work, passes)


def best_cpu_seconds(action: Callable[[], object], repeat: int) -> float:
    """The best CPU time of `repeat` runs of `action` (this process's)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return best


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "arch": platform.machine(),
        "cpu_model": cpu_model(),
        "load_average": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "speed_probe_s": round(machine_speed(), 5),
    }


def results_dir(option: Path | None, quick: bool) -> Path | None:
    """Where a run writes its results: `--results DIR` only (`python -m benchmarks` passes
    `benchmarks/results` for a full run), so a benchmark called from elsewhere, a test say,
    never rewrites the committed results. A `--quick` run writes nothing."""
    return None if quick else option


def save(folder: Path | None, name: str, jobs: int | list[int], targets: list[Target],
         figures: dict[str, Any]) -> Path | None:
    """Write `<folder>/<name>.json` (nothing when `folder` is None) and return its path."""
    for target in targets:
        print(target.line())
    if folder is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "benchmark": name,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "argv": sys.argv[1:],
        "jobs": jobs,
        "targets": [dict(asdict(target), met=target.met) for target in targets],
        "figures": figures,
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"  results written to {path}")
    return path
