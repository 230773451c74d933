"""`python -m benchmarks.corpus OUT.jsonl --pairs N | --megabytes M`: write a realistic corpus.

The generator itself is `sessiongen.realistic` (shared with the tests and `examples/make_corpus.py`);
this module is its command line, and keeps `write_jsonl` / `write_contract` importable from
`benchmarks.corpus` for the benchmarks' users.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from sessiongen import realistic
from sessiongen.realistic import write_contract, write_jsonl

__all__ = ["big_lines", "main", "small_lines", "write_contract", "write_jsonl"]

SMALL_RANGE = (1_000, 5_000)
"""Bytes of a small record (`small_lines`): where per-record overhead dominates."""


def _record(rng: random.Random, before: list[Any], number: int) -> dict[str, Any]:
    try:
        after = realistic.keep_last_window(before, rng)
    except realistic.NotApplicable:
        after = list(before)
    return {"pair_id": f"pair-{number}", "session_id": f"sess-{number}",
            "compactor": "keep_last_window", "logged_at": realistic.logged_at(0, rng.random()),
            "before": before, "after": after}


def small_lines(target_bytes: int, seed: int = 0) -> Iterator[bytes]:
    """Realistic records of 1–5 KB each (short sessions, short tool results) until
    `target_bytes`, written by the same two producers as the main corpus."""
    rng = random.Random(seed)
    written = number = 0
    while written < target_bytes:
        before = [_shortened(message, rng) for message in
                  realistic.generate_session(rng, rng.randint(4, 12), max_result=200)]
        line = realistic.dump_record(_record(rng, before, number), rng)
        if SMALL_RANGE[0] <= len(line) <= SMALL_RANGE[1]:
            written += len(line)
            number += 1
            yield line


def _shortened(message: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A message whose long text content is cut to 80–300 characters (system prompts, answers)."""
    content = message.get("content")
    if type(content) is str and len(content) > 300:
        return {**message, "content": content[: rng.randint(80, 300)]}
    return message


def big_lines(record_bytes: int, records: int, seed: int = 0) -> Iterator[bytes]:
    """`records` compact records of about `record_bytes` each: realistic sessions joined into
    one very long one (for memory measurements; verdicts do not matter)."""
    rng = random.Random(seed)
    for number in range(records):
        before: list[Any] = []
        size = 0
        while size < record_bytes:
            session = realistic.generate_session(rng, 400)
            before.extend(session if not before else session[1:])
            size += len(orjson.dumps(session))
        yield orjson.dumps(_record(rng, before, number)) + b"\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.corpus",
        description="Write a deterministic, realistic JSONL corpus of compaction pairs.",
    )
    parser.add_argument("out", type=Path, help="output file (.jsonl, or .jsonl.gz)")
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--pairs", type=int, help="number of good pair records")
    size.add_argument("--megabytes", type=float, help="write good records until this size")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--nights", type=int, default=1, help="spread logged_at over N nights")
    parser.add_argument("--bad", type=int, default=0, help="bad lines to mix in (cycling kinds)")
    parser.add_argument("--contract", type=Path, help="also write the benchmark contract here")
    args = parser.parse_args(argv)
    target = int(args.megabytes * 1_000_000) if args.megabytes is not None else None
    lines = write_jsonl(args.out, args.pairs, target, args.seed, args.nights, args.bad)
    megabytes = args.out.stat().st_size / 1e6
    print(f"wrote {lines} lines ({megabytes:.1f} MB) to {args.out}")
    if args.contract is not None:
        write_contract(args.contract)
        print(f"wrote the benchmark contract to {args.contract}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
