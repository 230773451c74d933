"""Mutated pairs per second: our fast path, our `verify=True` reference path, and frayproof.

Realistic pairs (10-400 message sessions with parallel tool calls, tool results of 50 B to
20 KB, compacted by good strategies so every baseline passes and all mutants are judged) come
from `sessiongen.realistic` (with `--local --max-result N`, bare sessions whose tool results are
capped at N characters, e.g. to measure tiny-result sessions). Each pair
is stored as JSON bytes. Our paths start from those bytes (strict parse, load, mutate); the
frayproof peer (`benchmarks.peer`: `.peer/bin/python` from `make peer`, or
`$FRAYPROOF_PEER_PYTHON`) gets the same pairs as parsed lists and times only its
`run_mutations` calls, inside its own process. Every contender gets the same number of passes
and its best pass counts. Per-pair counts of both tools are compared, so the figures are for
identical results. Target: fast path >= 50x frayproof (floor 10x).

    python -m benchmarks.bench_mutate [--quick] [--pairs 40] [--seed 7] [--repeat 2] [--no-peer]
    python -m benchmarks.bench_mutate --huge 1000,4000,16000 [--repeat 2] [--budget N]
        [--contracts all | audit,minimal,opt-in openai-chat,opt-in anthropic,...]

`--huge` measures instead one generated record per size (`benchmarks.huge_mutate`): seconds,
mutants, microseconds per mutant and peak RSS, and whether the cost stays linear in the length.
"""

from __future__ import annotations

import argparse
import math
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
from frayproof_audit.mutate import mutate_pair, run_mutations  # noqa: E402
from frayproof_audit.snapshot import load_wire, parse_snapshot_bytes  # noqa: E402
from sessiongen import realistic  # noqa: E402

DEFAULT_PAIRS = 40
QUICK_PAIRS = 6

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


# ------------------------------------------------------------------ timing

def _best_of(repeat: int, run: Callable[[], list[Counts]]) -> tuple[float, list[Counts]]:
    """Best of `repeat` timed passes, after one untimed warm-up pass when `repeat` > 1 (imports,
    caches and the allocator settle before anything counts)."""
    best, counts = math.inf, []
    if repeat > 1:
        run()
    for _ in range(repeat):
        start = time.perf_counter()
        counts = run()
        best = min(best, time.perf_counter() - start)
    return best, counts


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


PEER_CODE = r"""
import json, sys, time
from frayproof.mutate import run_mutations
pairs = json.load(open(sys.argv[1], encoding="utf-8"))
contract, repeat = sys.argv[2], int(sys.argv[3])
best = float("inf")
for _ in range(repeat):
    start = time.perf_counter()
    counts = []
    for before, after in pairs:
        report = run_mutations(before, lambda _messages, after=after: after, contract)
        counts.append([report.caught, report.survived, report.skipped])
    best = min(best, time.perf_counter() - start)
print(json.dumps({"seconds": best, "counts": counts}))
"""


def time_frayproof(pairs: Sequence[Pair], contract_text: str,
                   repeat: int) -> tuple[float, list[Counts]] | str:
    """frayproof's best pass and counts, or why it was skipped."""
    if peer_python() is None:
        return "no peer environment (`make peer`, or set FRAYPROOF_PEER_PYTHON)"
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "pairs.json"
        data.write_bytes(orjson.dumps(list(pairs)))
        contract = Path(folder) / "contract.yaml"
        contract.write_text(contract_text, encoding="utf-8")
        try:
            result = run_peer(PEER_CODE, [str(data), str(contract), str(repeat)])
        except PeerError as exc:
            return str(exc)
    return float(result["seconds"]), result["counts"]


# ------------------------------------------------------------------ report

def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_mutate",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few pairs, one pass each")
    parser.add_argument("--pairs", type=int, default=None,
                        help=f"pairs to mutate (default {DEFAULT_PAIRS}, quick {QUICK_PAIRS})")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=None,
                        help="passes per contender, best counts (default 2, quick 1)")
    parser.add_argument("--no-peer", action="store_true", help="skip frayproof")
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
                        "benchmarks/results; never with --quick)")
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
    repeat = options.repeat or (1 if options.quick else 2)

    pairs, contract_text, source = corpus_pairs(count, options.seed, options.local,
                                                options.max_result)
    contract = parse_contract(contract_text, "<benchmark contract>")
    blobs = [(orjson.dumps(before), orjson.dumps(after)) for before, after in pairs]
    size = sum(len(b) + len(a) for b, a in blobs)
    messages = sum(len(after) for _, after in pairs)
    print(f"{len(pairs)} pairs from {source}: {size / 1e6:.1f} MB, "
          f"{messages} output messages (mean {messages / len(pairs):.0f}); "
          f"best of {repeat}{' after a warm-up' if repeat > 1 else ''}, jobs 1")

    fast, fast_counts = time_ours(blobs, contract, repeat, verify=False)
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
        return 1

    peer = "--no-peer" if options.no_peer else time_frayproof(pairs, contract_text,
                                                                          repeat)
    if isinstance(peer, str):
        print(f"  frayproof 0.1.0: skipped: {peer}")
        return 0
    seconds, peer_counts = peer
    print(f"  frayproof 0.1.0 run_mutations:  {len(pairs) / seconds:9.1f} pairs/s")
    ratio = seconds / fast
    print(f"  fast / frayproof:               {ratio:9.1f}x  (target >= 50x "
          f"{'met' if ratio >= 50 else 'NOT met'}; floor 10x {'met' if ratio >= 10 else 'NOT met'})")
    results.save(folder, "bench_mutate", 1, [
        results.Target("mutation testing, pairs/s / frayproof run_mutations", ratio, 50.0,
                       note=f"{mutants / fast:,.0f} mutants/s; identical counts")],
        {"pairs": len(pairs), "repeat": repeat, "pairs_per_s": round(len(pairs) / fast, 1),
         "frayproof_pairs_per_s": round(len(pairs) / seconds, 1)})
    print(f"  run_mutations / frayproof:      {seconds / api:9.1f}x")
    print(f"  verify / frayproof:             {seconds / slow:9.1f}x")
    agree = peer_counts == fast_counts
    print(f"  per-pair caught/survived/skipped identical to frayproof: {'yes' if agree else 'NO'}")
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
