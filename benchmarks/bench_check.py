"""bench_check: pairs/second for strict parsing + loading + checking one JSONL record at a time.

A corpus worker's inner loop is: parse the line strictly (`jsonio.loads_strict`), load `before`
and `after` (`snapshot.load_wire`), check the pair (`engine.check_loaded`). This benchmark runs
that loop over a realistic generated corpus and prints, from one run on the same lines:

* the bare `orjson.loads` rate (the ceiling: no strictness, no checking);
* our rate, and its ratio to orjson (target >= 50%);
* frayproof 0.1.0's rate where its environment exists (`benchmarks.peer`), measured the way a
  frayproof user would process a log: `json.loads` with frayproof's own duplicate-key hook (as
  its file loader parses), then `frayproof.check(before, after, contract)` on the lists — and
  our ratio to it (floor 3x). Both verdict sequences are compared line by line.

Passes are interleaved and repeated after a warm-up pass; the best pass counts (least disturbed
by other load). Times are CPU times of the measuring process, on both sides (wall time on a
shared machine also counts the waits for a core).
`--stages` adds a per-stage breakdown of our path and `--profile` a cProfile listing.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import platform
import pstats
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from benchmarks import peer, results
from frayproof_audit import check, engine, jsonio, snapshot
from frayproof_audit.contract import Contract
from frayproof_audit.errors import InputError
from frayproof_audit.formats.openai import message_identity
from frayproof_audit.loaded import Loaded
from sessiongen import realistic

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_PAIRS = 800
QUICK_PAIRS = 60
TARGET_VS_ORJSON = 0.5
FLOOR_VS_FRAYPROOF = 3.0
TARGET_LISTS_VS_FRAYPROOF = 5.0


@dataclass(frozen=True, slots=True)
class Rate:
    """The best pass of one contender over `pairs` lines totalling `megabytes`."""

    label: str
    seconds: float
    pairs: int
    megabytes: float
    noise: float = 0.0
    """The spread of its passes (`results.spread`; 0: one pass, or not reported)."""

    @property
    def pairs_per_s(self) -> float:
        return self.pairs / self.seconds

    @property
    def mb_per_s(self) -> float:
        return self.megabytes / self.seconds


def corpus_file(data_dir: Path, pairs: int, seed: int) -> Path:
    """The cached corpus for these parameters, generated on first use (key includes the
    generator revision, so a changed generator never reuses stale data)."""
    path = data_dir / f"check-v{realistic.CORPUS_VERSION}-seed{seed}-{pairs}.jsonl"
    if not path.exists():
        print(f"generating {pairs} pairs into {path} (cached for later runs) ...", flush=True)
        realistic.write_jsonl(path, n_pairs=pairs, seed=seed)
    return path


def check_line(line: bytes, contract: Contract) -> str:
    """Our whole per-record path; 'P' passed, 'F' failed, 'E' input error."""
    try:
        record = jsonio.loads_strict(line)
        if type(record) is not dict:
            return "E"
        before, after = record.get("before"), record.get("after")
        if type(before) is not list or type(after) is not list:
            return "E"
        report = engine.check_loaded(snapshot.load_wire(before), snapshot.load_wire(after), contract)
    except (jsonio.JSONProblem, InputError):
        return "E"
    return "P" if report.passed else "F"


def ours_pass(lines: Sequence[bytes], contract: Contract) -> str:
    return "".join([check_line(line, contract) for line in lines])


def orjson_pass(lines: Sequence[bytes]) -> None:
    for line in lines:
        _orjson_or_none(line)


def strict_pass(lines: Sequence[bytes]) -> None:
    for line in lines:
        _strict_or_none(line)


def pass_seconds(passes: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """CPU time of each pass, `repeat` times (this process's: on a shared machine, wall time
    also counts the waits for a core); passes are interleaved so background load hits all
    alike. Their best is the figure, their spread its noise."""
    times: dict[str, list[float]] = {name: [] for name in passes}
    for _ in range(repeat):
        for name, run in passes.items():
            gc.collect()
            start = time.process_time()
            run()
            times[name].append(time.process_time() - start)
    return times


# frayproof's side, run by the peer interpreter. Its loader reads a file with
# `json.loads(text, object_pairs_hook=_object_pairs)`; a log line gets the same treatment.
PEER_SCRIPT = r"""
import gc, json, sys, time
from pathlib import Path
import frayproof
from frayproof.errors import InputError
from frayproof.loaders.openai import _object_pairs

