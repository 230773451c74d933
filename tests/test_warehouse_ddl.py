"""The warehouse recipes of docs/nightly.md match the tables the audit writes.

No warehouse runs here, so the DDL is read as data: every column an Athena or Snowflake table
declares must exist in `SCHEMAS` with a type that reads it (Athena fails a query on a Parquet
column whose type differs from the table's), the full tables must name every column (a column
added to a table, such as `findings.repairable`, must reach the recipes too), BigQuery's
external tables over files with lists must infer lists, and the survival query said to run
"in any of these engines" uses only portable SQL and gives, in DuckDB over a real audit, the
numbers Polars counts from the same dataset.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pytest

from frayproof_audit.corpus import audit
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.store.arrow_tables import SCHEMAS

DOC = (Path(__file__).resolve().parent.parent / "docs" / "nightly.md").read_text(encoding="utf-8")
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def section(title: str) -> str:
    start = DOC.index(f"### {title}\n")
    end = DOC.find("\n### ", start + 1)
    return DOC[start:end if end >= 0 else len(DOC)]


def sql_blocks(text: str) -> list[str]:
    return re.findall(r"^```sql\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


def create_statements(text: str, keyword: str) -> dict[str, str]:
    """table name → the text between the column list's parentheses, for `keyword` tables."""
    found = {}
    for block in sql_blocks(text):
        for match in re.finditer(rf"{keyword} frayproof\.(\w+) \(\n(.*?)\n\)", block, re.DOTALL):
            found[match.group(1)] = match.group(2)
    return found


