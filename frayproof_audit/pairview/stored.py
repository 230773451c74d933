"""Pairs of an audit dataset shown with their messages: their `pairs` rows, findings and
surviving mutants from the tables, their before and after read back from the recorded input.

The tables hold where a record came from, never the snapshots, so every view reads its record
again (`corpus.dataset.record_readback`, or `derived_readback` for a pair an agent log was
derived into) and shows it only when it is the record audited. When it is not (the input moved,
was rotated away, or changed), the pair is still shown with its findings, and `notice` says why
its messages are not. Columns a newer dataset adds (`source_kind`, `fidelity`, `event`,
`trigger`, `tokens_before`, `tokens_after`; `findings.origin`) are shown where they are present
and read as absent where they are not.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import orjson
import polars as pl

from frayproof_audit.corpus.dataset.derived_readback import DerivedRef, is_derived, iter_derived
from frayproof_audit.corpus.dataset.record_readback import (
    DEFAULT_LIMIT,
    ReadBack,
    ReadOptions,
    RecordRef,
    iter_read_back,
    snapshots,
)
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.inputs.field_map import FieldMap
from frayproof_audit.corpus.inputs.record_fields import RecordProblem
from frayproof_audit.errors import InputError
from frayproof_audit.formats import get_format
from frayproof_audit.pairview.view import (
    Finding,
    PairView,
    Survivor,
    build_view,
    findings_only,
    survivor_rule,
)
from frayproof_audit.report import EXIT_INPUT_ERROR

PROVENANCE = ("source_kind", "fidelity", "event", "trigger", "tokens_before", "tokens_after")
"""`pairs` columns that say how a pair derived from an agent log was made, shown when present."""
FINDING_COLUMNS = ("check", "code", "severity", "snapshot", "message_index", "message", "tool_call_id",
                   "pin", "rule", "repairable", "origin")


@dataclass(frozen=True, slots=True)
class StoredPair:
    """A `pairs` row, as a pair's header shows it."""

    run_id: str
    pair_id: str
    source: str
    source_row: int
    record_sha256: str
    status: str
    log_date: date
    compactor: str | None = None
    session_id: str | None = None
    logged_at: datetime | None = None
    format: str | None = None
    errors: int | None = None
    warnings: int | None = None
    survived: int | None = None
    bytes_before: int | None = None
    bytes_after: int | None = None
    problem: str | None = None
    """The `input_error` or `engine_error` of a pair that was not judged."""
    provenance: tuple[tuple[str, Any], ...] = ()
    """The agent-log columns of the row that are set (`fidelity`, `event`, ...)."""

    @property
    def parquet(self) -> bool:
        return self.source.lower().endswith(".parquet")

    @property
    def place(self) -> str:
        return f"{self.source} {'row' if self.parquet else 'line'} {self.source_row}"

    @property
    def source_kind(self) -> str | None:
        value = dict(self.provenance).get("source_kind")
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class ShownPair:
    """A pair with its view. `state` is `found` when the messages are shown; otherwise `notice`
    says why not (`gone`, `changed`, `unreadable`, `not judged`)."""

    pair: StoredPair
    view: PairView
    state: str
    notice: str = ""


@dataclass(frozen=True, slots=True)
class StoredViews:
    """What `show OUT PAIR` shows (one pair, or each record of a run that shares the id); it
    owns the exit code: 0 when every pair's messages were shown (or it was never judged, and
    its input error is what there is to show), 2 when an input is gone or changed."""

    shown: tuple[ShownPair, ...]

    @property
    def exit_code(self) -> int:
        return 0 if all(item.state in ("found", "not judged") for item in self.shown) else EXIT_INPUT_ERROR


class PairNotFound(InputError):
    """No committed run holds the pair asked for (exit 2)."""


def stored_pair(row: dict[str, Any]) -> StoredPair:
    return StoredPair(
        row["run_id"], row["pair_id"], row["source"], row["source_row"], row["record_sha256"],
        row["status"], row["log_date"], row.get("compactor"), row.get("session_id"), row.get("logged_at"),
        row.get("format"), row.get("errors"), row.get("warnings"), row.get("mutants_survived"),
        row.get("bytes_before"), row.get("bytes_after"), row.get("input_error") or row.get("engine_error"),
        tuple((name, row[name]) for name in PROVENANCE if row.get(name) is not None)
        if is_derived(row.get("source_kind")) else ())


