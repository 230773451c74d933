"""bench_scale: the same corpus audit on local loky workers and on a Dask cluster.

On a generated corpus (default 200 MB of JSONL, `--quick` for a small one) it prints, for
`frayproof-audit audit` as a real subprocess timed from start to exit:

* pairs/second with `--jobs 1` and `--jobs 2` (loky) and with `--backend dask --scheduler local
  --jobs 2` (a two-worker `LocalCluster` started by the run, which is counted);
* the ratio dask / loky-2 (target >= 0.8 on >= 200 MB: the cluster costs little over local
  processes once the corpus is big enough to hide its start-up);
* the per-task overhead of each executor: a no-op task pushed through `Executor` 200 times.

Check-only by default (`--mutate` adds mutation testing, several times the work per pair, which
hides the overheads even more). Corpora are shared with bench_audit (`benchmarks/data/`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks import results
from benchmarks.bench_audit import DATA_DIR, Measured, corpus_file
from benchmarks.compiled import ensure_compiled
from sessiongen import realistic

DEFAULT_MB = 200
QUICK_MB = 6
TARGET_RATIO = 0.8
TASKS = 200
ROUNDS = 3
"""Rounds of the three runs (their best counts; the rounds' ratios give the noise)."""


def audit_run(label: str, path: Path, contract: Path, extra: Sequence[str], scratch: Path) -> Measured:
    out = scratch / "out"
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "frayproof_audit", "audit", str(path), "--contract", str(contract),
               "--out", str(out), "-q", "--fail-on", "none", "--format", "json", *extra]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"audit exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return Measured(label, elapsed, json.loads(done.stdout)["pairs"], path.stat().st_size / 1e6)


def _noop(_shared: None, task: int) -> int:
    return task


def task_overhead(backend: str, jobs: int, scheduler: str | None = None) -> float:
    """Milliseconds per task of pushing no-op tasks through the executor (pool already started)."""
    from frayproof_audit.corpus.run.executor import Executor

    executor: Executor[None, int, int] = Executor(backend, jobs, scheduler)
    with executor:
        executor.submit(_noop, None, list(range(jobs * 2)))  # start the workers
        list(executor.completed())
        start = time.perf_counter()
        executor.submit(_noop, None, list(range(TASKS)))
        done = sum(1 for _ in executor.completed())
        elapsed = time.perf_counter() - start
    assert done == TASKS
    return elapsed / TASKS * 1000


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_scale", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"a {QUICK_MB} MB corpus (smoke run)")
    parser.add_argument("--megabytes", type=int, default=None, help=f"corpus size (default {DEFAULT_MB})")
    parser.add_argument("--mutate", action="store_true", help="with mutation testing")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--results", type=Path,
                        help="write the JSON results into this folder (python -m benchmarks: "
                        "benchmarks/results; never with --quick)")
    args = parser.parse_args(argv)
    ensure_compiled()  # every audit below is a fresh process: none may spend its time compiling
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        print("skipped: needs the dask extra (pip install 'frayproof-audit[dask]')")
        return 0
    megabytes = args.megabytes or (QUICK_MB if args.quick else DEFAULT_MB)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    path = corpus_file(args.data_dir, megabytes, args.seed)
    contract = realistic.write_contract(args.data_dir / "bench_contract.yaml")
    print(f"corpus {path.name}: {path.stat().st_size / 1e6:.0f} MB; {os.cpu_count()} CPU(s);"
          f" load average {os.getloadavg()[0]:.2f}; {'with' if args.mutate else 'without'} mutation",
          flush=True)
    mutate = [] if args.mutate else ["--no-mutate"]
    runs = {
        "loky --jobs 1": ["--jobs", "1"],
        "loky --jobs 2": ["--jobs", "2"],
        "dask local cluster, 2 workers": ["--backend", "dask", "--scheduler", "local", "--jobs", "2"],
    }
    measured: dict[str, Measured] = {}
    rounds = 1 if args.quick else ROUNDS
    ratios: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench_scale-") as folder:
        for _ in range(rounds):  # interleaved: a slow minute hits a round's runs alike
            ran = {label: audit_run(label, path, contract, [*extra, *mutate], Path(folder))
                   for label, extra in runs.items()}
            for label, run in ran.items():
                print(run.line(), flush=True)
                if label not in measured or run.seconds < measured[label].seconds:
                    measured[label] = run
            ratios.append(ran["loky --jobs 2"].seconds / ran["dask local cluster, 2 workers"].seconds)
    ratio = measured["dask local cluster, 2 workers"].pairs_per_s / measured["loky --jobs 2"].pairs_per_s
    verdict = "meets" if ratio >= TARGET_RATIO else "below"
    print(f"  dask / loky-2 rate: {ratio:.2f} ({verdict} the target {TARGET_RATIO}"
          f"{'' if megabytes >= 200 else ' set for >= 200 MB'})")
    figures: dict[str, float] = {label: round(run.pairs_per_s, 1) for label, run in measured.items()}
    for label, backend, scheduler in (("loky, 2 workers", "loky", None),
                                      ("dask local cluster, 2 workers", "dask", "local")):
        overhead = task_overhead(backend, 2, scheduler)
        figures[f"per-task overhead ms, {label}"] = round(overhead, 3)
        print(f"  per-task overhead, {label}: {overhead:.2f} ms", flush=True)
    targets = [results.Target(f"dask local cluster / loky --jobs 2, pairs/s ({megabytes} MB)", ratio,
                              TARGET_RATIO, noise=results.spread([1 / r for r in ratios]),
                              note=f"best of {rounds} interleaved rounds each; the cluster's start counted")]
    results.save(results.results_dir(args.results, args.quick), "bench_scale", [1, 2], targets, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