corpus_path, contract_path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = Path(corpus_path).read_bytes().splitlines()
contract = frayproof.load_contract(contract_path)

def check_line(line):
    try:
        record = json.loads(line.decode("utf-8"), object_pairs_hook=_object_pairs)
        report = frayproof.check(record["before"], record["after"], contract)
    except (InputError, ValueError, KeyError, TypeError):
        return "E"
    return "P" if report.passed else "F"

def timed(run):
    gc.collect()
    start = time.process_time()
    result = run()
    return time.process_time() - start, result

records = []
for line in lines:
    try:
        record = json.loads(line.decode("utf-8"), object_pairs_hook=_object_pairs)
        records.append((record["before"], record["after"]))
    except (InputError, ValueError, KeyError, TypeError):
        pass

def check_lists():
    verdicts = []
    for before, after in records:
        try:
            verdicts.append("P" if frayproof.check(before, after, contract).passed else "F")
        except (InputError, ValueError, KeyError, TypeError):
            verdicts.append("E")
    return "".join(verdicts)

check_lists()  # warm-up
lists_passes, lists_verdicts = [], ""
for _ in range(repeat):
    seconds, lists_verdicts = timed(check_lists)
    lists_passes.append(seconds)
"".join([check_line(line) for line in lines])  # warm-up
passes, verdicts = [], ""
for _ in range(repeat):
    seconds, verdicts = timed(lambda: "".join([check_line(line) for line in lines]))
    passes.append(seconds)
result = {"seconds": min(passes), "passes": passes, "verdicts": verdicts,
          "python": sys.version.split()[0], "lists_seconds": min(lists_passes),
          "lists_passes": lists_passes, "lists_verdicts": lists_verdicts, "lists_pairs": len(records),
          "frayproof": getattr(frayproof, "__version__", "?")}
try:
    import orjson
except ImportError:
    pass
else:
    def orjson_pass():
        for line in lines:
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                pass
    result["orjson_seconds"] = min(timed(orjson_pass)[0] for _ in range(repeat))
print(json.dumps(result))
"""


@dataclass(frozen=True, slots=True)
class PeerResult:
    rate: Rate
    verdicts: str
    version: str
    orjson_rate: Rate | None
    lists_rate: Rate | None = None
    lists_verdicts: str = ""


def measure_peer(path: Path, pairs: int, megabytes: float, repeat: int) -> PeerResult | str:
    """frayproof's rate on the same file, or the reason it could not be measured."""
    if peer.peer_python() is None:
        return f"no frayproof environment (run `make peer` or set {peer.PEER_ENV})"
    with tempfile.TemporaryDirectory() as scratch:
        contract_path = realistic.write_contract(Path(scratch) / "contract.yaml")
        try:
            found = peer.run_peer(PEER_SCRIPT, [str(path), str(contract_path), str(repeat)])
        except peer.PeerError as exc:
            return str(exc)
    orjson_rate = None
    if "orjson_seconds" in found:
        orjson_rate = Rate("orjson (peer)", found["orjson_seconds"], pairs, megabytes)
    version = f"frayproof {found['frayproof']} on Python {found['python']}"
    lists_rate = None
    if "lists_seconds" in found:
        lists_rate = Rate("frayproof.check on parsed lists", found["lists_seconds"],
                          found["lists_pairs"], megabytes, results.spread(found.get("lists_passes", [1.0])))
    return PeerResult(Rate("frayproof", found["seconds"], pairs, megabytes,
                           results.spread(found.get("passes", [1.0]))), found["verdicts"],
                      version, orjson_rate, lists_rate, found.get("lists_verdicts", ""))


def _row(rate: Rate) -> str:
    return f"  {rate.label:<34} {rate.pairs_per_s:>10.1f} pairs/s {rate.mb_per_s:>9.1f} MB/s"