def read_options(out: str | os.PathLike[str], run_ids: Sequence[str],
                 root: str | None) -> dict[str, ReadOptions]:
    """How each run read its inputs (its field map and record size limit, from `runs.options`)."""
    runs = (read_table(out, "runs").filter(pl.col("run_id").is_in(list(run_ids)))
            .select("run_id", "options").collect())
    found = {}
    for run_id, text in runs.iter_rows():
        try:
            options = orjson.loads(text) if text else {}
        except orjson.JSONDecodeError:
            options = {}
        fields = options.get("fields") if isinstance(options, dict) else None
        limit = options.get("max_record_bytes") if isinstance(options, dict) else None
        mapping = FieldMap().with_specs({k: v for k, v in fields.items() if isinstance(v, str)}) \
            if isinstance(fields, dict) else FieldMap()
        size = max(limit, DEFAULT_LIMIT) if isinstance(limit, int) else DEFAULT_LIMIT
        found[run_id] = ReadOptions(mapping, size, root)
    return found


def _finding(row: dict[str, Any]) -> Finding:
    return Finding(row["check"], row.get("code"), row["severity"], row["snapshot"], row.get("message_index"),
                   row["message"], row.get("tool_call_id"), row.get("pin"), row.get("rule"),
                   row.get("repairable"), row.get("origin"))


def _survivor(row: dict[str, Any]) -> Survivor:
    return Survivor(row["operator"], row.get("description") or "", tuple(row.get("sites") or ()),
                    survivor_rule(row["operator"], row.get("reason")))


def findings_by_pair(findings: pl.DataFrame) -> dict[tuple[str, str], list[Finding]]:
    found: dict[tuple[str, str], list[Finding]] = {}
    for row in findings.iter_rows(named=True):
        found.setdefault((row["run_id"], row["pair_id"]), []).append(_finding(row))
    return found


def survivors_by_pair(mutants: pl.DataFrame) -> dict[tuple[str, str], list[Survivor]]:
    found: dict[tuple[str, str], list[Survivor]] = {}
    for row in mutants.iter_rows(named=True):
        if row["status"] == "survived":
            found.setdefault((row["run_id"], row["pair_id"]), []).append(_survivor(row))
    return found


def show_pairs(pairs: Sequence[StoredPair], findings: dict[tuple[str, str], list[Finding]],
               survivors: dict[tuple[str, str], list[Survivor]], options: dict[str, ReadOptions],
               root: str | None = None) -> list[ShownPair]:
    """Each pair with its messages read back (one pass per input file), in the order given."""
    shown = {id(item.pair): item for item in iter_shown(pairs, findings, survivors, options, root)}
    return [shown[id(pair)] for pair in pairs]


def iter_shown(pairs: Sequence[StoredPair], findings: dict[tuple[str, str], list[Finding]],
               survivors: dict[tuple[str, str], list[Survivor]], options: dict[str, ReadOptions],
               root: str | None = None) -> Iterator[ShownPair]:
    """Each pair with its messages, as its record is read back: input file by input file (each
    read once per run), so a caller that draws each pair as it comes holds one record at a
    time. Pairs that were never judged come first, then the records, then the pairs derived
    from agent logs.

    A derived pair's record is a line of a file `pairs -o` wrote when that file was audited,
    and a line of the agent's own log when the log was: so its line is read back first, and
    only when that line holds no pair (a log line) is its file derived again."""
    records: dict[tuple[str, RecordRef], list[StoredPair]] = {}
    derived: dict[DerivedRef, list[StoredPair]] = {}
    for pair in pairs:
        if pair.format is None or pair.status not in ("pass", "fail"):
            found, kept = _of(pair, findings, survivors)
            yield ShownPair(pair, findings_only(found, kept), "not judged",
                            pair.problem or "the pair was not judged")
        else:
            ref = RecordRef(pair.source, pair.source_row, pair.record_sha256)
            records.setdefault((pair.run_id, ref), []).append(pair)
    by_run: dict[str, list[RecordRef]] = {}
    for run_id, ref in records:
        by_run.setdefault(run_id, []).append(ref)
    for run_id, refs in sorted(by_run.items()):
        run_options = options.get(run_id, ReadOptions(root=root))
        for result in iter_read_back(refs, run_options):
            for pair in records[(run_id, result.ref)]:
                shown = _from_record(pair, result, run_options, findings, survivors)
                if shown.state != "found" and is_derived(pair.source_kind):
                    derived.setdefault(_derived_ref(pair), []).append(pair)
                else:
                    yield shown
    for back in iter_derived(derived, root):
        for pair in derived[back.ref]:
            found, kept = _of(pair, findings, survivors)
            if back.state != "found":
                yield ShownPair(pair, findings_only(found, kept), back.state, back.reason)
            else:
                yield _viewed(pair, back.before, back.after, back.format or pair.format or "openai",
                              found, kept)


