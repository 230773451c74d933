"""Reading a pair's record back from its input (`corpus.dataset.record_readback`): a plain JSONL
file is read line by line at the lines' own offsets, a compressed one as a stream, a Parquet
file by the row groups holding the rows wanted; each gives the audit's record for every pair,
verified by its SHA-256, through a BOM, CRLF endings and blank lines, and says which records
are gone or changed.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.dataset.record_readback import ReadOptions, RecordRef, read_back
from frayproof_audit.pairview.stored import show_stored
from tests.corpus_support import CONTRACT_TEXT, line, record, write_parquet

LINES = 1500


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[RecordRef]]:
    folder = tmp_path_factory.mktemp("readback")
    pieces = [b"\xef\xbb\xbf" + line(record(0))]
    for number in range(1, LINES):
        text = line(record(number))
        pieces.append(text[:-1] + b"\r\n" if number % 3 == 0 else text)
        if number % 500 == 0:
            pieces.append(b"\n   \n")  # blank lines: rows the audit skips, still counted
    (folder / "in").mkdir()
    (folder / "in" / "a.jsonl").write_bytes(b"".join(pieces))
    with gzip.open(folder / "in" / "b.jsonl.gz", "wb") as handle:
        handle.write(b"".join(pieces))
    (folder / "contract.yaml").write_text(CONTRACT_TEXT, encoding="utf-8")
    audit([str(folder / "in")], str(folder / "contract.yaml"), str(folder / "out"), jobs=1, run_id="r",
          fail_on=("none",), mutate=False)
    pairs = read_table(folder / "out", "pairs").select("source", "source_row", "record_sha256").collect()
    return folder, [RecordRef(*row) for row in pairs.iter_rows()]


def test_plain_and_compressed_inputs_give_back_every_audited_record(
        audited: tuple[Path, list[RecordRef]]) -> None:
    _, refs = audited
    found = read_back(refs)
    assert len(found) == 2 * LINES and {back.state for back in found.values()} == {"found"}
    plain = {ref.source_row: found[ref].record for ref in refs if ref.source.endswith("a.jsonl")}
    packed = {ref.source_row: found[ref].record for ref in refs if ref.source.endswith(".gz")}
    assert plain == packed and len(plain) == LINES
    assert plain[1] is not None and plain[1]["pair_id"] == "p0000"  # after the BOM
    last = max(plain)
    assert last == LINES + 2 * len(range(500, LINES, 500))  # the blank lines are counted
    assert plain[last] is not None and plain[last]["pair_id"] == f"p{LINES - 1:04d}"


def test_a_few_records_of_a_file_and_what_is_gone_or_changed(audited: tuple[Path, list[RecordRef]],
                                                              tmp_path: Path) -> None:
    folder, refs = audited
    plain = sorted((r for r in refs if r.source.endswith("a.jsonl")), key=lambda r: r.source_row)
    some = [plain[0], plain[734], plain[-1]]
    found = read_back(some)
    ids = [(found[r].record or {}).get("pair_id") for r in some]
    assert ids == ["p0000", "p0734", f"p{LINES - 1:04d}"]
    copy = tmp_path / "in"
    shutil.copytree(folder / "in", copy)
    data = (copy / "a.jsonl").read_bytes()
    (copy / "a.jsonl").write_bytes(data.replace(b'"p0734"', b'"p9999"', 1)[: len(data) // 2])
    moved = [RecordRef(str(copy / "a.jsonl"), r.source_row, r.record_sha256) for r in some]
    states = {r.source_row: (b.state, b.reason) for r, b in read_back(moved).items()}
    assert states[plain[0].source_row][0] == "found"
    assert states[plain[734].source_row][0] == "changed"
    assert "now holds another record than the one audited" in states[plain[734].source_row][1]
    assert states[plain[-1].source_row] == (
        "gone", f"'{copy / 'a.jsonl'}' has no line {plain[-1].source_row} any more (it is shorter, or that "
        "line is blank)")
    gone = read_back([RecordRef(str(tmp_path / "nothing.jsonl"), 1, "0" * 64)], ReadOptions())
    assert [b.state for b in gone.values()] == ["gone"]


def test_parquet_rows_are_read_back_from_their_row_groups_and_shown(tmp_path: Path) -> None:
    records = [record(number) for number in range(10)]
    write_parquet(tmp_path / "in" / "flat.parquet", records, row_group_size=3)
    renamed = [{**r, "pair_id": f"n{r['pair_id']}"} for r in records]
    write_parquet(tmp_path / "in" / "nested.parquet", renamed, nested=True, row_group_size=4)
    (tmp_path / "contract.yaml").write_text(CONTRACT_TEXT, encoding="utf-8")
    out = tmp_path / "out"
    audit([str(tmp_path / "in")], str(tmp_path / "contract.yaml"), str(out), jobs=1, run_id="pq",
          fail_on=("none",), mutate=False)
    pairs = read_table(out, "pairs").select("source", "source_row", "record_sha256").collect()
    refs = [RecordRef(*row) for row in pairs.iter_rows()]
    assert len(refs) == 20 and {back.state for back in read_back(refs).values()} == {"found"}
    for pair_id in ("p0006", "np0007"):
        (shown,) = show_stored(out, pair_id).shown
        assert shown.state == "found" and shown.pair.place.endswith(f"row {int(pair_id[-1])}")
        assert shown.view.findings and all(item.anchor is not None for item in shown.view.findings)
