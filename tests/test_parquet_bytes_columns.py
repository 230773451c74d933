"""Parquet JSON columns read as UTF-8 bytes: the same records, sizes, hashes and problems as text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.corpus.inputs import shard_reader
from frayproof_audit.corpus.inputs.expansion import InputFile
from frayproof_audit.corpus.inputs.field_map import FieldMap
from frayproof_audit.corpus.inputs.record_fields import FieldReader
from frayproof_audit.corpus.inputs.shard_plan import plan
from frayproof_audit.corpus.inputs.shard_reader import Raw, read_shard

JSON_COLUMNS = frozenset({"before", "after"})
_text = st.text(st.characters(codec="utf-8"), max_size=40)


def _read(path: Path, json_columns: frozenset[str]) -> list[Raw]:
    source = InputFile(str(path), "parquet", path.stat().st_size)
    rows: list[Raw] = []
    for shard in plan((source,), 1 << 20):
        rows.extend(read_shard(shard, 1 << 20, None, json_columns))
    return rows


def _as_text(raw: Raw) -> Raw:
    """`raw` with its byte cells of the JSON columns decoded (what the text reading gives)."""
    if raw.value is None:
        return raw
    value = {key: cell.decode() if key in JSON_COLUMNS and type(cell) is bytes else cell
             for key, cell in raw.value.items()}
    return raw._replace(value=value)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.fixed_dictionaries({
            "pair_id": _text,
            "before": st.none() | _text,
            "after": _text,
            "blob": st.binary(max_size=12),
            "n": st.integers(-5, 5),
        }),
        min_size=1, max_size=8,
    ),
    piece=st.sampled_from([1, 3, 7, 1 << 20]),
    page_rows=st.sampled_from([1, 3, 1024]),
)
def test_bytes_columns_read_the_same_records_as_text(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict[str, Any]], piece: int, page_rows: int
) -> None:
    path = tmp_path_factory.mktemp("pq") / "in.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=4, write_batch_size=page_rows)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shard_reader, "_PIECE", piece)  # big texts are hashed piece by piece
        as_text = _read(path, frozenset())
        as_bytes = _read(path, JSON_COLUMNS)
    assert [_as_text(raw) for raw in as_bytes] == as_text
    assert all(type(raw.value["after"]) is bytes for raw in as_bytes)
    assert [raw.value["blob"] for raw in as_bytes] == [row["blob"] for row in rows]


def test_broken_utf8_in_a_json_column_is_the_same_problem_either_way(tmp_path: Path) -> None:
    broken = pa.array([b'[{"role":"user"}]', b"[\xff]", b"[]"], pa.binary()).view(pa.string())
    table = pa.table({"pair_id": ["a", "b", "c"], "before": broken, "after": ["[]", "[]", "[]"]})
    pq.write_table(table, tmp_path / "in.parquet", write_batch_size=1)
    as_text = _read(tmp_path / "in.parquet", frozenset())
    as_bytes = _read(tmp_path / "in.parquet", JSON_COLUMNS)
    assert [_as_text(raw) for raw in as_bytes] == as_text
    assert [raw.problem is not None for raw in as_text] == [False, True, False]


def test_json_columns_are_before_after_and_tools_when_no_other_field_reads_them() -> None:
    reader = FieldReader(FieldMap(), (), True, "openai")
    assert reader.json_columns() == {"before", "after", "tools"}
    shared = FieldReader(FieldMap().with_specs({"pair_id": "before", "after": "x.after"}), (), True, "openai")
    assert shared.json_columns() == {"x.after", "tools"}
