"""bench_capture: what `PairWriter.record()` costs an agent per compaction (issue #26), and what
eight writers at once sustain.

* **Per-pair overhead.** `record(before, after, compactor=, session_id=)` into a local folder,
  against the least a hand-written logger does for the same line: `orjson.dumps` of the same
  record and one `os.write` to an `O_APPEND` file. Both log the same pairs (realistic sessions
  from `sessiongen.realistic`, 10-80 messages, and small 3-message pairs), in interleaved batches;
  every call is timed. Printed: median and p99 per call of each, the overhead (record - bare,
  microseconds) and the ratio of medians. What `record` adds: the night folder and file, the
  `pair_id`, the RFC 3339 time, type checks, serializing the snapshots before the record
  (so they are captured when called) and the lock.
* **Eight writers.** Eight forked processes record at once into one folder (one thread each);
  the aggregate pairs/s and MB/s from the first start to the last finish, then every line is
  checked whole.

    python -m benchmarks.bench_capture [--quick] [--pairs 4000] [--results DIR]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make `frayproof_audit`/`sessiongen` importable
    sys.path.insert(0, str(REPO))

from benchmarks import results  # noqa: E402
from frayproof_audit.capture import PairWriter  # noqa: E402
from sessiongen import realistic  # noqa: E402

TARGET_OVERHEAD_US = 15.0
"""Median microseconds `record` may add per realistic pair over the bare dumps + write."""
TARGET_SMALL_OVERHEAD_US = 15.0
TARGET_WRITERS_PAIRS_S = 20_000.0
"""Eight writers together, small pairs: far above any agent's compaction rate."""
NIGHT = "2025-06-02T10:00:00Z"


