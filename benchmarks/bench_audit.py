"""bench_audit: the whole corpus audit, end to end, as `frayproof-audit audit` runs it.

Every audit is a real subprocess, timed from start to exit (imports, planning, pool start-up and
writing the dataset included); memory is the peak resident size of the whole process tree,
sampled from /proc every 20 ms, and at least the audit process's own exact peak (`wait4`, from
a tiny launcher process). Each figure is the best of `--repeat` runs after a warm-up run; each
line names the number of jobs the run really used (`runs.n_jobs`). It prints:

* goal 1: check-only `--jobs 1` pairs/second against the bare `orjson.loads` rate of the same
  file (target >= 0.5), on the realistic corpus (default 200 MB) and on a corpus of many 1-5 KB
  records (default 20 MB), each beside the machine's limit for that ratio: what the fixed cost
  of a run (a 1-record input) plus strict parsing alone would allow;
* goal 2: `--jobs N` against `--jobs 1`, check-only (on the corpus and on 4x the corpus) and with
  mutation, in interleaved rounds that each measure the machine's own two-process ceiling for
  pure-Python work beside the two runs, with the limit that the fixed cost of a run and the CPU
  of starting the pool (measured here too) leave;
* goal 4: peak RSS when the corpus grows 4x (target <= 1.5x), and, on a corpus of a few records of
  `--big-mb` MB each (JSONL, and the same as Parquet with a page per row and with pyarrow's
  default pages), peak RSS above the 1-record run's, per byte of the largest record (target <= 4).

Corpora are cached in `benchmarks/data/` (keyed on the generator revision).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from benchmarks import corpus, results, stage_shares
from benchmarks.compiled import ensure_compiled
from frayproof_audit import jsonio
from sessiongen import realistic

DATA_DIR = Path(__file__).resolve().parent / "data"
REPO = Path(__file__).resolve().parent.parent
DEFAULT_MB = 200
QUICK_MB = 12
SMALL_MB = 20
QUICK_SMALL_MB = 2
BIG_MB = 50
QUICK_BIG_MB = 4
BIG_RECORDS = 3
TARGET_VS_ORJSON = 0.5
TARGET_OF_LIMIT = 0.8
TARGET_SPEEDUP = 1.8
TARGET_RSS_GROWTH = 1.5
TARGET_RSS_PER_RECORD = 4.0
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True, slots=True)
class Measured:
    label: str
    seconds: float
    pairs: int
    megabytes: float
    peak_rss: int | None = None
    cpu_s: float | None = None
    jobs: int | None = None
    cpu_noise: float = 0.0
    """The spread of the CPU times of the runs it is the best of (`results.spread`)."""
    wall_noise: float = 0.0
    """The spread of their wall times."""

    @property
    def pairs_per_s(self) -> float:
        return self.pairs / self.seconds

    def line(self) -> str:
        rss = f"  peak RSS {self.peak_rss / 2**20:5.0f} MiB" if self.peak_rss else ""
        cpu = f"  CPU {self.cpu_s:6.2f} s" if self.cpu_s is not None else ""
        jobs = f"  jobs {self.jobs}" if self.jobs is not None else ""
        rate = self.megabytes / self.seconds
        return (f"  {self.label:<40} {self.pairs_per_s:8.1f} pairs/s {rate:6.1f} MB/s"
                f"  ({self.seconds:6.2f} s){cpu}{rss}{jobs}")


def corpus_file(data_dir: Path, megabytes: int, seed: int) -> Path:
    path = data_dir / f"audit-v{realistic.CORPUS_VERSION}-seed{seed}-{megabytes}mb.jsonl"
    if not path.exists():
        print(f"generating {megabytes} MB into {path} (cached for later runs) ...", flush=True)
        realistic.write_jsonl(path, target_bytes=megabytes * 1_000_000, seed=seed, nights=3,
                           bad_records=8)
    return path


def small_corpus_file(data_dir: Path, megabytes: int, seed: int) -> Path:
    """Many records of 1-5 KB: per-record overhead dominates."""
    path = data_dir / f"audit-small-v{realistic.CORPUS_VERSION}-seed{seed}-{megabytes}mb.jsonl"
    if not path.exists():
        print(f"generating {megabytes} MB of 1-5 KB records into {path} ...", flush=True)
        realistic.write_lines(path, corpus.small_lines(megabytes * 1_000_000, seed))
    return path


def big_corpus_file(data_dir: Path, record_mb: int, records: int, seed: int) -> Path:
    """A few records of about `record_mb` MB each (memory per record)."""
    name = f"audit-big-v{realistic.CORPUS_VERSION}-seed{seed}-{records}x{record_mb}mb.jsonl"
    path = data_dir / name
    if not path.exists():
        print(f"generating {records} records of about {record_mb} MB into {path} ...", flush=True)
        realistic.write_lines(path, corpus.big_lines(record_mb * 1_000_000, records, seed))
    return path


def parquet_copy(path: Path, page_rows: int | None) -> Path:
    """The JSONL corpus as Parquet in one row group, `before`/`after` as JSON text columns.

    `page_rows=None` keeps pyarrow's default layout, where a data page holds up to 1,024 rows
    (so all of these); `page_rows=1` gives each row its own pages."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    suffix = "" if page_rows is None else f"-pages{page_rows}"
    target = path.with_name(f"{path.stem}{suffix}.parquet")
    if not target.exists():
        rows = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
        for row in rows:
            row["before"], row["after"] = (orjson.dumps(row[key]).decode() for key in ("before", "after"))
        options = {} if page_rows is None else {"write_batch_size": page_rows}
        pq.write_table(pa.Table.from_pylist(rows), target, row_group_size=len(rows), **options)
    return target


