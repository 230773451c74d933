"""The nightly cron job of docs/audit.md, run as written (a real `sh`, real subprocesses), on a
history that has everything that misled its operators: a contract change, a failed run, a
duplicated record, an inherited defect and a one-compactor regression. It pages exactly once,
for the regression, and names the compactor.

The history: five nights (2025-06-02 … 2025-06-06), two compactors at 10% failing each, and
every night two `summarize` pairs whose `before` already held an orphan tool result, kept
verbatim (inherited: no fault of the compactor's). Nights 0-1 were audited with contract A,
nights 2-3 with contract B (the one the job uses now); night 3 was also audited by mistake with
a wrong field map (every record an input error: a failed run). On night 4, `keep_last_n` fails
12 of its 20 pairs (60%) while `summarize` stays at 10%, and one of its failing records was
logged twice. The script runs for night 4 only, as cron would.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit.corpus import audit, read_table
from tests.corpus_support import CONTRACT_TEXT, line, record, write_jsonl
from tests.helpers import REPO, result

NIGHTS = ("2025-06-02", "2025-06-03", "2025-06-04", "2025-06-05", "2025-06-06")
CONTRACT_B = CONTRACT_TEXT.replace("retain:\n", "retain:\n  tool_results: complete\n")


def night_plan(night: int) -> list[tuple[str, str]]:
    if night < 4:
        return ([("summarize", "keep_all")] * 27 + [("summarize", "drop_system")] * 3
                + [("keep_last_n", "window")] * 27 + [("keep_last_n", "drop_result")] * 3)
    return ([("summarize", "keep_all")] * 81 + [("summarize", "drop_system")] * 9
            + [("keep_last_n", "window")] * 8 + [("keep_last_n", "drop_result")] * 12)


def inherited(index: int, night: int) -> dict[str, Any]:
    """A pair whose before already holds a tool result answering no call, kept verbatim."""
    pair = record(index, "keep_all", night=night)
    before = [pair["before"][0], result("ghost", "stale output"), *pair["before"][1:]]
    return {**pair, "compactor": "summarize", "before": before, "after": list(before)}


def night_lines(night: int) -> list[bytes]:
    lines = [line({**record(night * 1000 + i, how, night=night), "compactor": name})
             for i, (name, how) in enumerate(night_plan(night))]
    lines += [line(inherited(night * 1000 + 900 + i, night)) for i in range(2)]
    if night == 4:
        lines.append(lines[-3])  # a failing keep_last_n record, logged twice
    return lines


def cron_script(folder: Path) -> str:
    """The script of docs/audit.md's "A nightly audit", its paths pointed into `folder`."""
    text = (REPO / "docs" / "audit.md").read_text(encoding="utf-8")
    section = text.split("## A nightly audit", 1)[1]
    script = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert script is not None
    body = script.group(1)
    assert "/opt/agent/.venv/bin/frayproof-audit trend /srv/audit" in body
    for old, new in (("$(date -u -d yesterday +%F)", NIGHTS[-1]),
                     ("/opt/agent/.venv/bin/frayproof-audit", str(folder / "bin" / "frayproof-audit")),
                     ("/opt/agent/bin/page-oncall", str(folder / "bin" / "page-oncall")),
                     ("/opt/agent/contract.yaml", str(folder / "contract.yaml")),
                     ("/var/log/agent/compactions", str(folder / "logs")),
                     ("/srv/audit", str(folder / "audit"))):
        assert old in body, old
        body = body.replace(old, new)
    return body


def executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cron")
    (folder / "contract-a.yaml").write_text(CONTRACT_TEXT, encoding="utf-8")
    (folder / "contract.yaml").write_text(CONTRACT_B, encoding="utf-8")
    for night, day in enumerate(NIGHTS):
        write_jsonl(folder / "logs" / day / "compactions.jsonl", night_lines(night))
    out = str(folder / "audit")
    for night, day in enumerate(NIGHTS[:4]):
        contract = folder / ("contract-a.yaml" if night < 2 else "contract.yaml")
        audit([str(folder / "logs" / day)], str(contract), out, jobs=1, run_id=f"night-{day}",
              fail_on=("none",), mutate=False)
    failed = audit([str(folder / "logs" / NIGHTS[3])], str(folder / "contract.yaml"), out, jobs=1,
                   run_id="night-2025-06-05-fieldmap", fields={"before": "request.messages"},
                   fail_on=("none",), mutate=False)
    assert failed.exit_code == 2 and failed.checked == 0  # nothing audited: committed as failed
    (folder / "audit" / "summaries").mkdir()
    executable(folder / "bin" / "page-oncall", '#!/bin/sh\nprintf \'%s\\n\' "$*" >> "$PAGES"\n')
    executable(folder / "bin" / "frayproof-audit",
               f'#!/bin/sh\nexec "{sys.executable}" -m frayproof_audit "$@"\n')
    executable(folder / "nightly-audit.sh", cron_script(folder))
    environment = {**os.environ, "PAGES": str(folder / "pages.txt"), "PYTHONPATH": str(REPO),
                   "MPLBACKEND": "Agg"}
    done = subprocess.run(["sh", str(folder / "nightly-audit.sh")], cwd=folder, env=environment,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return folder


def test_it_pages_once_for_the_regression_and_names_the_compactor(ran: Path) -> None:
    pages = (ran / "pages.txt").read_text(encoding="utf-8").splitlines()
    assert pages == ["compaction regression on 2025-06-06: see trend.txt"]
    trend = (ran / "audit" / "summaries" / "trend.txt").read_text(encoding="utf-8")
    assert trend.rstrip().endswith("REGRESSION in 1 of 2 compactor slice(s): keep_last_n")
    assert "compactor summarize: Gate passed" in trend


def test_what_it_did_not_page_for_is_said(ran: Path) -> None:
    trend = (ran / "audit" / "summaries" / "trend.txt").read_text(encoding="utf-8")
    assert "1 failed run(s)" in trend or "failed run" in trend  # left out, and said so
    assert "contract" in trend and "left out" in trend  # the older contract's nights, named
    summary = json.loads((ran / "audit" / "summaries" / "2025-06-06.json").read_text(encoding="utf-8"))
    assert summary["exit_code"] == 0 and summary["input_errors"] == 0
    assert summary["inherited_failures"] == 2  # the summarize pairs with a broken before
    assert summary["blame"] == "introduced"
    assert summary["duplicates"] == 1


def test_the_tables_hold_what_happened(ran: Path) -> None:
    runs = read_table(ran / "audit", "runs").collect()
    status = dict(zip(runs["run_id"].to_list(), runs["status"].to_list(), strict=True))
    assert status["night-2025-06-05-fieldmap"] == "failed"
    assert sorted(run for run, value in status.items() if value == "ok") == [
        f"night-{day}" for day in NIGHTS]
    assert len(set(runs["contract_fingerprint"].to_list())) == 2
    pairs = read_table(ran / "audit", "pairs").collect()
    last = pairs.filter(pairs["run_id"] == "night-2025-06-06")
    assert last.height == 113  # 110 pairs, 2 inherited, 1 logged twice: every record a row
    inherited_rows = last.filter((last["status"] == "fail") & (last["introduced_errors"] == 0))
    assert inherited_rows.height == 2
    assert last["duplicate"].sum() == 1  # flagged, and counted once by every rate
