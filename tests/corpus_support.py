"""Small corpora for the corpus-audit tests: tiny realistic pairs, every kind of bad line.

Records are a few hundred bytes, so a test can audit dozens of them with mutation testing on in
well under a second. (No tests here: other `test_corpus_*` modules import these builders.)
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from tests.helpers import call, history, user

CONTRACT_TEXT = """\
version: 1
checks:
  tool_pairs:
    allow_trailing_pending_call: true
pins:
  - name: system-prompt
    role: system
retain:
  latest_user_message: exact
"""

COMPACTORS = ("keep_all", "window", "drop_result", "drop_system")
FAILING = {"drop_result": "tool_pair_integrity", "drop_system": "pinned_content"}


def compact(before: list[dict[str, Any]], compactor: str) -> list[dict[str, Any]]:
    if compactor == "keep_all":
        return list(before)
    if compactor == "window":
        return [before[0], *before[9:]]
    if compactor == "drop_result":
        return [m for m in before if not (m.get("role") == "tool" and m.get("tool_call_id") == "c2")]
    if compactor == "drop_system":
        return before[1:]
    raise ValueError(compactor)


def record(index: int, compactor: str | None = None, night: int = 0, **extra: Any) -> dict[str, Any]:
    """One good input record; `compactor` cycles through COMPACTORS by default."""
    name = compactor or COMPACTORS[index % len(COMPACTORS)]
    before = history(3)
    before[2] = call("c0", content=f"looking up item {index}")
    return {
        "pair_id": f"p{index:04d}",
        "session_id": f"s{index % 7}",
        "compactor": name,
        "logged_at": f"2025-06-{2 + night:02d}T{index % 24:02d}:15:00Z",
        "before": before,
        "after": compact(before, name),
        **extra,
    }


def line(value: dict[str, Any]) -> bytes:
    return orjson.dumps(value) + b"\n"


BAD_LINES: dict[str, tuple[bytes, str]] = {
    # kind: (the line, a fragment its reason must contain)
    "invalid_json": (line(record(900))[:-2] + b",}\n", "invalid JSON"),
    "truncated": (line(record(901))[:120] + b"\n", "invalid JSON"),
    "duplicate_keys": (b'{"before": [], "before": [], "after": []}\n', "duplicate key 'before'"),
    "nan": (b'{"before": [{"role": "user", "content": "x", "score": NaN}], "after": []}\n', "NaN"),
    "wrong_types": (line({**record(902), "after": [{"role": "user", "content": 42}]}),
                    "after: messages[0].content must be"),
    "missing_after": (line({k: v for k, v in record(903).items() if k != "after"}), "after is missing"),
    "not_a_list": (line({**record(904), "after": json.dumps([user()])}),
                   "after must be an array of message objects, got a string"),
    "undecodable": (line(record(905)).replace(b"latest request", b"caf\xe9 cr\xe8me"), "not valid UTF-8"),
    "not_an_object": (b"[1, 2, 3]\n", "a record must be a JSON object, got an array"),
    "bad_time": (line({**record(906), "logged_at": "yesterday"}), "is not an RFC 3339 time"),
    "compactor_type": (line({**record(907), "compactor": 7}), "compactor must be a string"),
    "unknown_format": (line({**record(908), "format": "palm"}), "format must be one of openai, "),
    "deep": (b'{"before": ' + b"[" * 600 + b"]" * 600 + b', "after": []}\n', "nested deeper"),
    "oversized": (line({**record(909), "padding": "x" * 6000}), "over --max-record-bytes"),
}
"""Every kind of bad line; audits using them set `max_record_bytes=5000`."""
MAX_RECORD_BYTES = 5000


def write_jsonl(path: Path, lines: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(lines)
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(data))
    elif path.name.endswith(".zst"):
        with pa.output_stream(str(path), compression="zstd") as stream:
            stream.write(data)
    else:
        path.write_bytes(data)
    return path


def good_lines(count: int, start: int = 0, night: int = 0, **extra: Any) -> list[bytes]:
    return [line(record(start + i, night=night, **extra)) for i in range(count)]


def write_parquet(path: Path, records: list[dict[str, Any]], nested: bool = False,
                  row_group_size: int | None = None) -> Path:
    """Records as Parquet: before/after as JSON strings, or (nested) as lists of structs."""
    rows = []
    for rec in records:
        row = dict(rec)
        if not nested:
            row["before"] = json.dumps(rec["before"])
            row["after"] = json.dumps(rec["after"])
        rows.append(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), str(path), row_group_size=row_group_size)
    return path


def write_contract(folder: Path) -> Path:
    path = folder / "contract.yaml"
    path.write_text(CONTRACT_TEXT, encoding="utf-8")
    return path


def mixed_corpus(folder: Path) -> tuple[Path, int]:
    """A corpus of every supported format and every bad kind; returns (folder, records)."""
    bad = [value for value, _ in BAD_LINES.values()]
    write_jsonl(folder / "night0.jsonl", good_lines(12) + bad[:7] + good_lines(5, start=40))
    write_jsonl(folder / "night1.jsonl.gz", good_lines(8, start=100, night=1) + bad[7:])
    write_jsonl(folder / "night2.jsonl.zst", good_lines(6, start=200, night=2))
    write_parquet(folder / "sub" / "strings.parquet", [record(300 + i, night=1) for i in range(5)])
    write_parquet(folder / "sub" / "nested.parquet", [record(400 + i, night=2) for i in range(4)],
                  nested=True, row_group_size=2)
    return folder, 12 + 5 + 8 + 6 + 5 + 4 + len(bad)
