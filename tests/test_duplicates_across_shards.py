"""A pair id repeated in another shard is counted exactly as one repeated in its own shard.

A worker flags a record whose pair id an earlier record of its shard had and leaves it out of
every failure, gate and per-check count; a repeat in a later shard is found by the parent
(`corpus.run.duplicates`), which takes back what that shard's worker counted. Both must give the
same run: the same records audited as one shard and as several give the same summary, with a
known-issue baseline accepting some findings and without, under both blames, and with a
mutation budget.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit.corpus import audit
from frayproof_audit.corpus.run.rate_gates import gate_for
from tests.corpus_support import line, record, write_contract, write_jsonl

# (index, compactor): p0002 and p0006 fail (a result dropped), p0003 fails (system prompt
# dropped), the rest pass; p0002 comes back three times, p0003 and p0004 once each.
RECORDS = [(0, "keep_all"), (1, "window"), (2, "drop_result"), (3, "drop_system"), (4, "keep_all"),
           (5, "window"), (6, "drop_result"), (2, "drop_result"), (3, "drop_system"),
           (2, "drop_result"), (4, "keep_all"), (7, "drop_result"), (2, "drop_result")]
ACCEPTED = [{"pair_id": "p0002", "code": "TP-UNANSWERED"},  # p0002's only error
            {"pair_id": "p0003", "code": "PIN-ROLE"}]

COUNTED = ("pairs", "passed", "failed", "introduced_failures", "duplicates", "failure_rate",
           "checks", "compactors", "mutation", "baseline_accepted", "gates")


def _counted(summary: Any) -> dict[str, Any]:
    """What a run counted, without what names its files, shards, run or clock."""
    data = summary.to_dict()
    missing = [key for key in COUNTED if key not in data]
    assert not missing, f"summary has no {missing}: {sorted(data)}"
    return {key: data[key] for key in COUNTED}


def _run(folder: Path, files: list[list[bytes]], baseline: Path | None, blame: str,
         **options: Any) -> Any:
    logs = folder / "logs"
    for number, lines in enumerate(files):
        write_jsonl(logs / f"night-{number:02d}.jsonl", lines)
    options.setdefault("fail_on", ("none",))
    return audit([str(logs)], str(write_contract(folder)), str(folder / "out"), jobs=1,
                 mutate=True, blame=blame,
                 baseline_findings=None if baseline is None else str(baseline), **options)


@pytest.mark.parametrize(("blame", "budget"), [("all", None), ("introduced", None), ("all", 2)])
@pytest.mark.parametrize("with_baseline", [True, False], ids=["baseline", "no-baseline"])
@pytest.mark.parametrize("split", [[13], [7, 6], [3, 3, 3, 4], [1] * 13], ids=str)
def test_the_same_records_in_one_shard_or_several_count_the_same(
        tmp_path: Path, split: list[int], with_baseline: bool, blame: str, budget: int | None) -> None:
    lines = [line(record(index, compactor)) for index, compactor in RECORDS]
    baseline = None
    if with_baseline:
        baseline = tmp_path / "baseline.jsonl"
        baseline.write_text("".join(json.dumps(entry) + "\n" for entry in ACCEPTED))
    files, start = [], 0
    for size in split:
        files.append(lines[start:start + size])
        start += size
    several = _run(tmp_path / "several", files, baseline, blame, max_mutants_per_pair=budget)
    one = _run(tmp_path / "one", [lines], baseline, blame, max_mutants_per_pair=budget)
    assert several.duplicates == one.duplicates == 5
    if budget is not None:  # the budget leaves sites out of the passing pairs, repeats included
        assert one.budget_pairs > 0
    assert _counted(several) == _counted(one)


def test_a_baseline_accepted_repeat_in_a_later_shard_is_no_failure_of_its_compactor_gate(
        tmp_path: Path) -> None:
    """The cases that were miscounted: p0002, which the baseline accepts whole, repeated in a
    later shard was taken from the gates' count of failing pairs although its worker never
    counted it there, hiding p0006, a failure nobody accepted; and a compactor's gate divided by
    its records, the repeat included, not by its distinct pairs."""
    lines = [line(record(index, compactor)) for index, compactor in RECORDS[:7]]
    baseline = tmp_path / "baseline.jsonl"
    baseline.write_text(json.dumps(ACCEPTED[0]) + "\n")
    summary = _run(tmp_path, [lines, [line(record(2, "drop_result"))]], baseline, "all",
                   failure_rate_gates=(gate_for("compactor:drop_result", 0.4),), min_pairs=1,
                   fail_on=("failures",))
    data = summary.to_dict()
    assert (data["pairs"], data["failed"], data["duplicates"]) == (8, 4, 1)
    dropped = {row["compactor"]: row for row in data["compactors"]}["drop_result"]
    assert (dropped["pairs"], dropped["failed"], dropped["baseline_accepted"]) == (3, 3, 1)
    # p0006 of the two distinct pairs p0002 (accepted) and p0006: 50%, above 40%
    assert summary.gate_failures == ("compactor drop_result: failure rate 50.0% (1 / 2 pairs) is"
                                     " above --max-failure-rate compactor:drop_result=0.4",)
    assert summary.exit_code == 1
