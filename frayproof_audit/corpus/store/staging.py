"""A run's staging area, wherever OUT is: opened by the parent, written by the workers.

The one place that tells a local OUT from an object store for staging: `local_stage.py` and
`object_stage.py` each keep one kind and know nothing of the other.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from frayproof_audit.corpus.inputs import location
from frayproof_audit.corpus.store.layout import RUNS_FOLDER, StoreError, output_location, runs_name
from frayproof_audit.corpus.store.local_stage import Stage, stage_files
from frayproof_audit.corpus.store.object_stage import ObjectStage, stage_objects


def open_stage(out: str | os.PathLike[str], run_id: str) -> Stage | ObjectStage:
    """The staging area of a run into `out`, local or on an object store."""
    found = output_location(out)
    if isinstance(found, Path):
        return Stage(found, run_id)
    return ObjectStage(found, run_id)


def delete_run(out: str | os.PathLike[str], run_id: str) -> int:
    """Delete the committed run `run_id` of the dataset `out` as a run is committed (staging
    area, lock, `runs` row first): readers see it wholly there, then wholly gone. Returns how
    many part files were removed; `StoreError` when there is no such committed run (nothing is
    created or touched then)."""
    from frayproof_audit.corpus.run.audit_config import check_run_id

    check_run_id(run_id)  # a run id is a file name: never a path
    found = output_location(out)
    if isinstance(found, Path):
        if not (found / RUNS_FOLDER / runs_name(run_id)).is_file():
            raise StoreError(f"no committed run {run_id!r} in '{out}'"
                             + ("" if (found / RUNS_FOLDER).is_dir() else
                                f" ('{out}' is not an audit dataset: no {RUNS_FOLDER}/ folder)"))
        return Stage(found, run_id).delete()
    fs, root = location.filesystem(found)
    fs.invalidate_cache()
    if not fs.exists(f"{root}/{RUNS_FOLDER}/{runs_name(run_id)}"):
        raise StoreError(f"no committed run {run_id!r} in '{out}'")
    return ObjectStage(found, run_id).delete()


def stage_shard(
    folder: str | os.PathLike[str],
    run_id: str,
    ordinal: int,
    tables: dict[str, dict[str, pa.Table]],
    metadata: Callable[[str], dict[str, str]],
) -> tuple[str, ...]:
    """Write one shard's rows into a staging folder: one part file per table and log_date.

    Called by workers, so Parquet encoding runs in parallel and tables never travel back to the
    parent. Returns the paths relative to the folder. A folder that is a URI is written through
    fsspec (`object_stage.stage_objects`), any other one on the local disk
    (`local_stage.stage_files`).
    """
    if isinstance(folder, str) and location.is_uri(folder):
        return stage_objects(folder, run_id, ordinal, tables, metadata)
    return stage_files(folder, run_id, ordinal, tables, metadata)
