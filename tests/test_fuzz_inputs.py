"""A seeded fuzz of the corpus reader: thousands of damaged records, and every one a `pairs` row.

The records start as good ones (`tests.corpus_support.record`) and are damaged at the value
level (wrong types, huge and tiny numbers, odd times) and at the byte level (invalid UTF-8, a
BOM, NUL, lone surrogate escapes, deep nesting, huge integers, truncation, CRLF, `\\x0b` and
`\\x0c` lines, no final newline). The expected number of rows is computed from the bytes alone:
one per line that is not blank (only space, tab, CR). The seed is fixed, so a failure
reproduces; change `SEED` locally to explore.
"""

from __future__ import annotations

import gzip
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from frayproof_audit.corpus import audit, read_table
from tests.corpus_support import line, record, write_contract
from tests.helpers import run_cli

SEED = 8_2025
RECORDS = 2400
MAX_RECORD_BYTES = 4000

ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 1.5, 2**63, 2**64, -(2**70), 1e308, -1e-308, "", "x", "\u2028",
    "\U0001f600", "\u0000", [], {}, [[]], {"a": None}, "0" * 300,
]
ODD_TIMES: list[Any] = [
    True, 0, -1, 1e11, 1e15, 10**30, -(10**20), 1.5e9, 99_999_999_999, 100_000_000_000,
    "2025-06-02T10:00:00+14:00", "2025-13-01", "", " ", "0000-01-01", "9999-12-31T23:59:59-23:59",
    "2025-06-02t10:00:00.123456789z", "2025-06-02 10:00", [], {},
]
FIELDS = ("before", "after", "pair_id", "session_id", "compactor", "logged_at", "format", "tools")
ESCAPES = [b"\\ud800", b"\\udfff", b"\\ud83d\\ude00", b"\\uDBFF", b"\\\\ud800", b"\\u0000"]


def _value_damage(rng: random.Random, value: dict[str, Any]) -> dict[str, Any]:
    choice = rng.randrange(6)
    if choice == 0:
        value[rng.choice(FIELDS)] = rng.choice(ODD_VALUES)
    elif choice == 1:
        value.pop(rng.choice(FIELDS), None)
    elif choice == 2:
        value["logged_at"] = rng.choice(ODD_TIMES)
    elif choice == 3:
        messages = value[rng.choice(("before", "after"))]
        if messages:
            message = rng.choice(messages)
            key = rng.choice(("role", "content", "tool_calls", "tool_call_id", "name"))
            if rng.random() < 0.3:
                message.pop(key, None)
            else:
                message[key] = rng.choice(ODD_VALUES)
    elif choice == 4:
        value["padding"] = "p" * rng.choice((MAX_RECORD_BYTES - 1950, MAX_RECORD_BYTES, 10_000))
    return value


def _byte_damage(rng: random.Random, data: bytes) -> bytes:
    choice = rng.randrange(11)
    position = rng.randrange(len(data))
    if choice == 0:  # an escape in a string: lone or paired surrogate, escaped backslash, NUL
        return data.replace(b'"compactor":"', b'"compactor":"' + rng.choice(ESCAPES), 1)
    if choice == 1:
        digits = rng.choice((4300, 4301, 20_000))
        return data[:-1] + b',"n":' + b"7" * digits + b"}"
    if choice == 2:
        return data[:position] + rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80")) + data[position:]
    if choice == 3:
        return data[:position] + b"\x00" + data[position:]
    if choice == 4:
        return b"\xef\xbb\xbf" + data
    if choice == 5:
        depth = rng.choice((400, 511, 512, 513, 5000))
        return data[:-1] + b',"deep":' + b"[" * depth + b"]" * depth + b"}"
    if choice == 6:
        return data[:position]
    if choice == 7:
        return data[:-1] + b',"before":[]}'
    if choice == 8:
        return data[:-1] + b',"s":' + rng.choice((b"NaN", b"-Infinity", b"1e999")) + b"}"
    if choice == 9:
        return data[:position] + bytes([rng.randrange(256)]) + data[position + 1 :]
    return data