def report(orjson_rate: Rate, ours: Rate, strict: Rate, verdicts: str,
           peer_result: PeerResult | str, lists: tuple[Rate, str] | None) -> list[results.Target]:
    """Print the rates and ratios; return the targets as measured."""
    print(_row(orjson_rate))
    print(_row(strict))
    print(_row(ours))
    share = ours.pairs_per_s / orjson_rate.pairs_per_s
    limit = strict.pairs_per_s / orjson_rate.pairs_per_s
    targets = [results.Target(
        "strict parse + load + check / bare orjson.loads", share, TARGET_VS_ORJSON, limit=limit,
        note="limit: strict parsing alone, no loading or checking",
        noise=ours.noise + orjson_rate.noise)]
    counts = {kind: verdicts.count(kind) for kind in "PFE"}
    print(f"  our verdicts: {counts['P']} passed, {counts['F']} failed, {counts['E']} input errors")
    if lists is not None:
        print(_row(lists[0]))
    if isinstance(peer_result, str):
        print(f"  frayproof: skipped ({peer_result})")
        return targets
    print(_row(peer_result.rate) + f"   [{peer_result.version}]")
    speedup = ours.pairs_per_s / peer_result.rate.pairs_per_s
    targets.append(results.Target("parse + check / frayproof's", speedup, FLOOR_VS_FRAYPROOF,
                                  noise=ours.noise + peer_result.rate.noise))
    print(f"  frayproof / orjson  {peer_result.rate.pairs_per_s / orjson_rate.pairs_per_s:6.1%}")
    if peer_result.orjson_rate is not None:
        own = peer_result.rate.pairs_per_s / peer_result.orjson_rate.pairs_per_s
        print(f"  frayproof / orjson in its own interpreter {own:6.1%}")
    _compare("parse + check", verdicts, peer_result.verdicts)
    if lists is not None and peer_result.lists_rate is not None:
        print(_row(peer_result.lists_rate))
        targets.append(results.Target(
            "check() on parsed lists / frayproof.check", lists[0].pairs_per_s
            / peer_result.lists_rate.pairs_per_s, TARGET_LISTS_VS_FRAYPROOF,
            noise=lists[0].noise + peer_result.lists_rate.noise))
        _compare("check() on parsed lists", lists[1], peer_result.lists_verdicts)
    return targets


def _compare(what: str, ours: str, theirs: str) -> None:
    disagree = [i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b]
    if len(ours) != len(theirs) or disagree:
        print(f"  WARNING: {what}: verdicts differ from frayproof on {len(disagree)} records, "
              f"first at record {disagree[0] + 1 if disagree else '?'}")
    else:
        print(f"  {what}: verdicts agree with frayproof on all {len(ours)} records")


def lists_pass(pairs: Sequence[tuple[Any, Any]], contract: Contract) -> str:
    """The public `check()` on already parsed lists (it validates and detaches them itself)."""
    verdicts = []
    for before, after in pairs:
        try:
            verdicts.append("P" if check(before, after, contract).passed else "F")
        except InputError:
            verdicts.append("E")
    return "".join(verdicts)


def parsed_pairs(lines: Sequence[bytes]) -> list[tuple[Any, Any]]:
    """(before, after) of every line that parses as a record with both, as a caller holds them."""
    pairs = []
    for line in lines:
        value = _orjson_or_none(line)
        if type(value) is dict and "before" in value and "after" in value:
            pairs.append((value["before"], value["after"]))
    return pairs


STAGE_CHUNK = 8
"""Records alive at once while staging: a worker's heap stays small, and a large live heap
would make every garbage collection (and so every allocating stage) look slower."""


def stage_seconds(lines: Sequence[bytes], contract: Contract, repeat: int) -> list[tuple[str, float]]:
    """CPU seconds per stage of our path over all lines.

    Lines are processed a few at a time; each stage is timed on the chunk `repeat` times and the
    best counts, so short bursts of other load on the machine hardly matter. CPU time
    (`time.process_time`), not wall time, for the same reason. Uses engine internals
    (`jsonio._proved_sizes`, `_rewrite`, `_loads_exact`, `checks.CHECKS`) where they
    exist, so rows disappear rather than break when those change. Identities are
    computed lazily by whichever stage first needs them, as in a real run.
    """
    totals: dict[str, float] = {}
    for start in range(0, len(lines), STAGE_CHUNK):
        best: dict[str, float] = {}
        for _ in range(repeat):
            found: dict[str, float] = {}
            _stage_chunk(lines[start: start + STAGE_CHUNK], contract, found)
            for name, value in found.items():
                best[name] = min(best.get(name, float("inf")), value)
        for name, value in best.items():
            totals[name] = totals.get(name, 0.0) + value
    return list(totals.items())


