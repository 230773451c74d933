"""Write `examples/corpus/`: four nights of logged compactions, as a team's logger would leave them.

    python examples/make_corpus.py            # rewrites examples/corpus/ (deterministic)
    python examples/make_corpus.py --check    # exit 1 if the committed files are out of date

Sessions come from `sessiongen.realistic` (realistic agent sessions, three good compactors and six
buggy ones), with every text cut to a few hundred characters so the whole corpus stays
commit-sized. Each night is logged in a different format, the way logging setups drift:

    2025-06-02/compactions.jsonl        plain JSON Lines
    2025-06-03/compactions.jsonl.gz     gzip
    2025-06-04/compactions.parquet      Parquet, before/after as JSON strings
    2025-06-05/compactions.jsonl.zst    zstd

and a few nights hold bad lines a real logger writes (a trailing comma, a line cut short, a
NaN, a double-encoded list, Latin-1 bytes ...). The files depend only on `SEED` and the
generator's `CORPUS_VERSION`.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sessiongen.realistic import (  # noqa: E402 - the repository root is on sys.path only now
    BAD_KINDS,
    COMPACTOR_WEIGHTS,
    COMPACTORS,
    CORPUS_VERSION,
    NotApplicable,
    bad_line,
    dump_record,
    generate_session,
    logged_at,
)

SEED = 20250602
MAX_TEXT = 360
MAX_TOOL_TEXT = 1100
"""Longest text kept in a message / a tool result (characters): realistic texture, commit-sized
files, and tool results still long enough for a compactor that clips them at 500 or 1000."""

NIGHTS = (
    # (folder, file name, good pairs, bad lines)
    ("2025-06-02", "compactions.jsonl", 80, 3),
    ("2025-06-03", "compactions.jsonl.gz", 90, 3),
    ("2025-06-04", "compactions.parquet", 90, 0),
    ("2025-06-05", "compactions.jsonl.zst", 60, 2),
)
CORPUS = REPO / "examples" / "corpus"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut if cut > limit // 2 else limit] + " …"


def _shrink(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    limit = MAX_TOOL_TEXT if message.get("role") == "tool" else MAX_TEXT
    if isinstance(content, str):
        return {**message, "content": _cut(content, limit)}
    if isinstance(content, list):
        blocks = [
            {**block, "text": _cut(block["text"], limit)} if isinstance(block.get("text"), str) else block
            for block in content
        ]
        return {**message, "content": blocks}
    return message


def make_pair(rng: random.Random, index: int, night: int) -> dict[str, Any]:
    """One record: a short realistic session and what a weighted-random compactor made of it."""
    names = list(COMPACTOR_WEIGHTS)
    name = rng.choices(names, weights=[COMPACTOR_WEIGHTS[n] for n in names])[0]
    for _ in range(60):
        before = [_shrink(m) for m in generate_session(rng, rng.randint(10, 36))]
        try:
            after = COMPACTORS[name](before, rng)
        except NotApplicable:
            continue
        session = f"sess_{rng.getrandbits(48):012x}"
        return {
            "pair_id": f"{session}:{index:04d}",
            "session_id": session,
            "compactor": name,
            "logged_at": logged_at(night, (index + rng.random()) / 120),
            "before": before,
            "after": after,
        }
    raise RuntimeError(f"{name}: no applicable session")


def night_lines(rng: random.Random, night: int, good: int, bad: int, kinds: list[str]) -> list[bytes]:
    records = [make_pair(rng, index, night) for index in range(good)]
    lines = [dump_record(record, rng) for record in records]
    for slot in range(bad):
        position = (slot + 1) * len(lines) // (bad + 1)
        lines.insert(position, bad_line(kinds.pop(0), records[position], rng))
    return lines


def write(folder: Path) -> list[Path]:
    rng = random.Random(SEED)
    kinds = [BAD_KINDS[i % len(BAD_KINDS)] for i in range(sum(n[3] for n in NIGHTS))]
    written = []
    for night, (day, name, good, bad) in enumerate(NIGHTS):
        target = folder / day / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".parquet"):
            records = [make_pair(rng, index, night) for index in range(good)]
            rows = [{**r, "before": _json(r["before"]), "after": _json(r["after"])} for r in records]
            pq.write_table(pa.Table.from_pylist(rows), str(target), row_group_size=32,
                           compression="zstd")
        else:
            data = b"".join(night_lines(rng, night, good, bad, kinds))
            if name.endswith(".gz"):
                import gzip

                target.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
            elif name.endswith(".zst"):
                sink = pa.BufferOutputStream()
                with pa.CompressedOutputStream(sink, "zstd") as stream:
                    stream.write(data)
                target.write_bytes(sink.getvalue().to_pybytes())
            else:
                target.write_bytes(data)
        written.append(target)
    return written


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CORPUS, help="folder to write (default: examples/corpus)")
    parser.add_argument("--check", action="store_true", help="only verify the committed files")
    args = parser.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as scratch:
            fresh = write(Path(scratch))
            stale = [
                path.relative_to(scratch) for path in fresh
                if not (args.out / path.relative_to(scratch)).is_file()
                or (args.out / path.relative_to(scratch)).read_bytes() != path.read_bytes()
            ]
        if stale:
            print(f"out of date (generator version {CORPUS_VERSION}): {', '.join(map(str, stale))}")
            return 1
        print("examples/corpus is up to date")
        return 0
    paths = write(args.out)
    total = sum(p.stat().st_size for p in paths)
    for path in paths:
        print(f"{path.relative_to(REPO) if REPO in path.parents else path}  {path.stat().st_size:,} bytes")
    print(f"{sum(n[2] for n in NIGHTS)} good pairs, {sum(n[3] for n in NIGHTS)} bad lines,"
          f" {total / 1e6:.2f} MB (generator version {CORPUS_VERSION}, seed {SEED})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