def _serialize(rng: random.Random, value: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(value) if rng.random() < 0.7 else line(value)[:-1].replace(b",", b", ")
    except TypeError:  # an integer orjson cannot write: the standard library can
        import json

        return json.dumps(value).encode()


def fuzzed_lines(rng: random.Random, count: int) -> list[bytes]:
    """`count` records, a third damaged by value, a third by bytes, with odd lines between."""
    lines: list[bytes] = []
    for index in range(count):
        value = record(index)
        kind = rng.randrange(3)
        if kind == 1:
            value = _value_damage(rng, value)
        data = _serialize(rng, value)
        if kind == 2:
            data = _byte_damage(rng, data)
        lines.append(data + rng.choice((b"\n", b"\n", b"\r\n")))
        if rng.random() < 0.05:
            lines.append(rng.choice((b"\n", b"  \n", b"\t\r\n", b"\x0b\n", b"\x0c\r\n", b" \x0b \n")))
    return lines


def expected_rows(data: bytes) -> list[int]:
    """Line numbers of the lines that must become rows: every line that is not blank."""
    pieces = data.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()  # the file ended with a newline
    rows = []
    for number, piece in enumerate(pieces, 1):
        if piece.endswith(b"\r"):
            piece = piece[:-1]
        if number == 1 and piece.startswith(b"\xef\xbb\xbf"):
            piece = piece[3:]
        if piece.strip(b" \t\r\n"):
            rows.append(number)
    return rows


def _tree(root: Path, skip: Path) -> set[str]:
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if Path(folder, d) != skip]
        found.update(os.path.relpath(os.path.join(folder, name), root) for name in files)
    return found


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[int]]]:
    """The fuzzed files (three plain, one gzip, the last without a final newline) and the
    rows each must give."""
    folder = tmp_path_factory.mktemp("fuzz")
    rng = random.Random(SEED)
    lines = fuzzed_lines(rng, RECORDS)
    quarter = len(lines) // 4
    parts = [lines[i * quarter : (i + 1) * quarter] for i in range(3)] + [lines[3 * quarter :]]
    expected = {}
    for number, part in enumerate(parts):
        data = b"".join(part)
        if number == 2:
            data = data.rstrip(b"\r\n")  # no newline after the last line
        name = f"logs/part-{number}.jsonl" + (".gz" if number == 3 else "")
        path = folder / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(gzip.compress(data) if number == 3 else data)
        expected[name] = expected_rows(data)
    write_contract(folder)
    return folder, expected


def _check_rows(out: Path, expected: dict[str, list[int]]) -> None:
    pairs = read_table(out, "pairs").collect()
    assert pairs.height == sum(len(rows) for rows in expected.values())
    for name, rows in expected.items():
        got = pairs.filter(pairs["source"] == name).sort("source_row")["source_row"].to_list()
        assert got == rows, name


def test_every_fuzzed_line_is_one_row_in_process(
    corpus: tuple[Path, dict[str, list[int]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, expected = corpus
    monkeypatch.chdir(folder)
    before = _tree(folder, folder / "out-a")
    done = audit(["logs"], "contract.yaml", "out-a", jobs=1, mutate=True, fail_on=("none",),
                 max_record_bytes=MAX_RECORD_BYTES, shard_bytes=256 * 1024)
    assert not done.not_audited and done.exit_code == 0
    assert done.passed > 0 and done.input_errors > 0
    assert done.pairs == done.passed + done.failed + done.input_errors
    _check_rows(folder / "out-a", expected)
    assert _tree(folder, folder / "out-a") == before


def test_every_fuzzed_line_is_one_row_through_the_cli(corpus: tuple[Path, dict[str, list[int]]]) -> None:
    folder, expected = corpus
    before = _tree(folder, folder / "out-b")
    result = run_cli("audit", "logs", "--contract", "contract.yaml", "--out", "out-b", "-q",
                     "--jobs", "2", "--shard-bytes", str(256 * 1024), "--max-record-bytes",
                     str(MAX_RECORD_BYTES), "--no-mutate", "--fail-on", "input-errors",
                     expect=None, real=True, cwd=folder)
    assert result.exit_code == 1, result.stderr  # the input-errors gate, nothing worse
    assert "Traceback" not in result.stderr and "NOT AUDITED" not in result.stdout
    _check_rows(folder / "out-b", expected)
    assert _tree(folder, folder / "out-b") == before


def test_the_fuzz_reaches_every_kind_of_damage(corpus: tuple[Path, dict[str, list[int]]]) -> None:
    """Guards the generator itself: a refactor that stops producing a damage is noticed."""
    folder, _ = corpus
    data = b"".join(
        gzip.decompress(p.read_bytes()) if p.name.endswith(".gz") else p.read_bytes()
        for p in sorted((folder / "logs").iterdir())
    )
    needles: dict[str, Callable[[bytes], bool]] = {
        "lone surrogate": lambda d: b'"compactor":"\\ud800' in d,
        "paired surrogate": lambda d: b"\\ud83d\\ude00" in d,
        "huge integer": lambda d: b"7" * 4301 in d,
        "deep nesting": lambda d: b"[" * 513 in d,
        "BOM": lambda d: b"\xef\xbb\xbf" in d,
        "NUL": lambda d: b"\x00" in d,
        "CRLF": lambda d: b"\r\n" in d,
        "vertical tab line": lambda d: b"\n\x0b\n" in d,
        "form feed line": lambda d: b"\n\x0c\r\n" in d,
        "oversized": lambda d: b"p" * MAX_RECORD_BYTES in d,
        "NaN": lambda d: b"NaN" in d,
    }
    missing = [name for name, found in needles.items() if not found(data)]
    assert not missing