def realistic_pairs(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [realistic.generate_pair(rng, n_messages=rng.randint(10, 80)) for _ in range(count)]


def small_pairs(count: int) -> list[dict[str, Any]]:
    pairs = []
    for n in range(count):
        before = [{"role": "system", "content": "Never write to production."},
                  {"role": "user", "content": f"question {n}"},
                  {"role": "assistant", "content": f"answer {n}"}]
        pairs.append({"session_id": f"s{n % 50}", "compactor": "keep-last", "before": before,
                      "after": [before[0], before[2]]})
    return pairs


def time_record(writer: PairWriter, pairs: list[dict[str, Any]]) -> list[float]:
    times = []
    clock = time.perf_counter_ns
    for pair in pairs:
        start = clock()
        writer.record(pair["before"], pair["after"], compactor=pair["compactor"],
                      session_id=pair["session_id"])
        times.append((clock() - start) / 1000)
    return times


def time_bare(fd: int, pairs: list[dict[str, Any]]) -> list[float]:
    """The same lines by hand: the record dict (id and time given), dumped, one write."""
    times = []
    clock = time.perf_counter_ns
    for n, pair in enumerate(pairs):
        start = clock()
        line = orjson.dumps({"pair_id": f"bare-{n}", "session_id": pair["session_id"],
                             "compactor": pair["compactor"], "logged_at": NIGHT,
                             "before": pair["before"], "after": pair["after"]},
                            option=orjson.OPT_APPEND_NEWLINE)
        os.write(fd, line)
        times.append((clock() - start) / 1000)
    return times


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _difference_noise(per_round: list[float]) -> float:
    """The noise of an overhead measured as a difference of two medians, round by round: how
    far the median round sits above the best, relative to the median (`results.spread` divides
    by the best, which for a difference near zero is no scale). A difference that is small
    beside its rounds' swings is that noisy: the gate then allows it (more pairs per round, not a
    smaller noise, makes such a figure gateable)."""
    middle = statistics.median(per_round)
    return (middle - min(per_round)) / middle if middle > 0 else 0.0


def overhead(label: str, pairs: list[dict[str, Any]], rounds: int,
             scratch: Path) -> tuple[float, dict[str, Any]]:
    """Interleaved rounds of `record` and bare writes of the same pairs; per-call times."""
    record_times: list[float] = []
    bare_times: list[float] = []
    per_round: list[float] = []
    """Each round's overhead (its medians' difference): their spread is the figure's noise."""
    writer = PairWriter(scratch / f"{label}-record")
    fd = os.open(scratch / f"{label}-bare.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        time_record(writer, pairs[: max(1, len(pairs) // 10)])  # warm-up: folders, files, caches
        time_bare(fd, pairs[: max(1, len(pairs) // 10)])
        for round_ in range(rounds):
            if round_ % 2:  # alternately first
                bare = time_bare(fd, pairs)
                recorded = time_record(writer, pairs)
            else:
                recorded = time_record(writer, pairs)
                bare = time_bare(fd, pairs)
            record_times.extend(recorded)
            bare_times.extend(bare)
            per_round.append(statistics.median(recorded) - statistics.median(bare))
    finally:
        writer.close()
        os.close(fd)
    size = sum(len(orjson.dumps(p)) for p in pairs) / len(pairs)
    figures = {"pairs": len(pairs) * rounds, "mean_pair_bytes": round(size),
               "record_median_us": round(statistics.median(record_times), 2),
               "record_p99_us": round(p99(record_times), 2),
               "bare_median_us": round(statistics.median(bare_times), 2),
               "bare_p99_us": round(p99(bare_times), 2),
               "overhead_noise": round(_difference_noise(per_round), 3)}
    added = statistics.median(record_times) - statistics.median(bare_times)
    print(f"  {label:<10} ({len(pairs)} pairs x {rounds}, {size / 1000:.1f} KB each): "
          f"record median {figures['record_median_us']:.1f} us, p99 {figures['record_p99_us']:.1f} us; "
          f"bare dumps+write median {figures['bare_median_us']:.1f} us, p99 {figures['bare_p99_us']:.1f} us; "
          f"overhead {added:.1f} us ({statistics.median(record_times) / statistics.median(bare_times):.2f}x)")
    return added, figures


def _writer_process(root: str, pairs: list[dict[str, Any]], ready: Any, go: Any) -> None:
    writer = PairWriter(root)
    ready.release()
    go.wait()
    for pair in pairs:
        writer.record(pair["before"], pair["after"], compactor=pair["compactor"],
                      session_id=pair["session_id"], logged_at=NIGHT)
    writer.close()
    os._exit(0 if writer.errors == 0 else 1)


def eight_writers(pairs: list[dict[str, Any]], scratch: Path,
                  processes: int = 8) -> tuple[float, dict[str, Any]]:
    root = scratch / "eight"
    context = multiprocessing.get_context("fork")
    ready, go = context.Semaphore(0), context.Event()
    children = [context.Process(target=_writer_process, args=(str(root), pairs, ready, go))
                for _ in range(processes)]
    for child in children:
        child.start()
    for _ in children:
        ready.acquire()
    start = time.perf_counter()
    go.set()
    for child in children:
        child.join()
    seconds = time.perf_counter() - start
    assert all(child.exitcode == 0 for child in children), "a writer failed"
    total_lines = 0
    total_bytes = 0
    for path in root.rglob("*.jsonl"):
        data = path.read_bytes()
        assert data.endswith(b"\n")
        for line in data.splitlines():
            orjson.loads(line)  # every line whole
        total_lines += data.count(b"\n")
        total_bytes += len(data)
    expected = processes * len(pairs)
    assert total_lines == expected, (total_lines, expected)
    rate = expected / seconds
    print(f"  {processes} writer processes x {len(pairs)} pairs into one folder: {rate:,.0f} pairs/s, "
          f"{total_bytes / seconds / 1e6:.1f} MB/s ({seconds:.2f} s; every line whole)")
    shutil.rmtree(root, ignore_errors=True)
    return rate, {"processes": processes, "pairs": expected, "seconds": round(seconds, 3),
                  "mb_per_s": round(total_bytes / seconds / 1e6, 1)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_capture",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small runs (a smoke test)")
    parser.add_argument("--pairs", type=int, default=None, help="realistic pairs per round (default 400)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--results", type=Path,
                        help="write the JSON results into this folder (never with --quick)")
    args = parser.parse_args(argv)
    count = args.pairs or (40 if args.quick else 400)
    rounds = args.rounds or (1 if args.quick else 5)
    print(f"{os.cpu_count()} CPU(s); load average {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_capture-") as folder:
        scratch = Path(folder)
        added, real = overhead("realistic", realistic_pairs(count, args.seed), rounds, scratch)
        small_added, small = overhead("small", small_pairs(count * 5), rounds, scratch)
        rate, writers = eight_writers(small_pairs(500 if args.quick else 5000), scratch)
    results.save(results.results_dir(args.results, args.quick), "bench_capture", 1, [
        results.Target("record() overhead over orjson.dumps + write, realistic pairs (median per pair)",
                       added, TARGET_OVERHEAD_US, unit="us", at_least=False, noise=real["overhead_noise"],
                       note=f"record p99 {real['record_p99_us']:.0f} us, "
                            f"bare p99 {real['bare_p99_us']:.0f} us"),
        results.Target("record() overhead over orjson.dumps + write, 3-message pairs (median per pair)",
                       small_added, TARGET_SMALL_OVERHEAD_US, unit="us", at_least=False,
                       noise=small["overhead_noise"], note=f"record p99 {small['record_p99_us']:.0f} us, "
                            f"bare p99 {small['bare_p99_us']:.0f} us"),
        results.Target("8 writer processes into one folder, 3-message pairs", rate, TARGET_WRITERS_PAIRS_S,
                       unit="pairs/s", note=f"{writers['mb_per_s']} MB/s, every line whole"),
    ], {"realistic": real, "small": small, "writers": writers})
    return 0


if __name__ == "__main__":
    sys.exit(main())
