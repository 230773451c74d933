"""Mutated pairs per second: our fast path, our `verify=True` reference path, and frayproof.

Two corpora, both from `sessiongen.realistic`, in one run beside frayproof 0.1.0 on the same
pairs (`benchmarks.peer`: `.peer/bin/python` from `make peer`, or `$FRAYPROOF_PEER_PYTHON`):

* **the audit corpus** (issue #28's workload): the first 40 records of the realistic corpus
  `bench_audit` audits (`realistic.iter_lines(seed=0)`: 307 KB per record on average, a quarter
  of them from buggy compactors whose baseline fails, as in a real night), judged by
  `BENCH_CONTRACT` (pins, retention, leading-only structure) as the issue measured them:
  `run_mutations(before, lambda _: after, contract)` on the parsed lists, and the corpus
  audit's mutation phase, `mutate_pair(before, after, contract, baseline=...)` on loaded pairs
  whose check already ran (what a worker calls). Targets: >= 400 pairs/s and >= 80x frayproof.
* **good pairs** (`--pairs`, `--seed`): pairs compacted by good strategies only (every baseline
  passes, so every mutant is judged), from JSON bytes to report: fast path, `run_mutations`,
  `verify=True`. Target: fast path >= 50x frayproof (floor 10x).

Times are CPU seconds of the measuring process (the machine is shared: wall time counts waits
for a core), best of `--repeat` passes after an untimed warm-up, ours run before and after
frayproof's so that a drift of the machine shows in our own spread; each target records that
spread as its noise (`benchmarks.regress`). Per-pair caught/survived/skipped counts of both
tools are compared, so the rates are for identical results. A full run also measures one huge
record per size (`--huge` defaults, `benchmarks.huge_mutate`).

    python -m benchmarks.bench_mutate [--quick] [--pairs 40] [--seed 7] [--repeat 5] [--no-peer]
    python -m benchmarks.bench_mutate --huge 1000,4000,16000 [--repeat 2] [--budget N]
        [--contracts all | audit,minimal,opt-in openai-chat,opt-in anthropic,...]

`--huge` measures only the huge records: seconds, mutants, microseconds per mutant and peak RSS,
and whether the cost stays linear in the length.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make `frayproof_audit`/`benchmarks` importable
    sys.path.insert(0, str(REPO))

from benchmarks import huge_mutate, results  # noqa: E402
from benchmarks.peer import PeerError, peer_python, run_peer  # noqa: E402
from frayproof_audit.contract import Contract, parse_contract  # noqa: E402
from frayproof_audit.engine import check_loaded  # noqa: E402
from frayproof_audit.mutate import mutate_pair, run_mutations  # noqa: E402
from frayproof_audit.snapshot import load_wire, parse_snapshot_bytes  # noqa: E402
from sessiongen import realistic  # noqa: E402

DEFAULT_PAIRS = 40
QUICK_PAIRS = 6
AUDIT_PAIRS = 40
"""The issue's workload: the audit corpus's first 40 records."""
HUGE_SIZES = (1_000, 16_000)
HUGE_REPEAT = 2

Pair = tuple[list[Any], list[Any]]
Counts = list[int]


# ------------------------------------------------------------------ pairs

def corpus_pairs(count: int, seed: int, local: bool = False,
                 max_result: int = 20_000) -> tuple[list[Pair], str, str]:
    """(pairs, contract YAML, source name): records from `sessiongen.realistic` compacted by its
    good compactors, or with `local` bare sessions with tool results of at most `max_result`
    characters, compacted to a summary and the last 2-4 closed exchanges."""
    if local:
        return (local_pairs(count, seed, max_result), realistic.BENCH_CONTRACT,
                f"sessiongen.realistic sessions (results 50 B-{max_result} B)")
    rng = random.Random(seed)
    good = list(realistic.GOOD_COMPACTORS)
    pairs = []
    for _ in range(count):
        record = realistic.generate_pair(rng, compactor=rng.choice(good))
        pairs.append((record["before"], record["after"]))
    return pairs, realistic.BENCH_CONTRACT, "sessiongen.realistic"


def local_pairs(count: int, seed: int, max_result: int = 20_000) -> list[Pair]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        before = realistic.generate_session(rng, realistic.session_length(rng), max_result=max_result)
        pairs.append((before, realistic.summary_keep_last_n(before, rng)))
    return pairs


def audit_corpus_pairs(count: int = AUDIT_PAIRS, seed: int = 0) -> list[Pair]:
    """The first `count` records of the realistic corpus `bench_audit` audits (its default seed
    0: `realistic.iter_lines` draws the same records whatever the corpus size, the first bad
    line comes after 12.5 MB of the 200 MB file), as parsed lists."""
    lines = itertools.islice(realistic.iter_lines(n_pairs=count, seed=seed), count)
    return [(record["before"], record["after"]) for record in map(orjson.loads, lines)]


# ------------------------------------------------------------------ timing

Passes = tuple[list[float], list[Counts]]
"""The CPU seconds of each timed pass, and the per-pair counts of the last one."""


def _passes(repeat: int, run: Callable[[], list[Counts]], warm: bool = True) -> Passes:
    """`repeat` timed passes (CPU time of this process), after an untimed warm-up pass when
    `warm` (imports, caches and the allocator settle before anything counts)."""
    if warm:
        run()
    times, counts = [], []
    for _ in range(repeat):
        gc.collect()  # each pass starts from the same heap: the last one's garbage is not its
        start = time.process_time()
        counts = run()
        times.append(time.process_time() - start)
    return times, counts


def _joined(first: Passes, second: Passes | None) -> Passes:
    """Passes before and after frayproof's, as one series (a drift shows in its spread)."""
    if second is None:
        return first
    if first[1] != second[1]:
        raise AssertionError("our counts changed between passes")
    return first[0] + second[0], first[1]