def one_record(path: Path) -> Path:
    """The corpus's first line alone: the fixed cost of a run."""
    target = path.with_name(f"{path.stem}-first.jsonl")
    if not target.exists():
        with open(path, "rb") as handle:
            target.write_bytes(handle.readline())
    return target


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


def orjson_rate(path: Path, repeat: int, warm: bool = True) -> Measured:
    """Bare `orjson.loads` of every line, one core: best of `repeat` after a warm-up pass
    (`warm`; wall and CPU time, each the best)."""
    best = float("inf")
    cpus: list[float] = []
    pairs = 0
    for _ in range(repeat + (1 if warm else 0)):
        pairs = 0
        start, start_cpu = time.perf_counter(), time.process_time()
        with open(path, "rb") as handle:
            for line in handle:
                with contextlib.suppress(orjson.JSONDecodeError):
                    orjson.loads(line)
                pairs += 1
        best = min(best, time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    best_cpu = min(cpus)
    return Measured("orjson.loads only (1 core)", best, pairs, path.stat().st_size / 1e6, cpu_s=best_cpu,
                    cpu_noise=results.spread((cpus[1:] if warm else cpus) or cpus))  # after the warm-up


def interleaved_check_only(path: Path, contract: Path, scratch: Path,
                           repeat: int) -> tuple[Measured, float, Measured, float]:
    """`repeat` rounds of (bare `orjson.loads`, strict parsing, a check-only `--jobs 1`
    audit) back to back, after an untimed `orjson` pass: the best of each, and the ratio's
    noise, the spread of the rounds' audit / orjson CPU times. In separate series a slow
    minute under the audits alone moved the ratio by a third between full runs (0.06x and
    0.05x on the 1-5 KB records, each with a 2 % spread of its own); a round's three share a
    moment."""
    orjson_rate(path, 0)  # warm-up: the file in the page cache, orjson's caches
    bases, stricts, audits = [], [], []
    for _ in range(repeat):
        bases.append(orjson_rate(path, 1, warm=False))
        stricts.append(strict_seconds(path, 1))
        audits.append(audit_once("audit check-only, --jobs 1", path, contract, 1, False, scratch))
    cpus = [base.cpu_s or base.seconds for base in bases]
    best = min(bases, key=lambda base: base.seconds)
    base = Measured(best.label, best.seconds, best.pairs, best.megabytes, cpu_s=min(cpus),
                    cpu_noise=results.spread(cpus))
    ratios = [(audit.cpu_s or audit.seconds) / cpu for audit, cpu in zip(audits, cpus, strict=True)]
    return base, min(stricts), _fastest(audits), results.spread(ratios)


def strict_seconds(path: Path, repeat: int) -> float:
    """CPU seconds of reading and strictly parsing every line in this process, nothing else:
    best of `repeat`."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        with open(path, "rb") as handle:
            for line in handle:
                with contextlib.suppress(jsonio.JSONProblem):
                    jsonio.loads_strict(line)
        best = min(best, time.process_time() - start)
    return best


def process_table() -> dict[int, list[bytes]]:
    """Every process's `/proc/PID/stat` fields after its command name (field 1 is the parent
    id, 11 and 12 the user and system CPU ticks)."""
    table: dict[int, list[bytes]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                table[int(entry)] = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
    return table


def children_cpu(parent: int) -> float:
    """CPU seconds used so far by the live direct children of `parent`."""
    tick = os.sysconf("SC_CLK_TCK")
    return sum((int(fields[11]) + int(fields[12])) / tick
               for fields in process_table().values() if int(fields[1]) == parent)


def _tree_rss(root: int, with_root: bool = True) -> int:
    """Resident bytes of `root` and all its descendants (Linux /proc); without `root` itself
    when not `with_root` (the launcher, which is not part of the audit)."""
    children: dict[int, list[int]] = {}
    for pid, fields in process_table().items():
        children.setdefault(int(fields[1]), []).append(pid)
    total, stack = 0, [root] if with_root else list(children.get(root, ()))
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                total += int(handle.read().split()[1]) * _PAGE
        except OSError:
            pass
        stack.extend(children.get(pid, ()))
    return total


def _effective_jobs(out: Path) -> int | None:
    """`runs.n_jobs` of the run just written: the number of jobs it really used."""
    import pyarrow.parquet as pq

    files = sorted((out / "runs").rglob("*.parquet"))
    if not files:
        return None
    value = pq.read_table(files[-1], columns=["n_jobs"]).column("n_jobs")[0].as_py()
    return int(value) if value is not None else None


_LAUNCHER = """
import os, sys, time
start = time.perf_counter()
child = os.fork()
if child == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(child, 0)
report = f"{time.perf_counter() - start} {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss}"
os.write(int(os.environ["BENCH_REPORT_FD"]), report.encode())
sys.exit(os.waitstatus_to_exitcode(status))
"""
"""Runs one audit and reports its wall time, CPU time and exact peak resident size (`wait4`).

