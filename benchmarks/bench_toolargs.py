"""bench_toolargs: what the tool-argument checks cost a check-only corpus audit (issue #12).

The requirement: schemas are compiled once per run and per worker, never per call, and on a
corpus whose records carry tool schemas, enabling `tool_arguments` and `tool_call_integrity`
costs at most 25% more than the same check-only audit without them.

On a generated corpus (`sessiongen.tooled`: realistic records, each with its agent's `tools`,
calls that mostly conform, kept calls re-spaced or altered in after; default 80 MB, `--quick` a
small one) it runs the library's `audit()` in this process, check-only, `--jobs 1`:

* (A) the benchmark contract with `tool_arguments: false` (and `tool_call_integrity` off, its
  default): the baseline, which still reads every record's `tools`;
* (B) the same contract with `checks: {tool_arguments: true, tool_call_integrity: true}`.

After a warm-up pass of each, it runs rounds of one A and one B back to back (the order
alternating) and prints pairs/second of each (best pass), and the cost ratio B/A as the median
over rounds of the CPU time ratio (target <= 1.25; a verdict line `met` or `missed`; a miss never
fails the process, benchmarks measure), with the wall-clock and best-of ratios as cross-checks.
On a machine shared with other work the best A and the best B can come from calmer and busier
moments; two passes run back to back share the moment. Before every run the process's parsed
and compiled tool schemas are forgotten, so each run starts as a fresh worker does.

It also prints the effective jobs, how many schemas each run checked against their meta-schema
and how many validators it built (counted by wrapping those two functions here, not in
production code), and sanity checks: both runs audited the same pairs, and B found TA-/TC-
findings. `--profile` adds a cProfile listing of one B run by own time.

    python -m benchmarks.bench_toolargs [--quick] [--megabytes 80] [--repeat 7] [--profile]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import io
import os
import platform
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make `frayproof_audit`/`sessiongen` importable
    sys.path.insert(0, str(REPO))

from benchmarks import results  # noqa: E402
from frayproof_audit.corpus import audit, read_table  # noqa: E402
from frayproof_audit.corpus.run import record_tools  # noqa: E402
from frayproof_audit.toolargs import compiled, schemas  # noqa: E402
from sessiongen import realistic, tooled  # noqa: E402

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_MB = 80
QUICK_MB = 6
TARGET_RATIO = 1.25


def contract_text(enabled: bool) -> str:
    """`realistic.BENCH_CONTRACT` with the two tool checks both off (A) or both on (B)."""
    document = yaml.safe_load(realistic.BENCH_CONTRACT)
    checks = document.setdefault("checks", {})
    if enabled:
        checks.update(tool_arguments=True, tool_call_integrity=True)
    else:
        checks.update(tool_arguments=False, tool_call_integrity=False)
    return str(yaml.safe_dump(document, sort_keys=False))


def corpus_file(data_dir: Path, megabytes: float, seed: int) -> Path:
    """The cached corpus for these parameters, generated on first use (the key includes both
    generator revisions, so a changed generator never reuses stale data)."""
    size = f"{megabytes:g}".replace(".", "_")
    path = data_dir / (f"toolargs-v{realistic.CORPUS_VERSION}.{tooled.TOOLED_VERSION}"
                       f"-seed{seed}-{size}mb.jsonl")
    if not path.exists():
        print(f"generating {megabytes:g} MB into {path} (cached for later runs) ...", flush=True)
        tooled.write_jsonl(path, target_bytes=int(megabytes * 1_000_000), seed=seed, nights=2)
    return path


@dataclass(slots=True)
class Compilations:
    """Calls of the two expensive schema steps during one run."""

    checked: int = 0
    """`schema_problem` calls: a tool's schema checked against its draft's meta-schema (each
    time a record's tool list is parsed into `ToolSchema`s)."""
    built: int = 0
    """`compile_tool` calls: a jsonschema validator built for one tool."""
    tools: set[str] = field(default_factory=set)


@contextlib.contextmanager
def counting() -> Iterator[Compilations]:
    """Count schema checks and validator builds while the block runs (module attributes are
    wrapped and restored; both are looked up as module globals at call time)."""
    counts = Compilations()
    real_problem, real_compile = schemas.schema_problem, compiled.compile_tool  # type: ignore[attr-defined]

    def problem(schema: Any) -> str | None:
        counts.checked += 1
        return real_problem(schema)

    def compile_tool(tool: schemas.ToolSchema) -> compiled.CompiledTool:
        counts.built += 1
        counts.tools.add(tool.name)
        return real_compile(tool)

    schemas.schema_problem = problem  # type: ignore[attr-defined]
    compiled.compile_tool = compile_tool
    try:
        yield counts
    finally:
        schemas.schema_problem = real_problem  # type: ignore[attr-defined]
        compiled.compile_tool = real_compile


@dataclass(frozen=True, slots=True)
class Run:
    """One audit of the corpus: its time, its summary's counts and its schema work."""

    seconds: float
    cpu_s: float
    """CPU time of this process during the run: the work itself, which other load on a shared
    machine disturbs far less than the wall clock."""
    pairs: int
    failed: int
    input_errors: int
    compilations: Compilations
    out: Path


def cold_caches() -> None:
    """Forget the parsed and compiled tool schemas this process keeps, so every measured run
    starts as a fresh worker does (a CLI run's workers are new processes)."""
    record_tools._PARSED.clear()
    compiled._CACHE.clear()


def audit_once(path: Path, contract: Path, out: Path) -> Run:
    shutil.rmtree(out, ignore_errors=True)
    cold_caches()
    with counting() as counts:
        start, cpu = time.perf_counter(), time.process_time()
        summary = audit(str(path), str(contract), str(out), jobs=1, mutate=False, fail_on=("none",),
                        max_input_error_rate=None)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return Run(seconds, cpu, summary.pairs, summary.failed, summary.input_errors, counts, out)


def interleaved(repeat: int, contenders: dict[str, Callable[[], Run]]) -> dict[str, list[Run]]:
    """One warm-up pass of every contender, then `repeat` rounds of one pass each, the order
    reversed every other round (A B, B A, ...), so a contender never always runs first or
    always right after the other; every measured pass, per contender, round by round."""
    for run in contenders.values():
        run()
    passes: dict[str, list[Run]] = {label: [] for label in contenders}
    order = list(contenders)
    for round_ in range(repeat):
        for label in order if round_ % 2 == 0 else reversed(order):
            passes[label].append(contenders[label]())
    return passes


def paired_ratio(passes: dict[str, list[Run]], measure: Callable[[Run], float]) -> float:
    """The median over rounds of B's time / A's time in the same round. Other load on a shared
    machine comes and goes over seconds, so the best A and the best B may come from calmer and
    busier moments; a round's two passes ran back to back under about the same load."""
    return statistics.median(measure(b) / measure(a) for a, b in zip(passes["A"], passes["B"], strict=True))


def codes(out: Path) -> Counter[str]:
    findings = read_table(out, "findings").select("code").collect()
    return Counter(findings["code"].to_list())


def pair_ids(out: Path) -> list[str]:
    return sorted(read_table(out, "pairs").select("pair_id").collect()["pair_id"].to_list())


def effective_jobs(out: Path) -> int:
    return int(read_table(out, "runs").select("n_jobs").collect()["n_jobs"][0])


def profile_once(path: Path, contract: Path, out: Path, top: int = 25) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    audit_once(path, contract, out)
    profiler.disable()
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(top)
    return stream.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_toolargs",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"a {QUICK_MB} MB corpus, one pass")
    parser.add_argument("--megabytes", type=float, default=None,
                        help=f"corpus size (default {DEFAULT_MB}, quick {QUICK_MB})")
    parser.add_argument("--repeat", type=int, default=None,
                        help="rounds (one pass of each contender) after the warm-up (default 7, quick 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--corpus", type=Path, default=None, help="use this JSONL file instead")
    parser.add_argument("--profile", action="store_true", help="cProfile one run with the checks on")
    parser.add_argument("--results", type=Path,
                        help="write the JSON results into this folder (python -m benchmarks: "
                        "benchmarks/results; never with --quick)")
    args = parser.parse_args(argv)
    megabytes = args.megabytes or (QUICK_MB if args.quick else DEFAULT_MB)
    repeat = args.repeat or (1 if args.quick else 7)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    path = args.corpus or corpus_file(args.data_dir, megabytes, args.seed)
    size = path.stat().st_size / 1e6
    print(f"corpus {path.name}: {size:.1f} MB; {os.cpu_count()} CPU(s); python "
          f"{platform.python_version()}; load average {os.getloadavg()[0]:.2f}", flush=True)

    with tempfile.TemporaryDirectory(prefix="bench_toolargs-") as folder:
        scratch = Path(folder)
        contracts = {}
        for label, enabled in (("A", False), ("B", True)):
            contracts[label] = scratch / f"contract-{label}.yaml"
            contracts[label].write_text(contract_text(enabled), encoding="utf-8")
        passes = interleaved(repeat, {
            label: functools.partial(audit_once, path, contracts[label], scratch / f"out-{label}")
            for label in contracts
        })
        wall = {label: min(run.seconds for run in runs) for label, runs in passes.items()}
        cpu = {label: min(run.cpu_s for run in runs) for label, runs in passes.items()}
        a, b = passes["A"][-1], passes["B"][-1]
        names = {"A": "(A) tool checks off", "B": "(B) tool_arguments + tool_call_integrity"}
        for label in passes:
            print(f"  {names[label]:<42} {a.pairs / wall[label]:7.1f} pairs/s {size / wall[label]:6.1f} MB/s"
                  f"  (best of {repeat}: wall {wall[label]:5.2f} s, CPU {cpu[label]:5.2f} s)")
        ratio = paired_ratio(passes, lambda run: run.cpu_s)
        verdict = "met" if ratio <= TARGET_RATIO else "missed"
        print(f"  cost B / A: {ratio:.3f}x (CPU time, median of {repeat} back-to-back rounds; target <= "
              f"{TARGET_RATIO}x): {verdict}")
        wall_ratio = paired_ratio(passes, lambda run: run.seconds)
        print(f"    cross-checks: wall clock, median of rounds {wall_ratio:.3f}x;"
              f" best B / best A {wall['B'] / wall['A']:.3f}x wall, {cpu['B'] / cpu['A']:.3f}x CPU")
        jobs = sorted({effective_jobs(a.out), effective_jobs(b.out)})
        print(f"  effective jobs: A {effective_jobs(a.out)}, B {effective_jobs(b.out)}")
        results.save(results.results_dir(args.results, args.quick), "bench_toolargs", jobs, [
            results.Target("tool checks' cost: audit B / audit A (CPU time)", ratio, TARGET_RATIO,
                           at_least=False, note=f"median of {repeat} back-to-back rounds")],
            {"megabytes": round(size, 1), "rounds": repeat, "wall_ratio": round(wall_ratio, 3)})
        for label, runs in passes.items():
            work = {(run.compilations.checked, run.compilations.built) for run in runs}
            count = runs[-1].compilations
            same_each = "every run" if len(work) == 1 else f"varied: {sorted(work)}"
            print(f"  schema work per run ({label}): {count.checked} schemas checked, "
                  f"{count.built} validators built for {len(count.tools)} distinct tools ({same_each})")

        same = a.pairs == b.pairs and pair_ids(a.out) == pair_ids(b.out)
        found = codes(b.out)
        baseline = codes(a.out)
        tool_codes = {code: n for code, n in sorted(found.items()) if code.startswith(("TA-", "TC-"))}
        print(f"  sanity: both runs audited the same {a.pairs} pairs: {'yes' if same else 'NO'}; "
              f"input errors A {a.input_errors}, B {b.input_errors}; failed pairs A {a.failed}, "
              f"B {b.failed}")
        shown = ", ".join(f"{code} {n}" for code, n in tool_codes.items()) or "none"
        print(f"  sanity: B's tool findings: {shown}; A's: "
              f"{sum(n for code, n in baseline.items() if code.startswith(('TA-', 'TC-')))}")
        if not same or not tool_codes:
            print("  WARNING: the two runs are not comparable (see the sanity lines)", file=sys.stderr)
        if args.profile:
            print(profile_once(path, contracts["B"], scratch / "out-profile"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
