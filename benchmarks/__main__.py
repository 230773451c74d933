"""`python -m benchmarks [--quick] [names...]`: run the benchmarks one after another.

Each benchmark is a module `benchmarks.<name>` with `main(argv) -> int`. They are imported by
name only when run, so a benchmark that does not exist yet (or whose optional dependencies are
missing) is reported as skipped and the others still run.

A full run writes `benchmarks/results/` and then compares every results file it wrote with the
last committed one (`benchmarks.regress`). A benchmark with a headline figure more than 15 %
worse than recorded, beyond the run's own noise, is run once more (its results into a scratch
folder). A figure the rerun confirms is measured once more beside the code that made its
record (the benchmark run from a git worktree of the commit that last wrote its results): only
a figure worse than that too prints `REGRESSION` and the run exits 1; the others were the
machine, slow for minutes. The results file kept is the run with fewer regressions.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
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
        verdicts = regress.confirmed(verdicts, again)
        for name in regress.suspects(verdicts, names):
            verdicts = _against_recorded_code(name, verdicts, reruns, recorded)
    return verdicts


def _against_recorded_code(name: str, verdicts: list[regress.Verdict], reruns: list[Path],
                           recorded: dict[str, regress.Record | None]) -> list[regress.Verdict]:
    """A regression the rerun confirmed, measured once more beside the code that made its
    record: `name` run from a worktree of the commit that last wrote its results, now. The
    rerun's figures are then compared with those, measured minutes apart on the same machine."""
    files = [path for path in reruns if regress.owner(path.stem, [name]) == name]
    regressed = [path for path in files if regress.regressions_in(verdicts, path.name)]
    commit = regress.recorded_commit(RESULTS_DIR / regressed[0].name) if regressed else None
    if commit is None:
        return verdicts
    print(f"=== {name}: regressions confirmed; running the recorded code ({commit[:10]}) now, "
          "beside them", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-recorded-") as folder:
        scratch = Path(folder)
        outcome = run_at(commit, name, scratch / "results")
        print(f"=== {name} at {commit[:10]}: {outcome}\n", flush=True)
        if outcome != "ok":
            return verdicts
        old = {path.name: json.loads(path.read_text(encoding="utf-8"))
               for path in sorted((scratch / "results").glob("*.json"))}
        now = [verdict for path in files if path.name in old
               for verdict in regress.compare(json.loads(path.read_text(encoding="utf-8")),
                                              old[path.name], scaled=False)]
    return regress.against_recorded_code(verdicts, now, commit)


def run_at(commit: str, name: str, results: Path) -> str:
    """Run benchmark `name` as `commit` has it, its code and the package's (a detached git
    worktree, beside this checkout's cached corpora), its results into `results`."""
    root = RESULTS_DIR.parent.parent
    with tempfile.TemporaryDirectory(prefix="bench-tree-") as folder:
        tree = Path(folder) / "tree"
        added = subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(tree), commit],
                               cwd=root, capture_output=True, text=True, check=False)
        if added.returncode != 0:
            return f"skipped: no worktree of {commit[:10]} ({added.stderr.strip()[-200:]})"
        try:
            # what a checkout has beside its tracked files: the cached corpora, the peer
            for kept in (Path("benchmarks") / "data", Path(".peer")):
                if (root / kept).is_dir() and not (tree / kept).exists():
                    (tree / kept).symlink_to(root / kept, target_is_directory=True)
            results.mkdir(parents=True, exist_ok=True)
            env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
            # `-m` from the worktree: its `benchmarks` and `frayproof_audit` come first on the
            # path, before this checkout's editable install
            done = subprocess.run([sys.executable, "-m", f"benchmarks.{name}", "--results", str(results)],
                                  cwd=tree, env=env, check=False)
            return "ok" if done.returncode == 0 else f"exit {done.returncode}"
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=root,
                           capture_output=True, check=False)


if __name__ == "__main__":
    sys.exit(main())
