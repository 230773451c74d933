"""bench_sources: deriving the compaction pairs of agents' session files is linear in the file
(issue #25), against bare line parsing of the same file.

A Claude Code transcript and a Codex CLI rollout of about 50 MB each, with 30 compactions, are
written with realistic turns (sessiongen: tool calls, tool results of a few KB, split assistant
turns, progress and snapshot lines; a `compact_boundary` with its summary and preserved tail,
a `compacted` line with its `replacement_history`). Each is derived with the source the audit
uses (`sources.derive` over `sources.read_source`, every row's before and after built), and read
bare: every line through `orjson.loads`, nothing kept. Printed per file: MB/s of each and their
ratio (the cost of replaying the chain and building the pairs), and the same at a quarter and
half of the size (the same density of compactions): the full file's time per MB must stay within
1.5x of the smaller files' best (the target; a chain walked from the start at each compaction
would make it quadratic). The share of bare parsing is reported, not gated: it is mostly the
strict parse (duplicate keys, non-finite numbers) every line gets, as in the audit.

    python -m benchmarks.bench_sources [--quick] [--mb 50] [--results DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make `frayproof_audit`/`sessiongen` importable
    sys.path.insert(0, str(REPO))

from benchmarks import results  # noqa: E402
from frayproof_audit import sources  # noqa: E402
from frayproof_audit.sources.base import Compaction  # noqa: E402

COMPACTIONS = 30
TARGET_LINEARITY = 1.5
"""Time per MB of the full file over the best of the smaller ones (same compaction density)."""
PASSES = 3


_WORDS = ("the", "build", "failed", "because", "config", "value", "missing", "from", "service",
          "retry", "after", "timeout", "invoice", "token", "cache", "schema", "rows", "deploy",
          "staging", "check", "tests", "passed", "error", "line", "module", "import", "path")
_POOL = " ".join(random.Random(3).choice(_WORDS) for _ in range(60_000))


def _text(rng: random.Random, size: int) -> str:
    """`size` characters of prose-like text (a slice of one pool: writing 50 MB stays quick)."""
    start = rng.randrange(0, len(_POOL) - size)
    return _POOL[start:start + size]


def claude_code(path: Path, megabytes: float, compactions: int, seed: int) -> None:
    """A transcript of ~`megabytes` with `compactions` boundaries evenly spread."""
    rng = random.Random(seed)
    session = "11111111-2222-4333-8444-555555555555"
    count = 0
    minute = 0

    def uuid() -> str:
        nonlocal count
        count += 1
        return f"00000000-0000-4000-8000-{count:012d}"

    def entry(kind: str, parent: str | None, uid: str, **fields: Any) -> dict[str, Any]:
        nonlocal minute
        minute += 1
        return {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/repo",
                "sessionId": session, "version": "2.1.89", "gitBranch": "main", "type": kind,
                "uuid": uid, "timestamp": f"2026-08-18T{minute // 3600 % 24:02d}:"
                                          f"{minute // 60 % 60:02d}:{minute % 60:02d}.000Z", **fields}

    target = int(megabytes * 1_000_000)
    per_segment = target // (compactions + 1)
    written = 0
    parent: str | None = None
    with path.open("wb") as handle:
        def put(line: dict[str, Any]) -> None:
            nonlocal written
            data = orjson.dumps(line) + b"\n"
            handle.write(data)
            written += len(data)

        put({"type": "summary", "summary": "A session", "leafUuid": "x"})
        turn = 0
        for segment in range(compactions + 1):
            stop = per_segment * (segment + 1)
            while written < stop:
                turn += 1
                user = uuid()
                put(entry("user", parent, user, message={"role": "user", "content": _text(rng, 200)}))
                call_id = f"toolu_{turn:06d}"
                message_id = f"msg_{turn:06d}"
                first = uuid()
                put(entry("assistant", user, first, requestId=f"req_{turn}", message={
                    "id": message_id, "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": _text(rng, 120)}]}))
                second = uuid()
                put(entry("assistant", first, second, requestId=f"req_{turn}", message={
                    "id": message_id, "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-5", "content": [{"type": "tool_use", "id": call_id,
                                                               "name": "read_file",
                                                               "input": {"path": f"src/m{turn}.py"}}]}))
                result = uuid()
                put(entry("user", second, result, toolUseResult={"ok": True}, message={
                    "role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                                 "content": _text(rng, rng.randint(1000, 6000))}]}))
                progress = uuid()
                put(entry("progress", result, progress, data={"type": "hook_progress"}))
                answer = uuid()
                put(entry("assistant", progress, answer, requestId=f"req_{turn}b", message={
                    "id": f"{message_id}b", "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": _text(rng, 300)}]}))
                parent = answer
            if segment == compactions:
                break
            boundary = uuid()
            put(entry("system", None, boundary, subtype="compact_boundary", logicalParentUuid=parent,
                      content="Conversation compacted",
                      compactMetadata={"trigger": "auto", "preTokens": 150_000}))
            summary = uuid()
            put(entry("user", boundary, summary, isCompactSummary=True,
                      message={"role": "user", "content": "Summary: " + _text(rng, 2000)}))
            parent = summary


def codex(path: Path, megabytes: float, compactions: int, seed: int) -> None:
    """A rollout of ~`megabytes` with `compactions` `compacted` lines evenly spread."""
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    per_segment = target // (compactions + 1)
    written = 0
    second = 0
    with path.open("wb") as handle:
        def put(kind: str, payload: dict[str, Any]) -> None:
            nonlocal written, second
            second += 1
            data = orjson.dumps({"timestamp": f"2026-08-01T{second // 3600 % 24:02d}:"
                                              f"{second // 60 % 60:02d}:{second % 60:02d}.000Z",
                                 "type": kind, "payload": payload}) + b"\n"
            handle.write(data)
            written += len(data)

        put("session_meta", {"id": "0199-codex", "timestamp": "2026-08-01T00:00:00.000Z", "cwd": "/repo",
                             "originator": "codex_cli_rs", "cli_version": "0.128.0",
                             "base_instructions": {"text": "You are Codex."}})
        put("turn_context", {"turn_id": "t1", "cwd": "/repo", "model": "gpt-5-codex"})
        turn = 0
        for segment in range(compactions + 1):
            stop = per_segment * (segment + 1)
            users: list[dict[str, Any]] = []
            while written < stop:
                turn += 1
                user = {"type": "message", "role": "user",
                        "content": [{"type": "input_text", "text": _text(rng, 200)}]}
                users.append(user)
                put("response_item", user)
                call = f"call_{turn:06d}"
                arguments = orjson.dumps({"command": ["cat", f"m{turn}.py"]}).decode()
                put("response_item", {"type": "function_call", "name": "shell", "call_id": call,
                                      "arguments": arguments})
                put("response_item", {"type": "function_call_output", "call_id": call,
                                      "output": _text(rng, rng.randint(1000, 6000))})
                put("event_msg", {"type": "token_count", "info": {"last_token_usage": {
                    "input_tokens": 1000 + turn, "output_tokens": 10, "total_tokens": 1010 + turn}}})
                put("response_item", {"type": "message", "role": "assistant",
                                      "content": [{"type": "output_text", "text": _text(rng, 300)}]})
            if segment == compactions:
                break
            summary = {"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "Summary: " + _text(rng, 2000)}]}
            put("compacted", {"message": "summary", "replacement_history": [*users[-3:], summary]})
            put("event_msg", {"type": "context_compacted"})


WRITERS: dict[str, Callable[[Path, float, int, int], None]] = {
    "claude-code": claude_code, "codex": codex}


def derive_all(source: str, path: Path) -> int:
    """Every row of the file derived, each pair's before and after built; the rows' count."""
    derived = sources.derive(source, str(path), sources.read_source(source, path))
    built = 0
    for row in derived.rows:
        if isinstance(row, Compaction):
            assert row.before is not None and row.after is not None, row
            built += 1
    return built


def bare(path: Path) -> int:
    lines = 0
    with path.open("rb") as handle:
        for line in handle:
            orjson.loads(line)
            lines += 1
    return lines


def best_of(passes: int, action: Callable[[], int]) -> tuple[float, list[float]]:
    seconds = []
    for _ in range(passes):
        start = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - start)
    return min(seconds), seconds


def measure(source: str, folder: Path, megabytes: float, compactions: int,
            passes: int) -> dict[str, Any]:
    path = folder / f"{source}-{megabytes:g}.jsonl"
    WRITERS[source](path, megabytes, compactions, 7)
    size = path.stat().st_size / 1e6
    rows = derive_all(source, path)
    assert rows == compactions, f"{source}: {rows} compactions derived, {compactions} written"
    derived, derived_passes = best_of(passes, lambda: derive_all(source, path))
    parsed, parsed_passes = best_of(passes, lambda: bare(path))
    path.unlink()
    figures = {"mb": round(size, 1), "compactions": compactions, "derive_s": round(derived, 3),
               "bare_s": round(parsed, 3), "derive_mb_s": round(size / derived, 1),
               "bare_mb_s": round(size / parsed, 1), "ratio": round(parsed / derived, 3),
               "s_per_mb": derived / size,
               "noise": results.spread(derived_passes) + results.spread(parsed_passes)}
    print(f"  {source:<12} {size:6.1f} MB, {compactions:2d} compactions: "
          f"derive {figures['derive_mb_s']:6.1f} MB/s "
          f"({derived:.2f} s), bare orjson.loads {figures['bare_mb_s']:6.1f} MB/s ({parsed:.2f} s): "
          f"{figures['ratio']:.2f} of bare", flush=True)
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_sources",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small files (a smoke test)")
    parser.add_argument("--mb", type=float, default=None, help="size of the largest file (default 50)")
    parser.add_argument("--results", type=Path,
                        help="write the JSON results into this folder (never with --quick)")
    args = parser.parse_args(argv)
    full = args.mb or (2.0 if args.quick else 50.0)
    passes = 1 if args.quick else PASSES
    print(f"{os.cpu_count()} CPU(s); load average {os.getloadavg()[0]:.2f}", flush=True)
    targets: list[results.Target] = []
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench_sources-") as folder:
        for source in WRITERS:
            sizes = [measure(source, Path(folder), full * share, max(1, round(COMPACTIONS * share)),
                             passes) for share in (0.25, 0.5, 1.0)]
            largest = sizes[-1]
            linearity = largest["s_per_mb"] / min(size["s_per_mb"] for size in sizes[:-1])
            figures[source] = sizes
            targets.append(results.Target(
                f"{source}: time per MB of the {largest['mb']:.0f} MB file over the smaller files'",
                linearity, TARGET_LINEARITY, at_least=False,
                note=f"{largest['compactions']} compactions, derive {largest['derive_mb_s']} MB/s"))
            print(f"  {source}: deriving runs at {largest['ratio']:.2f} of bare orjson.loads of every "
                  "line (the strict parse of each line, the replay and each pair's before and after)")
    results.save(results.results_dir(args.results, args.quick), "bench_sources", 1, targets, figures)
    return 0 if all(target.met for target in targets) else 1


if __name__ == "__main__":
    sys.exit(main())