def _best_of(repeat: int, run: Callable[[], list[Counts]]) -> tuple[float, list[Counts]]:
    times, counts = _passes(repeat, run, warm=repeat > 1)
    return min(times), counts


def time_ours(blobs: Sequence[tuple[bytes, bytes]], contract: Contract, repeat: int,
              verify: bool) -> tuple[float, list[Counts]]:
    def run() -> list[Counts]:
        counts = []
        for before, after in blobs:
            report = mutate_pair(load_wire(parse_snapshot_bytes(before)),
                                 load_wire(parse_snapshot_bytes(after)), contract, verify=verify)
            counts.append([report.caught, report.survived, report.skipped])
        return counts

    return _best_of(repeat, run)


def time_api(pairs: Sequence[Pair], contract: Contract, repeat: int) -> tuple[float, list[Counts]]:
    def run() -> list[Counts]:
        counts = []
        for before, after in pairs:
            report = run_mutations(before, contract=contract, after=after)
            counts.append([report.caught, report.survived, report.skipped])
        return counts

    return _best_of(repeat, run)


def target_run(pairs: Sequence[Pair], contract: Contract) -> Callable[[], list[Counts]]:
    """One pass of the issue's measurement: `run_mutations(before, lambda _: after, contract)`."""
    def run() -> list[Counts]:
        counts = []
        for before, after in pairs:
            report = run_mutations(before, _returning(after), contract)
            counts.append([report.caught, report.survived, report.skipped])
        return counts

    return run


def _returning(after: list[Any]) -> Callable[[list[Any]], list[Any]]:
    """`lambda _: after`: a target that returns the logged output."""
    return lambda _messages: after


