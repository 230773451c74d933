"""`python -m benchmarks [--quick] [names...]`: run the benchmarks one after another.

Each benchmark is a module `benchmarks.<name>` with `main(argv) -> int`. They are imported by
name only when run, so a benchmark that does not exist yet (or whose optional dependencies are
missing) is reported as skipped and the others still run.

A full run writes `benchmarks/results/` and then compares every results file it wrote with the
last committed one (`benchmarks.regress`). A benchmark with a headline figure more than 15 %
worse than recorded, beyond the run's own noise, is run once more (its results into a scratch
folder): a figure the rerun confirms prints `REGRESSION` and the run exits 1; one it does not
confirm was a slow minute of the machine. The results file kept is the run with fewer
regressions.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from benchmarks import regress
from benchmarks.results import RESULTS_DIR

BENCHMARKS = ("bench_check", "bench_mutate", "bench_audit", "bench_toolargs", "bench_scale", "bench_capture",
              "bench_sources", "bench_report")


def run(name: str, quick: bool, results: Path | None = None) -> str:
    """Run one benchmark, its results into `results` (default `RESULTS_DIR`); return how it
    ended (`ok`, `skipped: ...`, `exit N`, `crashed: ...`).

    A benchmark that exits or raises is reported and the next one still runs.
    """
    try:
        module = importlib.import_module(f"benchmarks.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"benchmarks.{name}":
            return "skipped: not present"
        return f"skipped: needs {exc.name}"
    try:
        code = module.main(["--quick"] if quick else ["--results", str(results or RESULTS_DIR)])
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
        written = regress.written_since(RESULTS_DIR, started)
        verdicts = regress.check_files(written, recorded)
        again = regress.suspects(verdicts, [name for name in outcomes if outcomes[name] == "ok"])
        if again:
            verdicts = _confirm(again, written, verdicts, recorded)
        regressed = regress.report(verdicts)
    return 1 if failed or regressed else 0


def _confirm(names: list[str], written: list[Path], verdicts: list[regress.Verdict],
             recorded: dict[str, regress.Record | None]) -> list[regress.Verdict]:
    """Run `names` again into a scratch folder; the verdicts with only the regressions the rerun
    confirms, and each rerun's results file kept where it reads fewer regressions."""
    print(f"=== {sum(v.status == regress.REGRESSION for v in verdicts)} figure(s) read as regressions: "
          f"running {', '.join(names)} again to confirm", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-rerun-") as folder:
        scratch = Path(folder)
        for name in names:
            start = time.perf_counter()
            outcome = run(name, False, scratch)
            print(f"=== {name} (rerun): {outcome} ({time.perf_counter() - start:.1f} s)\n", flush=True)
        reruns = sorted(scratch.glob("*.json"))
        again = regress.check_files(reruns, recorded)
        for path in reruns:
            first = RESULTS_DIR / path.name
            if first not in written:
                continue
            counts = (f"{regress.regressions_in(again, path.name)} regression(s) in the rerun, "
                      f"{regress.regressions_in(verdicts, path.name)} in the first run, over all its figures")
            kept = "the rerun's" if regress.keep_better(first, path, verdicts, again) else "the first run's"
            print(f"  kept {kept} {path.name}: {counts}")
    return regress.confirmed(verdicts, again)


if __name__ == "__main__":
    sys.exit(main())