def top_level_items(columns: str) -> list[str]:
    """Column definitions split on the commas outside parentheses and angle brackets."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for character in re.sub(r"--[^\n]*", "", columns):
        if character in "(<":
            depth += 1
        elif character in ")>":
            depth -= 1
        if character == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
        else:
            current.append(character)
    items.append("".join(current).strip())
    return [item for item in items if item]


ATHENA_TYPES = {
    "string": pa.types.is_string,
    "int": lambda kind: kind == pa.int32(),
    "bigint": lambda kind: kind == pa.int64(),
    "double": lambda kind: kind == pa.float64(),
    "boolean": pa.types.is_boolean,
    "timestamp": pa.types.is_timestamp,
    "array<string>": lambda kind: pa.types.is_list(kind) and pa.types.is_string(kind.value_type),
}


def athena_tables() -> dict[str, list[tuple[str, str]]]:
    tables = create_statements(section("Athena"), "CREATE EXTERNAL TABLE")
    return {name: [(item.split()[0].strip("`"), item.split(None, 1)[1].strip())
                   for item in top_level_items(body)]
            for name, body in tables.items()}


def test_the_recipes_are_found() -> None:
    assert set(athena_tables()) == {"runs", "findings", "mutants"}
    assert set(snowflake_tables()) == {"runs", "findings"}


@pytest.mark.parametrize("table", ["runs", "findings", "mutants"])
def test_athena_tables_declare_every_column_with_a_type_that_reads_it(table: str) -> None:
    declared = athena_tables()[table]
    schema = SCHEMAS[table]
    assert [name for name, _ in declared] == schema.names
    for name, kind in declared:
        assert kind in ATHENA_TYPES, f"{table}.{name}: no mapping for Athena type {kind}"
        assert ATHENA_TYPES[kind](schema.field(name).type), \
            f"{table}.{name}: Athena {kind} does not read Parquet {schema.field(name).type}"


SNOWFLAKE_TYPES = {
    "VARCHAR": pa.types.is_string,
    "NUMBER": pa.types.is_integer,
    "FLOAT": pa.types.is_floating,
    "BOOLEAN": pa.types.is_boolean,
    "TIMESTAMP_NTZ": pa.types.is_timestamp,
    "ARRAY": pa.types.is_list,
}
SNOWFLAKE_COLUMN = re.compile(r'^("?\w+"?) (\w+) AS \(VALUE:("?)(\w+)\3::(\w+)\)$')
SNOWFLAKE_COMPLETE = {"findings"}
"""Tables given with every column (the others show a choice, the rest following the pattern)."""


def snowflake_tables() -> dict[str, list[tuple[str, str, str]]]:
    """table → (column, declared type, Parquet field) for the columns read from the row."""
    tables = create_statements(section("Snowflake"), "CREATE OR REPLACE EXTERNAL TABLE")
    out: dict[str, list[tuple[str, str, str]]] = {}
    for name, body in tables.items():
        rows = []
        for item in top_level_items(body):
            if "METADATA$FILENAME" in item:  # the partition, parsed from the path
                assert item.startswith("log_date DATE AS"), item
                continue
            match = SNOWFLAKE_COLUMN.match(" ".join(item.split()))
            assert match, f"{name}: cannot read the column definition {item!r}"
            column, kind, _, field, cast = match.groups()
            assert kind == cast, f"{name}.{column}: declared {kind} but cast to {cast}"
            assert column.strip('"') == field, f"{name}.{column} reads VALUE:{field}"
            rows.append((field, kind, field))
        out[name] = rows
    return out


@pytest.mark.parametrize("table", ["runs", "findings"])
def test_snowflake_columns_read_fields_that_exist_with_a_matching_type(table: str) -> None:
    schema = SCHEMAS[table]
    declared = snowflake_tables()[table]
    for column, kind, field in declared:
        assert field in schema.names, f"{table}.{column}: no Parquet column {field}"
        assert SNOWFLAKE_TYPES[kind](schema.field(field).type), \
            f"{table}.{column}: Snowflake {kind} for Parquet {schema.field(field).type}"
    if table in SNOWFLAKE_COMPLETE:
        assert [field for _, _, field in declared] == schema.names


def test_bigquery_infers_lists_exactly_where_the_files_hold_lists() -> None:
    blocks = "\n".join(sql_blocks(section("BigQuery")))
    tables = dict(re.findall(r"EXTERNAL TABLE frayproof\.(\w+)_files\n(.*?)\n\);", blocks, re.DOTALL))
    assert set(tables) == {"runs", "pairs", "findings", "mutants"}
    for table, options in tables.items():
        has_lists = any(pa.types.is_list(field.type) for field in SCHEMAS[table])
        assert ("enable_list_inference = TRUE" in options) == has_lists, table
        partitioned = "WITH PARTITION COLUMNS (log_date DATE)" in options
        assert partitioned == (table != "runs"), table
    named = re.search(r"reads Parquet lists\n?\s*\(([^)]*)\)", section("BigQuery"), re.DOTALL)
    assert named is not None
    for column in re.findall(r"`(\w+)`", named.group(1)):
        assert any(pa.types.is_list(SCHEMAS[t].field(column).type)
                   for t in SCHEMAS if column in SCHEMAS[t].names), column


def survival_query() -> str:
    after = DOC[DOC.index("Survival per\noperator and night"):]
    return sql_blocks(after)[0]


def test_the_survival_query_is_portable_sql() -> None:
    query = survival_query()
    # FILTER (WHERE ...) is not SQL that BigQuery or Snowflake read; CASE is read by all four
    assert "FILTER" not in query.upper()
    assert "CASE WHEN" in query.upper()


def test_the_survival_query_counts_what_polars_counts(tmp_path: Path) -> None:
    out = tmp_path / "audit-out"
    audit(str(EXAMPLES / "corpus"), str(EXAMPLES / "audit_contract.yaml"), str(out), jobs=1)
    connection = duckdb.connect()
    for table in ("runs", "mutants"):
        connection.register(table, read_table(out, table).collect().to_arrow())
    got = connection.sql(survival_query()).pl()
    mutants = read_table(out, "mutants").collect()
    want = (mutants.group_by("log_date", "operator")
            .agg(survived=(pl.col("status") == "survived").sum(),
                 judged=pl.col("status").is_in(["caught", "survived"]).sum())
            .sort("log_date", "operator"))
    assert got.height == want.height > 0
    assert got["survived"].cast(pl.Int64).to_list() == want["survived"].cast(pl.Int64).to_list()
    assert got["judged"].cast(pl.Int64).to_list() == want["judged"].cast(pl.Int64).to_list()
    assert got["operator"].to_list() == want["operator"].to_list()
    assert int(want["judged"].sum()) > 0
