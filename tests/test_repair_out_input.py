"""`--repair-out` is output, never input (issue 23, D14): a repair folder inside the input folder
is skipped by the next run, like `--out` and datasets, whatever the next run's `--repair-out`.

`audit logs --out o --repair-out logs/repaired` twice read the first run's repaired snapshots as
input the second time (83 → 91 pairs, 3 → 11 input errors), and more every night.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit.corpus.inputs.expansion import REPAIRED_MARKER, expand_inputs
from tests.helpers import EXAMPLES, run_cli

NIGHT = EXAMPLES / "corpus" / "2025-06-02" / "compactions.jsonl"
PAIRS = 83
"""Records of that night (3 of them input errors)."""


def _audit(cwd: Path, *args: str, real: bool = False) -> dict[str, Any]:
    done = run_cli("audit", *args, "--out", "o", "-q", "--no-mutate", "--fail-on", "none", "--format",
                   "json", "--jobs", "1", expect=0, real=real, cwd=cwd)
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    """`logs/compactions.jsonl`, as the issue has it."""
    (tmp_path / "logs").mkdir()
    shutil.copy(NIGHT, tmp_path / "logs")
    return tmp_path


def test_the_issue_reproducer_twice_reads_the_same_83_pairs(logs: Path) -> None:
    first = _audit(logs, "logs", "--repair-out", "logs/repaired", real=True)
    assert first["pairs"] == PAIRS and list((logs / "logs" / "repaired").glob("repaired-*.jsonl"))
    second = _audit(logs, "logs", "--repair-out", "logs/repaired", real=True)
    assert (second["pairs"], second["input_errors"]) == (PAIRS, 3)
    assert "skipped frayproof-audit output (not logs): logs/repaired" in second["notes"]


@pytest.mark.parametrize("inputs", [("logs",), ("logs/*",), ("logs/*/*.jsonl",), ("logs/**/*.jsonl",),
                                    ("logs/2025-06-02", "logs/repaired-n1")])
def test_an_earlier_nights_repair_folder_is_skipped_too(tmp_path: Path, inputs: tuple[str, ...]) -> None:
    # a folder per night, and a repair folder per night beside them: the second night names
    # another --repair-out, and the first one's is still output
    (tmp_path / "logs" / "2025-06-02").mkdir(parents=True)
    shutil.copy(NIGHT, tmp_path / "logs" / "2025-06-02")
    _audit(tmp_path, "logs", "--repair-out", "logs/repaired-n1")
    assert (tmp_path / "logs" / "repaired-n1" / REPAIRED_MARKER).is_file()
    second = _audit(tmp_path, *inputs, "--repair-out", "logs/repaired-n2")
    assert second["pairs"] == PAIRS
    assert "skipped frayproof-audit output (not logs): logs/repaired-n1" in second["notes"]


def test_a_repair_folder_written_before_the_marker_is_skipped_when_named_again(logs: Path) -> None:
    _audit(logs, "logs", "--repair-out", "logs/repaired")
    (logs / "logs" / "repaired" / REPAIRED_MARKER).unlink()  # as an older release left it
    assert _audit(logs, "logs", "--repair-out", "logs/repaired")["pairs"] == PAIRS


def test_expansion_skips_the_repair_folder_it_is_given(tmp_path: Path) -> None:
    (tmp_path / "logs" / "fixed").mkdir(parents=True)
    shutil.copy(NIGHT, tmp_path / "logs" / "a.jsonl")
    shutil.copy(NIGHT, tmp_path / "logs" / "fixed" / "repaired-n1-00000.jsonl")
    expanded = expand_inputs([str(tmp_path / "logs")], str(tmp_path / "o"),
                              repair_out=str(tmp_path / "logs" / "fixed"))
    assert [Path(source.path).name for source in expanded.files] == ["a.jsonl"]
    assert expanded.skipped_datasets == (str(tmp_path / "logs" / "fixed"),)
