"""bench_audit: the whole corpus audit, end to end, as `frayproof-audit audit` runs it.

On a generated corpus (default 200 MB of JSONL, `--quick` for a small one) it prints:

* the bare `orjson.loads` rate of the same file (the ceiling: parse only, one core);
* end-to-end pairs/second of `frayproof-audit audit` check-only (`--no-mutate`) and with mutation
  testing, each with `--jobs 1` and `--jobs N` (default 2), and the speed-up (target >= 1.8x);
* the peak resident memory of the whole process tree (the CLI and every worker) for the corpus
  and for one 4x larger (the same file four times; target: grows <= 1.5x), with the speed-up
  there too (fixed costs such as starting the pool weigh less on a bigger corpus).

Every audit is a real subprocess, timed from start to exit, pool start-up and writing the
dataset included; memory is sampled from /proc every 20 ms. Corpora are cached in
`benchmarks/data/` (keyed on the generator revision).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from sessiongen import realistic

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_MB = 200
QUICK_MB = 12
TARGET_SPEEDUP = 1.8
TARGET_RSS_GROWTH = 1.5
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True, slots=True)
class Measured:
    label: str
    seconds: float
    pairs: int
    megabytes: float
    peak_rss: int | None = None
    cpu_s: float | None = None

    @property
    def pairs_per_s(self) -> float:
        return self.pairs / self.seconds

    def line(self) -> str:
        rss = f"  peak RSS {self.peak_rss / 2**20:5.0f} MiB" if self.peak_rss else ""
        cpu = f"  CPU {self.cpu_s:6.2f} s" if self.cpu_s is not None else ""
        rate = self.megabytes / self.seconds
        return (f"  {self.label:<34} {self.pairs_per_s:8.1f} pairs/s {rate:6.1f} MB/s"
                f"  ({self.seconds:6.2f} s){cpu}{rss}")


def corpus_file(data_dir: Path, megabytes: int, seed: int) -> Path:
    path = data_dir / f"audit-v{realistic.CORPUS_VERSION}-seed{seed}-{megabytes}mb.jsonl"
    if not path.exists():
        print(f"generating {megabytes} MB into {path} (cached for later runs) ...", flush=True)
        realistic.write_jsonl(path, target_bytes=megabytes * 1_000_000, seed=seed, nights=3,
                           bad_records=8)
    return path


def repeated(path: Path, times: int) -> Path:
    """The corpus `times` over, as one file (same record mix, `times` the size)."""
    target = path.with_name(f"{path.stem}-x{times}.jsonl")
    if not target.exists():
        temporary = target.with_name(f".{target.name}.tmp")
        with open(temporary, "wb") as out:
            for _ in range(times):
                with open(path, "rb") as source:
                    shutil.copyfileobj(source, out, 16 * 2**20)
        os.replace(temporary, target)
    return target


def orjson_rate(path: Path) -> Measured:
    best = None
    for _ in range(2):
        pairs = 0
        start = time.perf_counter()
        with open(path, "rb") as handle:
            for line in handle:
                with contextlib.suppress(orjson.JSONDecodeError):
                    orjson.loads(line)
                pairs += 1
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    assert best is not None
    return Measured("orjson.loads only (1 core)", best, pairs, path.stat().st_size / 1e6)


def _tree_rss(root: int) -> int:
    """Resident bytes of `root` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                total += int(handle.read().split()[1]) * _PAGE
        except OSError:
            pass
        stack.extend(children.get(pid, ()))
    return total


