"""The command line every doc generator of `scripts/` shares: rewrite a document from its
generated regions, or (`--check`) only say whether it is up to date (exit 1 if not)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path


def rewrite(argv: Sequence[str] | None, description: str, default: Path,
            render: Callable[[str], str], what: str) -> int:
    """`render` the document at PATH (default `default`) and write it back when it changed,
    printing that `what` was rewritten."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("path", nargs="?", type=Path, default=default,
                        help=f"default: {default.parent.name}/{default.name}")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    args = parser.parse_args(argv)
    current = args.path.read_text(encoding="utf-8")
    fresh = render(current)
    if args.check:
        if fresh != current:
            print(f"{args.path} is out of date: run `make docs`")
            return 1
        print(f"{args.path} is up to date")
        return 0
    if fresh != current:
        args.path.write_text(fresh, encoding="utf-8")
        print(f"rewrote the {what} of {args.path}")
    return 0