A tiny process forks the audit, so Linux's `ru_maxrss` of the audit starts from the launcher's
few MB, not from the size of the benchmark that would otherwise fork it (Linux carries a
parent's size into its child's `ru_maxrss` across exec); its own start is not timed."""


def audit_once(label: str, path: Path, contract: Path, jobs: int, mutate: bool, scratch: Path) -> Measured:
    """One audit: wall and CPU time (of the audit and its workers), and its peak memory: the
    exact peak of the audit process itself, or, when higher, the peak of the whole process tree
    (the audit and its workers at the same moment) sampled from /proc every 20 ms."""
    out = scratch / "out"
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "frayproof_audit", "audit", str(path), "--contract", str(contract),
               "--out", str(out), "--jobs", str(jobs), "-q", "--fail-on", "none", "--format", "json"]
    if not mutate:
        command.append("--no-mutate")
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-S", "-c", _LAUNCHER, *command], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, pass_fds=(write_end,),
            env={**os.environ, "BENCH_REPORT_FD": str(write_end)},
        )
        os.close(write_end)
        peak = 0
        while process.poll() is None:
            peak = max(peak, _tree_rss(process.pid, with_root=False))
            time.sleep(0.02)
        stdout, stderr = process.communicate()
        report = os.read(read_end, 256).split()
    finally:
        os.close(read_end)
    if process.returncode != 0 or len(report) != 3:
        raise RuntimeError(f"audit exited {process.returncode}: {stderr.decode()[-2000:]}")
    elapsed, cpu, max_rss_kb = float(report[0]), float(report[1]), int(report[2])
    peak = max(peak, max_rss_kb * 1024)  # Linux reports kilobytes
    summary = json.loads(stdout)
    return Measured(label, elapsed, summary["pairs"], path.stat().st_size / 1e6, peak, cpu,
                    _effective_jobs(out))


def audit_run(label: str, path: Path, contract: Path, jobs: int, mutate: bool, scratch: Path,
              repeat: int) -> Measured:
    """Best of `repeat` runs (the lowest wall and CPU times; the highest peak RSS of them all)."""
    return _fastest([audit_once(label, path, contract, jobs, mutate, scratch) for _ in range(repeat)])


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def machine_speedup(jobs: int) -> float:
    """What this machine gives right now: pure-Python CPU work, `jobs` processes vs one.

    The serial time is the median piece's time times the number of pieces (one piece slowed by
    a neighbour's burst would otherwise inflate it), and the result is at most `jobs`: on this
    shared VM single passes measured up to 2.4x on two cores."""
    import joblib

    work = [3_000_000] * (2 * jobs)
    pieces = []
    for n in work:
        start = time.perf_counter()
        _burn(n)
        pieces.append(time.perf_counter() - start)
    serial = statistics.median(pieces) * len(work)
    with joblib.parallel_config(backend="loky", n_jobs=jobs):
        joblib.Parallel()(joblib.delayed(_burn)(10) for _ in range(jobs))  # start the workers
        start = time.perf_counter()
        joblib.Parallel()(joblib.delayed(_burn)(n) for n in work)
        parallel = time.perf_counter() - start
    return min(serial / parallel, float(jobs))




_POOL_START = """
import os, sys, time
sys.path.insert(0, sys.argv[2])
from benchmarks.bench_audit import children_cpu
import frayproof_audit.cli  # what an audit's process has imported when it starts its pool
import frayproof_audit.corpus.run.audit_run
from frayproof_audit.corpus.run.executor import Executor
from benchmarks.pool_probe import worker_state
jobs = int(sys.argv[1])
before = time.process_time()
executor = Executor("loky", jobs)
executor.start()
seen = set()
while len(seen) < jobs:  # a worker runs a task only once its start-up (the engine's import) is done
    executor.submit(worker_state, None, list(range(jobs)))
    seen.update(pid for pid, _ in executor.completed())