def audit_run(label: str, path: Path, contract: Path, jobs: int, mutate: bool, scratch: Path) -> Measured:
    out = scratch / "out"
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "frayproof_audit", "audit", str(path), "--contract", str(contract),
               "--out", str(out), "--jobs", str(jobs), "-q", "--fail-on", "none", "--format", "json"]
    if not mutate:
        command.append("--no-mutate")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0
    while process.poll() is None:
        peak = max(peak, _tree_rss(process.pid))
        time.sleep(0.02)
    elapsed = time.perf_counter() - start
    stdout, stderr = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"audit exited {process.returncode}: {stderr.decode()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    summary = json.loads(stdout)
    return Measured(label, elapsed, summary["pairs"], path.stat().st_size / 1e6, peak, cpu)


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def machine_speedup(jobs: int) -> float:
    """What this machine gives right now: pure-Python CPU work, `jobs` processes vs one."""
    import joblib

    work = [3_000_000] * (2 * jobs)
    start = time.perf_counter()
    for n in work:
        _burn(n)
    serial = time.perf_counter() - start
    with joblib.parallel_config(backend="loky", n_jobs=jobs):
        joblib.Parallel()(joblib.delayed(_burn)(10) for _ in range(jobs))  # start the workers
        start = time.perf_counter()
        joblib.Parallel()(joblib.delayed(_burn)(n) for n in work)
        parallel = time.perf_counter() - start
    return serial / parallel


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_audit", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"a {QUICK_MB} MB corpus (smoke run)")
    parser.add_argument("--megabytes", type=int, default=None, help=f"corpus size (default {DEFAULT_MB})")
    parser.add_argument("--jobs", type=int, default=2, help="workers for the parallel runs (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--no-large", action="store_true", help="skip the 4x memory run")
    args = parser.parse_args(argv)
    megabytes = args.megabytes or (QUICK_MB if args.quick else DEFAULT_MB)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    path = corpus_file(args.data_dir, megabytes, args.seed)
    contract = realistic.write_contract(args.data_dir / "bench_contract.yaml")
    size = path.stat().st_size / 1e6
    print(f"corpus {path.name}: {size:.0f} MB; {os.cpu_count()} CPU(s); python {sys.version.split()[0]};"
          f" load average {os.getloadavg()[0]:.2f}")
    print(f"  machine check: pure-Python CPU work, {args.jobs} processes vs 1:"
          f" {machine_speedup(args.jobs):.2f}x (the ceiling for any speed-up here)", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_audit-") as folder:
        scratch = Path(folder)
        rows = [orjson_rate(path)]
        print(rows[0].line(), flush=True)
        results: dict[tuple[bool, int], Measured] = {}
        for mutate in (False, True):
            for jobs in (1, args.jobs):
                mode = "check+mutate" if mutate else "check-only"
                measured = audit_run(f"audit {mode}, --jobs {jobs}", path, contract, jobs, mutate, scratch)
                results[(mutate, jobs)] = measured
                print(measured.line(), flush=True)
        for mutate, mode in ((False, "check-only"), (True, "check+mutate")):
            one, many = results[(mutate, 1)], results[(mutate, args.jobs)]
            speedup = one.seconds / many.seconds
            verdict = "ok" if speedup >= TARGET_SPEEDUP else "below target"
            overhead = (many.cpu_s or 0) / (one.cpu_s or 1)
            print(f"  speed-up {mode} --jobs {args.jobs} vs 1: {speedup:.2f}x"
                  f" (target >= {TARGET_SPEEDUP}x: {verdict}); CPU used {overhead:.2f}x of --jobs 1")
        ratio = results[(False, 1)].pairs_per_s / rows[0].pairs_per_s
        print(f"  check-only --jobs 1 runs at {ratio:.0%} of the bare orjson parse rate")
        if not args.no_large:
            large = repeated(path, 4)
            big = {
                jobs: audit_run(f"4x corpus check-only, --jobs {jobs}", large, contract, jobs, False, scratch)
                for jobs in (1, args.jobs)
            }
            for measured in big.values():
                print(measured.line(), flush=True)
            print(f"  speed-up 4x corpus check-only --jobs {args.jobs} vs 1:"
                  f" {big[1].seconds / big[args.jobs].seconds:.2f}x")
            for jobs in (1, args.jobs):
                growth = (big[jobs].peak_rss or 0) / (results[(False, jobs)].peak_rss or 1)
                verdict = "ok" if growth <= TARGET_RSS_GROWTH else "above target"
                print(f"  peak RSS 4x / 1x corpus, --jobs {jobs}: {growth:.2f}x"
                      f" (target <= {TARGET_RSS_GROWTH}x: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