def mutation_phase_run(pairs: Sequence[Pair], contract: Contract) -> Callable[[], list[Counts]]:
    """One pass of the corpus audit's mutation phase: `mutate_pair` on pairs loaded from JSON
    bytes and checked (as a worker has them; loading and checking are not timed), for the
    pairs that pass, with their baseline."""
    loaded = []
    for before, after in pairs:
        pair = (load_wire(parse_snapshot_bytes(orjson.dumps(before))),
                load_wire(parse_snapshot_bytes(orjson.dumps(after))))
        loaded.append((*pair, check_loaded(*pair, contract)))

    def run() -> list[Counts]:
        counts = []
        for before, after, baseline in loaded:
            if not baseline.passed:  # a worker mutates passing pairs only; the report says 0
                counts.append([0, 0, 0])
                continue
            report = mutate_pair(before, after, contract, baseline=baseline)
            counts.append([report.caught, report.survived, report.skipped])
        return counts

    return run


PEER_CODE = r"""
import gc, json, sys, time
from frayproof.mutate import run_mutations
pairs = json.load(open(sys.argv[1], encoding="utf-8"))
contract, repeat, warm = sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
def run():
    counts = []
    for before, after in pairs:
        report = run_mutations(before, lambda _messages, after=after: after, contract)
        counts.append([report.caught, report.survived, report.skipped])
    return counts
if warm:
    run()
times = []
for _ in range(repeat):
    gc.collect()
    start = time.process_time()
    counts = run()
    times.append(time.process_time() - start)
print(json.dumps({"times": times, "counts": counts}))
"""


def peer_passes(pairs: Sequence[Pair], contract_text: str, repeat: int) -> Passes | str:
    """frayproof's passes (CPU time, after a warm-up pass when `repeat` > 1) and counts, or
    why it was skipped."""
    if peer_python() is None:
        return "no peer environment (`make peer`, or set FRAYPROOF_PEER_PYTHON)"
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "pairs.json"
        data.write_bytes(orjson.dumps(list(pairs)))
        contract = Path(folder) / "contract.yaml"
        contract.write_text(contract_text, encoding="utf-8")
        try:
            result = run_peer(PEER_CODE, [str(data), str(contract), str(repeat),
                                          "1" if repeat > 1 else "0"])
        except PeerError as exc:
            return str(exc)
    return [float(t) for t in result["times"]], result["counts"]


def time_frayproof(pairs: Sequence[Pair], contract_text: str,
                   repeat: int) -> tuple[float, list[Counts]] | str:
    """frayproof's best pass and counts, or why it was skipped."""
    passes = peer_passes(pairs, contract_text, repeat)
    return passes if isinstance(passes, str) else (min(passes[0]), passes[1])


# ------------------------------------------------------------------ report

def _rate(count: int, times: Sequence[float]) -> str:
    return (f"{count / min(times):9.1f} pairs/s  (best of {len(times)}, "
            f"noise {100 * results.spread(times):.1f}%)")


def audit_corpus(repeat: int, no_peer: bool, count: int = AUDIT_PAIRS) -> list[results.Target]:
    """The issue's workload against frayproof in one run (module docstring); its targets."""
    pairs = audit_corpus_pairs(count)
    contract = realistic.bench_contract()
    size = sum(len(orjson.dumps(before)) + len(orjson.dumps(after)) for before, after in pairs)
    print(f"audit corpus: the first {len(pairs)} records of the realistic corpus (seed 0), "
          f"{size / len(pairs) / 1e3:.0f} KB per record; BENCH_CONTRACT; CPU time, best of "
          f"{2 * repeat} (half before and half after frayproof's), warm-up first, jobs 1")
    api, phase = target_run(pairs, contract), mutation_phase_run(pairs, contract)
    first, first_phase = _passes(repeat, api), _passes(repeat, phase)
    peer = "--no-peer" if no_peer else peer_passes(pairs, realistic.BENCH_CONTRACT, repeat)
    ours = _joined(first, _passes(repeat, api, warm=False))
    phased = _joined(first_phase, _passes(repeat, phase, warm=False))
    judged = [counts for counts in ours[1] if sum(counts)]
    print(f"  run_mutations(before, lambda _: after):  {_rate(len(pairs), ours[0])}  "
          f"({len(judged)} passing pairs, {sum(map(sum, ours[1]))} mutants)")
    print(f"  corpus mutation phase (mutate_pair):     {_rate(len(pairs), phased[0])}")
    if [c for c in phased[1] if sum(c)] != judged:
        raise AssertionError("the mutation phase and run_mutations disagree")
    rate = len(pairs) / min(ours[0])
    targets = [results.Target("audit corpus: run_mutations pairs/s", rate, 400.0,
                              unit="pairs/s", noise=results.spread(ours[0]))]
    if isinstance(peer, str):
        print(f"  frayproof 0.1.0: skipped: {peer}")
        return targets
    print(f"  frayproof 0.1.0 run_mutations:           {_rate(len(pairs), peer[0])}")
    if peer[1] != ours[1]:
        raise AssertionError("per-pair caught/survived/skipped differ from frayproof's")
    peer_noise = results.spread(peer[0])
    for goal, times in (("audit corpus: run_mutations / frayproof", ours[0]),
                        ("audit corpus: corpus mutation phase / frayproof run_mutations",
                         phased[0])):
        ratio = min(peer[0]) / min(times)
        print(f"  {goal.split(': ', 1)[1] + ':':<40} {ratio:9.1f}x  (target >= 80x "
              f"{'met' if ratio >= 80 else 'NOT met'})")
        targets.append(results.Target(goal, ratio, 80.0, noise=results.spread(times) + peer_noise,
                                      note="identical counts"))
    return targets


