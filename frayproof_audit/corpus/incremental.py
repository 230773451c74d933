"""`--incremental`: audit only what no committed run with the same contract fingerprint audited.

A nightly job pointed at an ever-growing log folder re-reads it every night; this makes it audit
only what is new. An incremental run records every input it audited in `runs.sources` (a JSON list):
its path, size, the SHA-256 of its bytes, and where a later run may resume in it (the end of its last
complete line, and the lines before that). The next incremental run, for each input:

* **unchanged** — same path, size and content hash as the latest committed incremental run with
  the same `Contract.fingerprint` recorded: skipped whole;
* **appended** — a plain JSONL file that grew and whose first `size` bytes still hash the same:
  only the lines from the resume point on are audited (numbered as in the whole file, so
  `pair_id` defaults and `source_row` stay stable; a last line that had no newline yet is
  audited again now that it is complete);
* **changed** (rewritten, truncated, a compressed or Parquet file that changed) or **new**: audited
  in full.

Hashing reads every input once more (at disk or network speed, far below the cost of auditing).
A run with another contract fingerprint, or a non-incremental run, never counts as "already
audited": changing the contract re-audits everything. Inputs with a shard that could not be
audited are not recorded, so the next run tries them again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from frayproof_audit.corpus import location, store
from frayproof_audit.corpus.newlines import count_newlines
from frayproof_audit.corpus.shards import open_source
from frayproof_audit.corpus.sources import Source, SourceError
from frayproof_audit.corpus.summary import Skipped

_CHUNK = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Audited:
    """One input as an incremental run audited it (a `runs.sources` entry)."""

    path: str
    size: int
    sha256: str
    resume_offset: int
    resume_line: int
    records: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "sha256": self.sha256,
                "resume_offset": self.resume_offset, "resume_line": self.resume_line,
                "records": self.records}


@dataclass(frozen=True, slots=True)
class _Scan:
    size: int
    sha256: str
    prefix_sha256: str | None
    """SHA-256 of the first `previous.size` bytes (None when the file is not longer)."""
    resume_offset: int
    resume_line: int


@dataclass(frozen=True, slots=True)
class Incremental:
    """The plan of an incremental run: what to audit, from where, and what was skipped."""

    sources: tuple[Source, ...]
    """Inputs to plan (unchanged ones left out)."""
    starts: dict[str, tuple[int, int]]
    """Appended JSONL path → (byte offset, lines before it) to start from."""
    skipped: Skipped
    scans: dict[str, _Scan] = field(default_factory=dict)
    earlier: dict[str, int] = field(default_factory=dict)
    """Appended path → records the earlier run audited in it (carried into this run's entry)."""

    def note(self) -> str | None:
        return None  # the summary prints `skipped` itself

    def audited(self, records: dict[str, int], not_audited: set[str]) -> list[dict[str, Any]]:
        """`runs.sources` of this run: each input it audited in full (appended: up to its end)."""
        entries = []
        for source in self.sources:
            scan = self.scans[source.path]
            if source.path in not_audited:
                continue
            total = self.earlier.get(source.path, 0) + records.get(source.path, 0)
            entries.append(Audited(source.path, scan.size, scan.sha256, scan.resume_offset,
                                   scan.resume_line, total).to_dict())
        return entries


def plan_incremental(sources: tuple[Source, ...], out: str, fingerprint: str) -> Incremental:
    """Which inputs (and which part of appended ones) still need auditing under `fingerprint`."""
    previous = earlier_audits(out, fingerprint)
    keep: list[Source] = []
    starts: dict[str, tuple[int, int]] = {}
    scans: dict[str, _Scan] = {}
    earlier: dict[str, int] = {}
    counts = dict.fromkeys(("unchanged", "unchanged_records", "appended", "appended_records",
                            "changed", "new"), 0)
    for source in sources:
        before = previous.get(source.path)
        scan = _scan(source, before.size if before is not None else None)
        if before is None:
            counts["new"] += 1
        elif scan.size == before.size and scan.sha256 == before.sha256:
            counts["unchanged"] += 1
            counts["unchanged_records"] += before.records
            continue
        elif (source.kind == "jsonl" and scan.size > before.size
              and scan.prefix_sha256 == before.sha256):
            counts["appended"] += 1
            counts["appended_records"] += before.records
            starts[source.path] = (before.resume_offset, before.resume_line)
            earlier[source.path] = before.records
        else:
            counts["changed"] += 1
        keep.append(source)
        scans[source.path] = scan
    skipped = Skipped(
        unchanged_inputs=counts["unchanged"], unchanged_records=counts["unchanged_records"],
        appended_inputs=counts["appended"], appended_records=counts["appended_records"],
        changed_inputs=counts["changed"], new_inputs=counts["new"],
    )
    return Incremental(tuple(keep), starts, skipped, scans, earlier)


def earlier_audits(out: str, fingerprint: str) -> dict[str, Audited]:
    """Path → the latest committed incremental run's entry for it, among runs with `fingerprint`."""
    latest: dict[str, tuple[Any, Audited]] = {}
    for row in _runs_rows(out):
        if row.get("contract_fingerprint") != fingerprint or not row.get("sources"):
            continue
        for entry in orjson.loads(row["sources"]):
            audited = Audited(**entry)
            seen = latest.get(audited.path)
            if seen is None or row["finished_at"] > seen[0]:
                latest[audited.path] = (row["finished_at"], audited)
    return {path: audited for path, (_, audited) in latest.items()}


_COLUMNS = ["contract_fingerprint", "sources", "finished_at"]


def _runs_rows(out: str) -> list[dict[str, Any]]:
    """The committed `runs` rows of `out` (only the columns incremental planning needs)."""
    found = store.output_location(out)
    rows: list[dict[str, Any]] = []
    if not isinstance(found, str):
        for run_id in store.committed_runs(found):
            path = found / store.RUNS_FOLDER / store.runs_name(run_id)
            try:
                rows.extend(_read(store.read_parquet(path)))
            except FileNotFoundError:
                continue
        return rows
    fs, root = location.filesystem(found)
    fs.invalidate_cache()
    for path in sorted(fs.glob(f"{root}/{store.RUNS_FOLDER}/part-*.parquet")):
        try:
            with fs.open(path, "rb") as handle:
                rows.extend(_read(store.read_handle(handle)))
        except FileNotFoundError:
            continue
    return rows


def _read(table: Any) -> list[dict[str, Any]]:
    names = [name for name in _COLUMNS if name in table.column_names]
    if "sources" not in names:
        return []  # written before incremental runs existed
    rows: list[dict[str, Any]] = table.select(names).to_pylist()
    return rows


def _scan(source: Source, prefix: int | None) -> _Scan:
    """Size, content hash, hash of the first `prefix` bytes, and the resume point (the end of
    the last complete line), reading the file once up to its size at expansion."""
    digest = hashlib.sha256()
    prefix_sha = None
    offset = newlines = resume = 0
    try:
        with open_source(source) as handle:
            while offset < source.size:
                chunk = handle.read(min(_CHUNK, source.size - offset))
                if not chunk:
                    break
                if prefix is not None and offset < prefix <= offset + len(chunk):
                    digest.update(chunk[: prefix - offset])
                    prefix_sha = digest.hexdigest()
                    digest.update(chunk[prefix - offset :])
                else:
                    digest.update(chunk)
                last = chunk.rfind(b"\n")
                if last >= 0:
                    resume = offset + last + 1
                    newlines += count_newlines(chunk)
                offset += len(chunk)
    except OSError as exc:
        raise SourceError(f"cannot read input '{source.path}': {exc}") from None
    if prefix == 0:
        prefix_sha = hashlib.sha256(b"").hexdigest()
    return _Scan(offset, digest.hexdigest(), prefix_sha if prefix != offset else None, resume, newlines)