own = time.process_time() - before
children = children_cpu(os.getpid())
executor.close()
print(own + children)
"""


def _cli_environment() -> dict[str, str]:
    """The environment `frayproof-audit` gives itself (and so its pool) before its imports."""
    return {"OPENBLAS_NUM_THREADS": "1", **os.environ}


def pool_start_cpu(jobs: int, repeat: int) -> float:
    """CPU seconds it takes to start a pool of `jobs` loky workers ready to audit (joblib's
    import in the parent, loky's resource tracker, each worker's interpreter and imports): the
    price of every parallel run that a run in one process does not pay. Best of `repeat`, each
    in a fresh process."""
    best = float("inf")
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", _POOL_START, str(jobs), str(REPO)],
                              capture_output=True, check=True, text=True, env=_cli_environment())
        best = min(best, float(done.stdout.split()[-1]))
    return best


@dataclass(frozen=True, slots=True)
class SpeedUp:
    """`--jobs 1` against `--jobs N` in interleaved rounds, each round with its own ceiling."""

    one: Measured
    """The fastest `--jobs 1` run (highest peak RSS of all rounds)."""
    many: Measured
    """The fastest `--jobs N` run (highest peak RSS of all rounds)."""
    speedups: tuple[float, ...]
    ceilings: tuple[float, ...]
    limits: tuple[float, ...]
    """Per round: the speed-up a perfect scheduler could reach, as a share of that round's ceiling."""
    discarded: tuple[float, ...] = ()
    """The speed-ups of rounds run again: above the number of workers (`IMPOSSIBLE_SPEEDUP`)."""
    waited: tuple[float, ...] = ()
    """Wall / CPU time of the `--jobs 1` runs of rounds run again (`WAITED_FOR_A_CORE`)."""

    def rerun_note(self, jobs: int) -> str:
        """Which rounds were run again and why ("" when none was)."""
        reasons = _rerun_reasons(self.discarded, self.waited, jobs)
        return f" ({reasons})" if reasons else ""

    @property
    def of_ceiling(self) -> float:
        """The verdict: the median over rounds of speed-up / ceiling (each round's own)."""
        return statistics.median(s / c for s, c in zip(self.speedups, self.ceilings, strict=True))

    @property
    def limit(self) -> float:
        return statistics.median(self.limits)

    @property
    def noise(self) -> float:
        """How far the rounds' speed-ups / ceilings spread: the best over the median, less one
        (`results.spread` of their inverses)."""
        return results.spread([c / s for s, c in zip(self.speedups, self.ceilings, strict=True) if s > 0])


