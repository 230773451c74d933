"""Write `examples/corpus/`: eight nights of logged compactions, as a team's logger would leave them.

    python examples/make_corpus.py            # rewrites examples/corpus/ (deterministic)
    python examples/make_corpus.py --check    # exit 1 if the committed files are out of date

Sessions come from `sessiongen.realistic` (realistic agent sessions, three good compactors and six
buggy ones), with every text cut to a few hundred characters so the whole corpus stays
commit-sized. Each night is logged differently, the way logging setups drift:

    2025-06-02/compactions.jsonl        plain JSON Lines
    2025-06-03/compactions.jsonl.gz     gzip
    2025-06-04/compactions.parquet      Parquet, before/after as JSON strings
    2025-06-05/compactions.jsonl.zst    zstd
    2025-06-06/compactions.jsonl.gz     the agent moved to Anthropic: records say "format": "anthropic"
    2025-06-07/compactions.jsonl.zst    ... and to the OpenAI Responses API: "format": "openai-responses"
    2025-06-08/compactions.jsonl        a quiet night: four pairs (noise, never a trend)
    2025-06-09/compactions.jsonl.gz     release 2.4 of summary_keep_last_n: a planted regression

and a few nights hold bad lines a real logger writes (a trailing comma, a line cut short, a
NaN, a double-encoded list, Latin-1 bytes ...).

The planted regression: on the last night the good `summary_keep_last_n` compactor ships a
release whose new token budget ends the window one message early: the pending request, the
user's last message, is cut (`retention`: `RET-LATEST`). `frayproof-audit trend`
finds exactly that night; the quiet night before it swings wildly on four pairs and must not
trip the gate. The files depend only on `SEED` and the generator's `CORPUS_VERSION`.
"""

from __future__ import annotations

import argparse
import json
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

from sessiongen.anthropic_wire import (  # noqa: E402 - the repository root is on sys.path only now
    NotExpressible,
    to_anthropic,
)
from sessiongen.realistic import (  # noqa: E402
    BAD_KINDS,
    COMPACTOR_WEIGHTS,
    COMPACTORS,
    CORPUS_VERSION,
    NotApplicable,
    bad_line,
    dump_record,
    generate_session,
    logged_at,
    summary_keep_last_n,
)
from sessiongen.responses_items import representable, to_items  # noqa: E402

SEED = 20250602
MAX_TEXT = 360
MAX_TOOL_TEXT = 1100
"""Longest text kept in a message / a tool result (characters): realistic texture, commit-sized
files, and tool results still long enough for a compactor that clips them at 500 or 1000."""

NIGHTS = (
    # (folder, file name, good pairs, bad lines, wire format, regressed release)
    ("2025-06-02", "compactions.jsonl", 80, 3, "openai", False),
    ("2025-06-03", "compactions.jsonl.gz", 90, 3, "openai", False),
    ("2025-06-04", "compactions.parquet", 90, 0, "openai", False),
    ("2025-06-05", "compactions.jsonl.zst", 60, 2, "openai", False),
    ("2025-06-06", "compactions.jsonl.gz", 70, 0, "anthropic", False),
    ("2025-06-07", "compactions.jsonl.zst", 70, 0, "openai-responses", False),
    ("2025-06-08", "compactions.jsonl", 4, 0, "openai", False),
    ("2025-06-09", "compactions.jsonl.gz", 80, 0, "openai", True),
)
REGRESSED = "summary_keep_last_n"
"""The compactor whose release regresses on the last night (same name: a release, not a new one)."""
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


def release_2_4(messages: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """`summary_keep_last_n` 2.4: its new token budget ends the window one message early, so a
    pending request (a session that ends on the user's message) is cut."""
    after = summary_keep_last_n(messages, rng)
    return after[:-1] if after and after[-1].get("role") == "user" else after


def make_pair(rng: random.Random, index: int, night: int, wire: str = "openai",
              regressed: bool = False) -> dict[str, Any]:
    """One record: a short realistic session and what a weighted-random compactor made of it,
    in the night's wire format."""
    names = list(COMPACTOR_WEIGHTS)
    name = rng.choices(names, weights=[COMPACTOR_WEIGHTS[n] for n in names])[0]
    compactor = release_2_4 if regressed and name == REGRESSED else COMPACTORS[name]
    for _ in range(60):
        before = [_shrink(m) for m in generate_session(rng, rng.randint(10, 36))]
        if wire == "anthropic":  # a tool_use block holds an object: its JSON text is compact
            before = [_compact_arguments(m) for m in before]
        try:
            after = compactor(before, rng)
            snapshots = _in_wire(wire, before, after)
        except (NotApplicable, NotExpressible):
            continue
        session = f"sess_{rng.getrandbits(48):012x}"
        return {
            "pair_id": f"{session}:{index:04d}",
            "session_id": session,
            "compactor": name,
            "logged_at": logged_at(night, (index + rng.random()) / 120),
            **({} if wire == "openai" else {"format": wire}),
            "before": snapshots[0],
            "after": snapshots[1],
        }
    raise RuntimeError(f"{name}: no applicable session")


def _compact_arguments(message: dict[str, Any]) -> dict[str, Any]:
    calls = message.get("tool_calls")
    if not calls:
        return message
    return {**message, "tool_calls": [
        {**call, "function": {**call["function"], "arguments": json.dumps(
            json.loads(call["function"]["arguments"]), separators=(",", ":"), ensure_ascii=False)}}
        for call in calls
    ]}


def _in_wire(wire: str, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> tuple[Any, Any]:
    """The pair as the night's logger wrote it (NotExpressible when that wire cannot say it)."""
    if wire == "anthropic":
        return to_anthropic(before)[0], to_anthropic(after)[0]
    if wire == "openai-responses":
        chat = representable(before), representable(after)
        if chat[0] is None or chat[1] is None:
            raise NotExpressible("no Responses spelling")
        return to_items(chat[0]).items, to_items(chat[1]).items
    return before, after


def night_lines(rng: random.Random, night: int, good: int, bad: int, kinds: list[str],
                wire: str = "openai", regressed: bool = False) -> list[bytes]:
    records = [make_pair(rng, index, night, wire, regressed) for index in range(good)]
    lines = [dump_record(record, rng) for record in records]
    for slot in range(bad):
        position = (slot + 1) * len(lines) // (bad + 1)
        lines.insert(position, bad_line(kinds.pop(0), records[position], rng))
    return lines


def write(folder: Path) -> list[Path]:
    rng = random.Random(SEED)
    kinds = [BAD_KINDS[i % len(BAD_KINDS)] for i in range(sum(n[3] for n in NIGHTS))]
    written = []
    for night, (day, name, good, bad, wire, regressed) in enumerate(NIGHTS):
        target = folder / day / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".parquet"):
            records = [make_pair(rng, index, night) for index in range(good)]
            rows = [{**r, "before": _json(r["before"]), "after": _json(r["after"])} for r in records]
            pq.write_table(pa.Table.from_pylist(rows), str(target), row_group_size=32,
                           compression="zstd")
        else:
            data = b"".join(night_lines(rng, night, good, bad, kinds, wire, regressed))
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
