"""`python -m benchmarks [--quick] [names...]`: run the benchmarks one after another.

Each benchmark is a module `benchmarks.<name>` with `main(argv) -> int`. They are imported by
name only when run, so a benchmark that does not exist yet (or whose optional dependencies are
missing) is reported as skipped and the others still run.

A full run writes `benchmarks/results/` and then compares every results file it wrote with the
last committed one (`benchmarks.regress`): a headline figure more than 15 % worse than
recorded, beyond the run's own noise, prints `REGRESSION` and the run exits 1.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import traceback
from collections.abc import Sequence

from benchmarks import regress
from benchmarks.results import RESULTS_DIR

BENCHMARKS = ("bench_check", "bench_mutate", "bench_audit", "bench_toolargs", "bench_scale", "bench_capture",
              "bench_sources", "bench_report")


def run(name: str, quick: bool) -> str:
    """Run one benchmark; return how it ended (`ok`, `skipped: ...`, `exit N`, `crashed: ...`).

    A benchmark that exits or raises is reported and the next one still runs.
    """
    try:
        module = importlib.import_module(f"benchmarks.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"benchmarks.{name}":
            return "skipped: not present"
        return f"skipped: needs {exc.name}"
    try:
        code = module.main(["--quick"] if quick else ["--results", str(RESULTS_DIR)])
    except SystemExit as exc:  # argparse errors and explicit sys.exit calls
        code = exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:
        traceback.print_exc()
        return f"crashed: {type(exc).__name__}: {exc}"
    return "ok" if not code else f"exit {code}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="short runs (smoke-test the suite)")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)})")
    parser.add_argument("--no-compare", action="store_true",
                        help="do not compare the results with the committed ones")
    args = parser.parse_args(argv)
    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r} (choose from {', '.join(BENCHMARKS)})")
    compare = not (args.quick or args.no_compare)
    if compare:  # the record, taken before any benchmark rewrites a results file
        recorded = regress.snapshot(RESULTS_DIR)
        started = regress.texts(RESULTS_DIR)
    outcomes = {}
    for name in args.names or BENCHMARKS:
        print(f"=== {name}", flush=True)
        start = time.perf_counter()
        outcomes[name] = run(name, args.quick)
        print(f"=== {name}: {outcomes[name]} ({time.perf_counter() - start:.1f} s)\n", flush=True)
    failed = [name for name, outcome in outcomes.items() if outcome.startswith(("exit", "crashed"))]
    regressed = 0
    if compare:
        regressed = regress.report(regress.check_files(
            regress.written_since(RESULTS_DIR, started), recorded))
    return 1 if failed or regressed else 0


if __name__ == "__main__":
    sys.exit(main())