def _rerun_reasons(discarded: Sequence[float], waited: Sequence[float], jobs: int) -> str:
    parts = []
    if discarded:
        parts.append(f"{len(discarded)} run again, above {jobs} workers: "
                     + ", ".join(f"{d:.2f}x" for d in discarded))
    if waited:
        parts.append(f"{len(waited)} run again, its --jobs 1 run waiting for a core: wall "
                     + ", ".join(f"{w:.2f}x" for w in waited) + " its CPU")
    return "; ".join(parts)


IMPOSSIBLE_SPEEDUP = 1.1
"""A round whose speed-up is above this times its workers measured the machine, not the
audit, and is run again (at most as many times as there are rounds)."""
WAITED_FOR_A_CORE = 1.15
"""A round whose `--jobs 1` run took more than this times its CPU time in wall time measured
the machine too, and is run again (same budget): one process doing CPU work waits for nothing
but a core (its wall time is 1.00-1.02x its CPU on a quiet machine, the dataset's fsyncs
included)."""


def speedup_rounds(label: str, path: Path, contract: Path, jobs: int, mutate: bool, scratch: Path,
                   rounds: int, fixed_s: float, start_cpu: float) -> SpeedUp:
    """`rounds` rounds of: the machine's ceiling, a `--jobs 1` run, a `--jobs N` run and the
    ceiling again, back to back; the round's ceiling is the mean of the two that bracket its runs.

    On a shared machine the speed of a core drifts by 20-40 % within minutes, so the best
    `--jobs 1` run and the best `--jobs N` run of separate series can come from different
    moments; a round's measurements share one. One short ceiling measurement alone swung from
    1.19x to 2.0x within a run, below the speed-up measured next to it in some rounds, hence
    the two. The limit of a round is the speed-up no
    scheduler could beat, from two bounds on the `--jobs N` time that both hold: Amdahl's law
    (a run's fixed cost `fixed_s` stays serial, the rest goes at most `ceiling` times as fast),
    and the CPU to be done (the `--jobs 1` run's plus `start_cpu`, the CPU of starting the pool)
    done at most `ceiling` times as fast as one process does it:
    T1 / max(fixed + (T1 - fixed) / ceiling, (T1 + start) / ceiling)."""
    ones: list[Measured] = []
    manys: list[Measured] = []
    ceilings: list[float] = []
    limits: list[float] = []
    discarded: list[float] = []
    waited: list[float] = []
    while len(ones) < rounds and len(discarded) + len(waited) < rounds:
        ahead = machine_speedup(jobs)
        one = audit_once(f"{label}, --jobs 1", path, contract, 1, mutate, scratch)
        many = audit_once(f"{label}, --jobs {jobs}", path, contract, jobs, mutate, scratch)
        ceiling = (ahead + machine_speedup(jobs)) / 2
        if one.seconds / many.seconds > jobs * IMPOSSIBLE_SPEEDUP:
            # more than N workers can give: the machine slowed down under one of the two runs
            # (seen: "6.21x of 1.60x" with two workers), so the round measured the machine
            discarded.append(one.seconds / many.seconds)
            continue
        if one.cpu_s and one.seconds > one.cpu_s * WAITED_FOR_A_CORE:
            # one process that spent its time waiting for a core: another process had it
            # (seen: check+mutate --jobs 1 at 7.81 s for 5.00 s of CPU, "2.09x of 1.89x")
            waited.append(one.seconds / one.cpu_s)
            continue
        ones.append(one)
        manys.append(many)
        ceilings.append(ceiling)
        serial = min(fixed_s, one.seconds)
        fastest = max(serial + (one.seconds - serial) / ceiling, (one.seconds + start_cpu) / ceiling)
        best_possible = one.seconds / fastest
        limits.append(best_possible / ceiling)
    if not ones:
        reasons = _rerun_reasons(discarded, waited, jobs)
        raise RuntimeError(f"{label}: every round measured the machine ({reasons})")
    speedups = tuple(one.seconds / many.seconds for one, many in zip(ones, manys, strict=True))
    return SpeedUp(_fastest(ones), _fastest(manys), speedups, tuple(ceilings), tuple(limits),
                   tuple(discarded), tuple(waited))


