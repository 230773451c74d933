"""Shared by the capture tests: auditing what a writer wrote with the real `audit`, verdicts
per pair, hand-written logs to compare against, and a small tmpfs for disk-full tests."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit.corpus import RunSummary, audit, read_table

Verdict = tuple[str, tuple[tuple[str, str | None, str, int | None], ...]]
"""A pair's status and its findings (check, code, snapshot, message index), sorted."""

CONTRACT = """\
pins:
  - name: system-prompt
    role: system
  - name: no-prod-writes
    contains: "Never write to production"
retain:
  latest_user_message: exact
  recent_exchanges: 1
"""


def write_contract(folder: Path, text: str = CONTRACT) -> Path:
    path = folder / "contract.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def run_audit(inputs: str | list[str], contract: Path | str, out: Path | str, **options: Any) -> RunSummary:
    """The real library audit, check-only and in this process, gates off."""
    settings: dict[str, Any] = {"jobs": 1, "mutate": False, "fail_on": ("none",),
                                "max_input_error_rate": None}
    settings.update(options)
    return audit(inputs if isinstance(inputs, list) else [inputs], str(contract), str(out), **settings)


def verdicts(out: Path | str, run_id: str | None = None) -> dict[str, Verdict]:
    """pair_id -> (status, sorted findings) of the committed runs (one run when named)."""
    import polars as pl

    pairs = read_table(out, "pairs")
    findings = read_table(out, "findings")
    if run_id is not None:
        pairs = pairs.filter(pl.col("run_id") == run_id)
        findings = findings.filter(pl.col("run_id") == run_id)
    found: dict[str, list[tuple[str, str | None, str, int | None]]] = {}
    for row in findings.select("pair_id", "check", "code", "snapshot", "message_index").collect().iter_rows():
        found.setdefault(row[0], []).append((row[1], row[2], row[3], row[4]))
    result: dict[str, Verdict] = {}
    for pair_id, status in pairs.select("pair_id", "status").collect().iter_rows():
        assert pair_id not in result, f"pair {pair_id} audited twice"
        result[pair_id] = (status, tuple(sorted(found.get(pair_id, []), key=repr)))
    return result


def input_errors(out: Path | str) -> list[str]:
    import polars as pl

    rows = read_table(out, "pairs").filter(pl.col("status") == "input_error").select("input_error")
    return [row[0] for row in rows.collect().iter_rows()]


def hand_log(path: Path, records: Iterable[dict[str, Any]]) -> Path:
    """Pairs logged by hand, as a user would without the writer: `json.dumps` per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    return path


def lines_of(root: Path) -> list[bytes]:
    """Every line of every `.jsonl` file under `root`, each checked to end in a newline."""
    found = []
    for path in sorted(root.rglob("*.jsonl")):
        data = path.read_bytes()
        assert data == b"" or data.endswith(b"\n"), f"{path} ends in a torn line"
        found.extend(data.splitlines())
    return found


def can_mount() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@contextlib.contextmanager
def tmpfs(path: Path, size: str, read_only: bool = False) -> Iterator[Path]:
    """A tmpfs of `size` mounted at `path` (root only; the test is skipped when the mount is
    refused), unmounted afterwards."""
    path.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if read_only else "")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)