def _stage_chunk(chunk: Sequence[bytes], contract: Contract, totals: dict[str, float]) -> None:
    from frayproof_audit import checks

    def timed(name: str, function: Callable[..., Any], items: Sequence[Any]) -> list[Any]:
        start = time.process_time()
        results = [function(*item) for item in items]
        totals[name] = totals.get(name, 0.0) + time.process_time() - start
        return results

    single = [(line,) for line in chunk]
    timed("whole path (check_line)", check_line, [(line, contract) for line in chunk])
    values = timed("orjson.loads", _orjson_or_none, single)
    timed("jsonio.loads_strict", _strict_or_none, single)
    pending = [(line, value) for line, value in zip(chunk, values, strict=True) if value is not None]
    proof = getattr(jsonio, "_proved_sizes", None)
    rewrite = getattr(jsonio, "_rewrite", None)
    if proof is not None and rewrite is not None and pending:
        timed("  of which writing the value back (orjson.dumps)", lambda v: list(rewrite(v)),
              [(v,) for _, v in pending])
        verdicts = timed("  the exactness proof (rewrite, compare or count)", proof, pending)
        proved = [value for (_, value), ok in zip(pending, verdicts, strict=True) if ok is not None]
        pending = [item for item, ok in zip(pending, verdicts, strict=True) if ok is None]
        _count(totals, "  (lines proved)", len(proved))
        check_numbers = getattr(jsonio, "_check_numbers", None)
        if check_numbers is not None:
            timed("    the number walk, were every proved line walked", check_numbers,
                  [([value],) for value in proved])
    exact = getattr(jsonio, "_loads_exact", None)
    if exact is not None:
        timed("  stdlib exact parse of the unproved lines", _exact_or_none,
              [(exact, line) for line, _ in pending])
        _count(totals, "  (lines left to the stdlib parser)", len(pending))
    records = [(value,) for value in values if _is_pair(value)]
    loaded = timed("load_wire before + after", lambda r: (snapshot.load_wire(r["before"]),
                                                          snapshot.load_wire(r["after"])), records)
    facts = timed("prepare_before (computes before identities)", engine.prepare_before,
                  [(before, contract) for before, _ in loaded])
    for registered in checks.CHECKS:
        settings = contract.settings(registered.key)
        timed(f"check {registered.name}", registered.find,
              [(after, contract, before_facts, settings) for (_, after), before_facts in zip(
                  loaded, facts, strict=True)])
    _count(totals, "  (after identities computed)", sum(_computed_identities(a) for _, a in loaded))
    messages = [(m,) for (r,) in records for m in (*r["before"], *r["after"])]
    _count(totals, "  (messages)", len(messages))
    timed("message_identity of every message (for scale)", message_identity, messages)


def _count(totals: dict[str, float], name: str, amount: int) -> None:
    totals[name] = totals.get(name, 0) + amount


def _is_pair(value: Any) -> bool:
    return type(value) is dict and type(value.get("before")) is list and type(value.get("after")) is list