def share_of_limit(name: str, path: Path, contract: Path, scratch: Path, repeat: int, fixed_cpu: float,
                   strict: float, audit_cpu: float, noise: float, figures: dict[str, float | None]
                   ) -> results.Target:
    """Issue 28's form of the check-only goal: the audit's CPU against the strict-parsing
    limit's (fixed cost plus strict parsing), target 0.8; beside it the shares of an in-process
    run and the bound the engine's own indispensable work sets (`stage_shares`)."""
    shares = stage_shares.measure(path, contract, scratch, repeat)
    hashing = stage_shares.hashing_seconds(path, repeat)
    floor = fixed_cpu + stage_shares.floor_s(shares, strict, hashing)
    print(f"  where it goes, in process (CPU, the least of {repeat} runs): {shares.line()};"
          f" hashing the lines alone {hashing:.2f} s", flush=True)
    for stage, seconds in shares.stages.items():
        figures[f"{name} {stage_shares.STAGES[stage]} s"] = round(seconds, 3)
    figures[f"{name} rows and Parquet s"] = round(shares.rest_s, 3)
    return results.Target(
        f"check-only audit / its strict-parsing limit, {name} (CPU time)",
        (fixed_cpu + strict) / audit_cpu if audit_cpu else 0.0, TARGET_OF_LIMIT,
        limit=(fixed_cpu + strict) / floor, noise=noise,
        note=f"limit: the fixed cost {fixed_cpu:.2f} s, strict parsing {strict:.2f} s, hashing"
             f" {hashing:.2f} s, views {shares.stages['_load']:.2f} s and checks"
             f" {shares.stages['check_blamed']:.2f} s, with no repair, rows or Parquet at all")


def _fastest(runs: list[Measured]) -> Measured:
    best = min(runs, key=lambda run: run.seconds)
    peak = max(run.peak_rss or 0 for run in runs)
    cpus = [run.cpu_s or 0.0 for run in runs]
    return Measured(best.label, best.seconds, best.pairs, best.megabytes, peak, min(cpus), best.jobs,
                    results.spread(cpus), results.spread([run.seconds for run in runs]))


_ARROW_PEAK = """
import sys
import pyarrow as pa, pyarrow.parquet as pq
from frayproof_audit.corpus.inputs.shard_reader import _BUFFER, batch_rows
parquet = pq.ParquetFile(open(sys.argv[1], "rb"), pre_buffer=False, buffer_size=_BUFFER)
for group in range(parquet.metadata.num_row_groups):
    meta = parquet.metadata.row_group(group)
    for batch in parquet.iter_batches(batch_size=batch_rows(meta.total_byte_size, meta.num_rows),
                                      row_groups=[group]):
        del batch
print(pa.default_memory_pool().max_memory())
"""


def arrow_decode_peak(path: Path) -> int:
    """Peak bytes of Arrow's memory pool while a fresh process only decodes `path` batch by
    batch as the shard reader does (no Python values): what Arrow's Parquet reader needs."""
    done = subprocess.run([sys.executable, "-c", _ARROW_PEAK, str(path)], capture_output=True,
                          check=True, text=True)
    return int(done.stdout.split()[-1])