def _of(pair: StoredPair, findings: dict[tuple[str, str], list[Finding]],
        survivors: dict[tuple[str, str], list[Survivor]]) -> tuple[list[Finding], list[Survivor]]:
    key = (pair.run_id, pair.pair_id)
    return findings.get(key, []), survivors.get(key, [])


def _from_record(pair: StoredPair, result: ReadBack, options: ReadOptions,
                 findings: dict[tuple[str, str], list[Finding]],
                 survivors: dict[tuple[str, str], list[Survivor]]) -> ShownPair:
    found, kept = _of(pair, findings, survivors)
    if result.state != "found":
        return ShownPair(pair, findings_only(found, kept), result.state, result.reason)
    assert pair.format is not None
    try:
        before, after = snapshots(result, options, get_format(pair.format).containers)
    except RecordProblem as exc:
        return ShownPair(pair, findings_only(found, kept), "unreadable", f"{pair.place}: {exc}")
    return _viewed(pair, before, after, pair.format, found, kept)


def _derived_ref(pair: StoredPair) -> DerivedRef:
    assert pair.source_kind is not None
    return DerivedRef(pair.source_kind, pair.source, pair.source_row, pair.pair_id, pair.bytes_before,
                      pair.bytes_after)


def _viewed(pair: StoredPair, before_raw: Any, after_raw: Any, format_name: str,
            found: list[Finding], kept: list[Survivor]) -> ShownPair:
    fmt = get_format(format_name)
    try:  # detached copies: the view reads the values as they were logged
        before, after = fmt.load_copy(before_raw), fmt.load_copy(after_raw)
    except InputError as exc:
        return ShownPair(pair, findings_only(found, kept), "unreadable",
                         f"{pair.place}: it no longer loads as {format_name}: {exc}")
    return ShownPair(pair, build_view(before, after, before_raw, after_raw, found, kept), "found")


def pair_rows(out: str | os.PathLike[str], pair_id: str, run_id: str | None = None) -> list[StoredPair]:
    """The `pairs` rows of `pair_id`: of run `run_id`, else of the latest run holding it
    (several when one run read the same id more than once)."""
    frame = read_table(out, "pairs").filter(pl.col("pair_id") == pair_id)
    if run_id is not None:
        frame = frame.filter(pl.col("run_id") == run_id)
    rows = frame.collect()
    if rows.height == 0:
        where = f" in run '{run_id}'" if run_id is not None else ""
        raise PairNotFound(f"no pair '{pair_id}'{where} in '{os.fspath(out)}'")
    if run_id is None:
        runs = (read_table(out, "runs").filter(pl.col("run_id").is_in(rows["run_id"].unique().to_list()))
                .sort("started_at").select("run_id").collect())
        latest = runs["run_id"][-1]
        rows = rows.filter(pl.col("run_id") == latest)
    return [stored_pair(row) for row in rows.sort("source", "source_row").iter_rows(named=True)]


def show_stored(out: str | os.PathLike[str], pair_id: str, run_id: str | None = None,
                root: str | None = None) -> StoredViews:
    """`pair_id` of the dataset `out` with its messages, findings and survivors (`show OUT PAIR`)."""
    pairs = pair_rows(out, pair_id, run_id)
    run = pairs[0].run_id
    keys = pl.DataFrame({"run_id": [run], "pair_id": [pair_id]}).lazy()
    findings, mutants = pl.collect_all([
        read_table(out, "findings").join(keys, on=["run_id", "pair_id"], how="semi"),
        read_table(out, "mutants").join(keys, on=["run_id", "pair_id"], how="semi"),
    ])
    return StoredViews(tuple(show_pairs(pairs, findings_by_pair(findings), survivors_by_pair(mutants),
                                        read_options(out, [run], root), root)))