def _orjson_or_none(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def _strict_or_none(line: bytes) -> Any:
    try:
        return jsonio.loads_strict(line)
    except jsonio.JSONProblem:
        return None


def _exact_or_none(exact: Callable[[bytes], Any], line: bytes) -> Any:
    try:
        return exact(line)
    except jsonio.JSONProblem:
        return None


def _computed_identities(loaded: Loaded) -> int:
    known = getattr(loaded, "known_identity", None)
    return 0 if known is None else sum(known(i) is not None for i in range(len(loaded)))


def print_stages(lines: Sequence[bytes], contract: Contract, repeat: int) -> None:
    rows = stage_seconds(lines, contract, repeat)
    print(f"\nstages of our path over {len(lines)} records (CPU time, best of {repeat} per chunk; "
          "ms per record):")
    for name, value in rows:
        if name.startswith("  ("):
            print(f"  {name.strip():<52} {int(value):>10}")
        else:
            print(f"  {name:<52} {value:8.3f} s {1000 * value / len(lines):8.3f} ms")


def print_profile(lines: Sequence[bytes], contract: Contract, top: int = 30) -> None:
    """cProfile of our pass, by own time (what to optimise first)."""
    profiler = cProfile.Profile()
    profiler.runcall(ours_pass, lines, contract)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    print(out.getvalue())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small corpus, one pass each")
    parser.add_argument("--pairs", type=int, help=f"corpus size (default {DEFAULT_PAIRS})")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--repeat", type=int, help="passes per contender; the best counts")
    parser.add_argument("--corpus", type=Path, help="use this JSONL file instead of generating")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="where corpora are cached")
    parser.add_argument("--no-peer", action="store_true", help="skip the frayproof column")
    parser.add_argument("--stages", action="store_true", help="add a per-stage breakdown")
    parser.add_argument("--profile", action="store_true", help="add a cProfile listing")
    parser.add_argument("--huge", default=None, metavar="N,N,...",
                        help="instead: one huge failing record of N exchanges per size, per "
                        "shape (benchmarks/huge_check.py); prints cost per message, no targets")
    parser.add_argument("--compact", default=None, metavar="N,N,...",
                        help="instead: `compact` of one huge valid transcript of about N messages "
                        "per size, per format (benchmarks/huge_compact.py); prints seconds and "
                        "cost per message, no targets")
    parser.add_argument("--results", type=Path,
                        help="write the JSON results into this folder (python -m benchmarks: "
                        "benchmarks/results; never with --quick)")
    args = parser.parse_args(argv)
    if args.huge is not None:
        from benchmarks import huge_check

        sizes = [int(size) for size in args.huge.split(",") if size.strip()]
        return huge_check.run(sizes, args.repeat or (1 if args.quick else 3))
    if args.compact is not None:
        from benchmarks import huge_compact

        sizes = [int(size) for size in args.compact.split(",") if size.strip()]
        return huge_compact.run(sizes, args.repeat or (1 if args.quick else 3))
    pairs = args.pairs or (QUICK_PAIRS if args.quick else DEFAULT_PAIRS)
    repeat = args.repeat or (1 if args.quick else 3)
    path = args.corpus or corpus_file(args.data_dir, pairs, args.seed)
    lines = path.read_bytes().splitlines()
    megabytes = sum(map(len, lines)) / 1e6
    contract = realistic.bench_contract()
    print(f"bench_check: {len(lines)} records, {megabytes:.1f} MB ({path.name}); "
          f"Python {platform.python_version()}, {os.cpu_count()} CPUs, best of {repeat}")
    print("  effective jobs: 1 (everything runs in this process)")
    verdicts = ours_pass(lines, contract)  # warm-up, and the verdicts to compare
    pairs = parsed_pairs(lines)
    lists_verdicts = lists_pass(pairs, contract)  # warm-up
    orjson_pass(lines)  # warm-up
    passes = pass_seconds({"orjson": lambda: orjson_pass(lines),
                           "strict": lambda: strict_pass(lines),
                           "ours": lambda: ours_pass(lines, contract),
                           "lists": lambda: lists_pass(pairs, contract)}, repeat)
    best = {name: min(times) for name, times in passes.items()}
    noise = {name: results.spread(times) for name, times in passes.items()}
    peer_result: PeerResult | str = "disabled (--no-peer)"
    if not args.no_peer:
        peer_result = measure_peer(path, len(lines), megabytes, repeat)
    orjson_rate = Rate("orjson.loads (no checks)", best["orjson"], len(lines), megabytes, noise["orjson"])
    ours = Rate("ours: strict parse + load + check", best["ours"], len(lines), megabytes, noise["ours"])
    targets = report(orjson_rate, ours,
                     Rate("ours: strict parse only", best["strict"], len(lines), megabytes),
                     verdicts, peer_result,
                     (Rate("ours: check() on parsed lists", best["lists"], len(pairs), megabytes,
                           noise["lists"]),
                      lists_verdicts))
    figures = {name: len(lines) / seconds for name, seconds in best.items()}
    if not isinstance(peer_result, str):
        figures["frayproof"] = peer_result.rate.pairs_per_s
        if peer_result.lists_rate is not None:
            figures["frayproof_lists"] = peer_result.lists_rate.pairs_per_s
    results.save(results.results_dir(args.results, args.quick), "bench_check", 1, targets,
                 {"records": len(lines), "megabytes": round(megabytes, 1), "repeat": repeat,
                  "pairs_per_s": {k: round(v, 1) for k, v in figures.items()}})
    if args.stages:
        print_stages(lines, contract, repeat)
    if args.profile:
        print_profile(lines, contract)
    return 0


if __name__ == "__main__":
    sys.exit(main())