def largest_record(path: Path) -> int:
    with open(path, "rb") as handle:
        return max((len(line) for line in handle), default=0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_audit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small corpora, one run each (smoke)")
    parser.add_argument("--megabytes", type=int, help=f"realistic corpus size (default {DEFAULT_MB})")
    parser.add_argument("--small-mb", type=int, help=f"1-5 KB records corpus size (default {SMALL_MB})")
    parser.add_argument("--big-mb", type=int, help=f"size of each big record (default {BIG_MB})")
    parser.add_argument("--jobs", type=int, default=2, help="workers for the parallel runs (default 2)")
    parser.add_argument("--repeat", type=int, help="runs per figure after the warm-up (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--no-mutation", action="store_true", help="skip the check+mutate runs")
    parser.add_argument("--no-large", action="store_true", help="skip the memory runs")
    parser.add_argument("--results", type=Path,
                        help="write the JSON results into this folder (python -m benchmarks: "
                        "benchmarks/results; never with --quick)")
    args = parser.parse_args(argv)
    ensure_compiled()  # every audit below is a fresh process: none may spend its time compiling
    quick = args.quick
    repeat = args.repeat or (1 if quick else 2)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    path = corpus_file(args.data_dir, args.megabytes or (QUICK_MB if quick else DEFAULT_MB), args.seed)
    small = small_corpus_file(args.data_dir, args.small_mb or (QUICK_SMALL_MB if quick else SMALL_MB),
                              args.seed)
    contract = realistic.write_contract(args.data_dir / "bench_contract.yaml")
    print(f"corpus {path.name}: {path.stat().st_size / 1e6:.0f} MB; small records {small.name}:"
          f" {small.stat().st_size / 1e6:.0f} MB; {os.cpu_count()} CPU(s);"
          f" python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.2f};"
          f" best of {repeat} after a warm-up run")
    ceiling = max(machine_speedup(args.jobs) for _ in range(repeat))
    print(f"  machine check: pure-Python CPU work, {args.jobs} processes vs 1: {ceiling:.2f}x"
          " (the ceiling for any speed-up here)", flush=True)
    targets: list[results.Target] = []
    figures: dict[str, float | None] = {"two_process_ceiling": round(ceiling, 2)}
    with tempfile.TemporaryDirectory(prefix="bench_audit-") as folder:
        scratch = Path(folder)
        first = one_record(path)
        audit_once("warm-up", first, contract, 1, False, scratch)
        fixed = audit_run("1-record input (fixed cost), --jobs 1", first, contract, 1, False, scratch,
                          repeat + 1)
        print(fixed.line(), flush=True)
        figures["fixed_cost_s"] = round(fixed.seconds, 3)
        targets.append(results.Target("fixed cost of a 1-record run", fixed.seconds, 0.5, unit="s",
                                      at_least=False, note=f"CPU {fixed.cpu_s or 0:.2f} s",
                                      noise=fixed.wall_noise))
        runs: dict[tuple[str, bool, int], Measured] = {}
        for name, corpus_path in (("realistic", path), ("1-5 KB records", small)):
            base, strict, measured, ratio_noise = interleaved_check_only(corpus_path, contract, scratch,
                                                                         repeat)
            print(f"  {name} corpus ({corpus_path.stat().st_size / 1e6:.0f} MB, {base.pairs} lines):")
            print(base.line())
            print(f"  {'strict parse only (1 core, CPU time)':<40} {base.pairs / strict:8.1f} pairs/s"
                  f"  (orjson.loads {base.pairs / (base.cpu_s or base.seconds):.1f} pairs/s CPU)", flush=True)
            runs[(name, False, 1)] = measured
            print(measured.line(), flush=True)
            # CPU time on both sides (with --jobs 1 the audit is one process): on a shared
            # machine wall time also counts the waits for a core. Wall time is printed beside.
            base_cpu, audit_cpu, fixed_cpu = base.cpu_s or base.seconds, measured.cpu_s or 0, fixed.cpu_s or 0
            limit = base_cpu / (fixed_cpu + strict)
            wall = measured.pairs_per_s / base.pairs_per_s
            targets.append(results.Target(
                f"audit --no-mutate --jobs 1 / orjson.loads, {name} (CPU time)",
                base_cpu / audit_cpu if audit_cpu else 0.0, TARGET_VS_ORJSON, limit=limit,
                noise=ratio_noise,
                note=f"wall clock {wall:.2f}x; limit: a 1-record run's fixed cost plus strict"
                     " parsing alone"))
            figures[f"{name} orjson pairs/s"] = round(base.pairs_per_s, 1)
            figures[f"{name} audit jobs 1 pairs/s"] = round(measured.pairs_per_s, 1)
            targets.append(share_of_limit(name, corpus_path, contract, scratch, repeat, fixed_cpu,
                                          strict, audit_cpu, ratio_noise, figures))
        start_cpu = pool_start_cpu(args.jobs, repeat)
        figures["pool_start_cpu_s"] = round(start_cpu, 3)
        print(f"  starting a pool of {args.jobs} workers ready to audit: {start_cpu:.2f} s of CPU"
              " (joblib's import, loky's resource tracker, each worker's interpreter and imports)")
        corpora = [("", path)] if args.no_large else [("", path), ("4x corpus ", repeated(path, 4))]
        modes = [False] if args.no_mutation else [False, True]
        for mutate in modes:
            for prefix, corpus_path in corpora:
                if mutate and prefix:
                    continue  # check+mutate on the 1x corpus already takes minutes per run
                mode = "check+mutate" if mutate else "check-only"
                rounds = speedup_rounds(f"{prefix}{mode}", corpus_path, contract, args.jobs, mutate,
                                        scratch, repeat, fixed.seconds, start_cpu)
                print(rounds.one.line(), flush=True)
                print(rounds.many.line(), flush=True)
                speedups = ", ".join(f"{s:.2f}x of {c:.2f}x" for s, c in zip(rounds.speedups, rounds.ceilings,
                                                                            strict=True))
                print(f"  speed-up {prefix}{mode} --jobs {args.jobs} vs 1 per round: {speedups};"
                      f" CPU used {(rounds.many.cpu_s or 0) / (rounds.one.cpu_s or 1):.2f}x of --jobs 1")
                runs[(prefix or "realistic", mutate, 1)] = rounds.one
                runs[(prefix or "realistic", mutate, args.jobs)] = rounds.many
                size = f"{corpus_path.stat().st_size / 1e6:.0f} MB"
                targets.append(results.Target(
                    f"{mode} --jobs {args.jobs} speed-up / the machine's two-process ceiling, {size}",
                    rounds.of_ceiling, 0.9, limit=rounds.limit, noise=rounds.noise,
                    note=f"median of {len(rounds.speedups)} interleaved rounds: {speedups}"
                         + rounds.rerun_note(args.jobs)
                         + f"; limit: the --jobs 1 run's work plus {start_cpu:.2f} s of CPU to start"
                           " the pool, at the ceiling's rate, and its fixed cost serial"))
                figures[f"{prefix}{mode} speed-up"] = round(statistics.median(rounds.speedups), 2)
        if not args.no_large:
            for jobs in (1, args.jobs):
                small_run, big = runs[("realistic", False, jobs)], runs[("4x corpus ", False, jobs)]
                growth = (big.peak_rss or 0) / (small_run.peak_rss or 1)
                note = f"effective jobs {small_run.jobs} and {big.jobs}"
                if small_run.jobs != big.jobs:
                    note += ": the runs used different numbers of workers"
                targets.append(results.Target(f"peak RSS 4x corpus / 1x, --jobs {jobs}", growth,
                                              TARGET_RSS_GROWTH, at_least=False, note=note))
            record_mb = args.big_mb or (QUICK_BIG_MB if quick else BIG_MB)
            giant = big_corpus_file(args.data_dir, record_mb, BIG_RECORDS, args.seed)
            biggest = largest_record(giant)
            jsonl_per_record = None
            for label, giant_path in (("JSONL", giant),
                                      ("Parquet, a page per row", parquet_copy(giant, 1)),
                                      ("Parquet, pyarrow's default pages", parquet_copy(giant, None))):
                measured = audit_run(f"{BIG_RECORDS} records of {biggest / 1e6:.0f} MB ({label}), --jobs 1",
                                     giant_path, contract, 1, False, scratch, repeat)
                print(measured.line(), flush=True)
                per_record = ((measured.peak_rss or 0) - (fixed.peak_rss or 0)) / biggest
                note = f"records of {biggest / 1e6:.0f} MB; constant {(fixed.peak_rss or 0) / 2**20:.0f} MiB"
                memory_limit: float | None = None
                if jsonl_per_record is None:
                    jsonl_per_record = per_record
                else:
                    # Arrow's pool cannot lend its pages to Python's values, so its own decoding
                    # peak comes on top of what the record needs once in Python (JSONL's figure).
                    arrow = arrow_decode_peak(giant_path) / biggest
                    memory_limit = arrow + jsonl_per_record
                    note += (f"; limit: Arrow's decoding peak {arrow:.2f}x the record (alone, no"
                             f" Python values) + JSONL's {jsonl_per_record:.2f}x")
                    print(f"  Arrow's pool peak decoding it alone: {arrow:.2f}x the largest record",
                          flush=True)
                figures[f"peak RSS per record {label}"] = round(per_record, 2)
                targets.append(results.Target(
                    f"peak RSS above a 1-record run / largest record ({label})", per_record,
                    TARGET_RSS_PER_RECORD, at_least=False, limit=memory_limit, note=note))
    jobs_used = sorted({run.jobs for run in runs.values() if run.jobs is not None})
    print(f"  effective jobs of the runs: {', '.join(map(str, jobs_used))}")
    results.save(results.results_dir(args.results, quick), "bench_audit", jobs_used, targets, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
