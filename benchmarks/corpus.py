"""`python -m benchmarks.corpus OUT.jsonl --pairs N | --megabytes M`: write a realistic corpus.

The generator itself is `sessiongen.realistic` (shared with the tests and `examples/make_corpus.py`);
this module is its command line, and keeps `write_jsonl` / `write_contract` importable from
`benchmarks.corpus` for the benchmarks' users.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from sessiongen.realistic import write_contract, write_jsonl

__all__ = ["main", "write_contract", "write_jsonl"]


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