def good_pairs(count: int, seed: int, repeat: int, no_peer: bool, local: bool,
               max_result: int) -> tuple[list[results.Target], dict[str, Any]] | None:
    """The good-pairs corpus (module docstring); None when our paths disagree."""
    pairs, contract_text, source = corpus_pairs(count, seed, local, max_result)
    contract = parse_contract(contract_text, "<benchmark contract>")
    blobs = [(orjson.dumps(before), orjson.dumps(after)) for before, after in pairs]
    size = sum(len(b) + len(a) for b, a in blobs)
    messages = sum(len(after) for _, after in pairs)
    print(f"good pairs: {len(pairs)} pairs from {source}: {size / 1e6:.1f} MB, "
          f"{messages} output messages (mean {messages / len(pairs):.0f}); "
          f"CPU time, best of {repeat}{' after a warm-up' if repeat > 1 else ''}, jobs 1")

    def fast_run() -> list[Counts]:
        counts = []
        for before, after in blobs:
            report = mutate_pair(load_wire(parse_snapshot_bytes(before)),
                                 load_wire(parse_snapshot_bytes(after)), contract)
            counts.append([report.caught, report.survived, report.skipped])
        return counts

    fast_times, fast_counts = _passes(repeat, fast_run, warm=repeat > 1)
    fast = min(fast_times)
    mutants = sum(sum(c) for c in fast_counts)
    print(f"  fast path (bytes -> report):    {len(pairs) / fast:9.1f} pairs/s  "
          f"({mutants / fast:,.0f} mutants/s, {mutants} mutants)")
    api, api_counts = time_api(pairs, contract, repeat)
    print(f"  fast path via run_mutations:    {len(pairs) / api:9.1f} pairs/s  "
          "(Python lists, validated in place)")
    slow, slow_counts = time_ours(blobs, contract, repeat, verify=True)
    print(f"  verify=True (reference path):   {len(pairs) / slow:9.1f} pairs/s")
    if not fast_counts == api_counts == slow_counts:
        print("  MISMATCH between our paths", file=sys.stderr)
        return None
    figures: dict[str, Any] = {"pairs": len(pairs), "repeat": repeat,
                               "pairs_per_s": round(len(pairs) / fast, 1)}
    peer = "--no-peer" if no_peer else peer_passes(pairs, contract_text, repeat)
    if isinstance(peer, str):
        print(f"  frayproof 0.1.0: skipped: {peer}")
        return [], figures
    seconds = min(peer[0])
    print(f"  frayproof 0.1.0 run_mutations:  {len(pairs) / seconds:9.1f} pairs/s")
    ratio = seconds / fast
    print(f"  fast / frayproof:               {ratio:9.1f}x  (target >= 50x "
          f"{'met' if ratio >= 50 else 'NOT met'}; floor 10x {'met' if ratio >= 10 else 'NOT met'})")
    print(f"  run_mutations / frayproof:      {seconds / api:9.1f}x")
    print(f"  verify / frayproof:             {seconds / slow:9.1f}x")
    agree = peer[1] == fast_counts
    print(f"  per-pair caught/survived/skipped identical to frayproof: {'yes' if agree else 'NO'}")
    if not agree:
        return None
    figures["frayproof_pairs_per_s"] = round(len(pairs) / seconds, 1)
    return [results.Target("mutation testing, pairs/s / frayproof run_mutations", ratio, 50.0,
                           note=f"{mutants / fast:,.0f} mutants/s; identical counts",
                           noise=results.spread(fast_times) + results.spread(peer[0]))], figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_mutate",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few pairs, one pass each")
    parser.add_argument("--pairs", type=int, default=None,
                        help=f"good pairs to mutate (default {DEFAULT_PAIRS}, quick {QUICK_PAIRS})")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=None,
                        help="timed passes per contender, best counts (default 5, quick 1; "
                        "--huge: default 1)")
    parser.add_argument("--no-peer", action="store_true", help="skip frayproof")
    parser.add_argument("--no-audit-corpus", action="store_true",
                        help="skip the audit corpus (issue #28's workload)")
    parser.add_argument("--local", action="store_true",
                        help="bare generated sessions (capped by --max-result) instead of records")
    parser.add_argument("--max-result", type=int, default=20_000, metavar="BYTES",
                        help="largest tool result with --local (default 20000)")
    parser.add_argument("--huge", default=None, metavar="N,N,...",
                        help="time one generated record of each size (messages) instead")
    parser.add_argument("--budget", type=int, default=None, metavar="N",
                        help="with --huge: max_mutants per pair (default: no budget)")
    parser.add_argument("--contracts", default=",".join(huge_mutate.CONTRACTS), metavar="NAME,...",
                        help="with --huge: contracts to run, of "
                        f"{', '.join(huge_mutate.ALL_CONTRACTS)}, or all (default: %(default)s)")
    parser.add_argument("--results", type=Path,
                        help="write the JSON results into this folder (python -m benchmarks: "
                        "benchmarks/results; never with --quick); then the huge records are "
                        f"measured too ({','.join(map(str, HUGE_SIZES))}, every contract)")
    options = parser.parse_args(argv)
    folder = results.results_dir(options.results, options.quick)
    if options.huge is not None:
        sizes = [int(size) for size in options.huge.split(",") if size.strip()]
        names = [name.strip() for name in options.contracts.split(",") if name.strip()]
        if names == ["all"]:
            names = list(huge_mutate.ALL_CONTRACTS)
        unknown = [name for name in names if name not in huge_mutate.ALL_CONTRACTS]
        if unknown:
            parser.error(f"unknown contract(s) {', '.join(unknown)} "
                         f"(known: {', '.join(huge_mutate.ALL_CONTRACTS)})")
        return huge_mutate.run(sizes, options.repeat or 1, options.budget, results_folder=folder,
                               contracts=names)
    count = options.pairs or (QUICK_PAIRS if options.quick else DEFAULT_PAIRS)
    repeat = options.repeat or (1 if options.quick else 5)

    targets: list[results.Target] = []
    if not options.no_audit_corpus:
        targets += audit_corpus(repeat, options.no_peer, QUICK_PAIRS if options.quick else AUDIT_PAIRS)
    good = good_pairs(count, options.seed, repeat, options.no_peer, options.local,
                      options.max_result)
    if good is None:
        return 1
    targets += good[0]
    results.save(folder, "bench_mutate", 1, targets, good[1])
    if folder is not None:  # a full run: the huge records too, recorded beside
        print()
        return huge_mutate.run(HUGE_SIZES, HUGE_REPEAT, results_folder=folder,
                               contracts=list(huge_mutate.ALL_CONTRACTS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
