"""The per-pair mutation budget (`mutate.budget`, `--max-mutants-per-pair`).

Under the budget nothing changes (the report is equal, JSON for JSON); over it, the sites
judged are a deterministic sample, every operator with sites is represented, each operator's
share follows its number of sites, each sampled mutant is judged exactly as without a budget,
and one `Budget:` skip entry per cut operator says how many sites were left out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.huge_mutate import CONTRACTS, huge_session
from frayproof_audit import InputError
from frayproof_audit.cli import main as cli_main
from frayproof_audit.contract import parse_contract
from frayproof_audit.corpus.inputs.field_map import ConfigError
from frayproof_audit.corpus.run.audit_config import DEFAULT_MAX_MUTANTS_PER_PAIR, AuditConfig
from frayproof_audit.mutate import mutate_pair, run_mutations
from frayproof_audit.mutate.budget import allocate, apply_budget
from frayproof_audit.mutate.operators import Candidate
from frayproof_audit.mutate.report import SKIPPED, MutationReport
from frayproof_audit.snapshot import load_wire, parse_snapshot_bytes

CONTRACT = parse_contract(CONTRACTS["audit"], "<test>")
BLOB = orjson.dumps(huge_session(400))


def _run(max_mutants: int | None, blob: bytes = BLOB, **options: Any) -> MutationReport:
    return mutate_pair(load_wire(parse_snapshot_bytes(blob)), load_wire(parse_snapshot_bytes(blob)),
                       CONTRACT, max_mutants=max_mutants, **options)


@given(st.lists(st.integers(0, 60), max_size=11), st.integers(1, 200))
def test_allocation_is_bounded_complete_and_fair(sizes: list[int], budget: int) -> None:
    shares = allocate(sizes, budget)
    assert sum(shares) == min(budget, sum(sizes))
    assert all(0 <= share <= size for share, size in zip(shares, sizes, strict=True))
    if sum(sizes) <= budget:
        assert shares == sizes
    if budget >= sum(1 for size in sizes if size):
        assert all(share >= 1 for share, size in zip(shares, sizes, strict=True) if size)


def test_allocation_is_proportional_after_one_each() -> None:
    assert allocate([1000, 100, 10, 0, 1], 100) == [88, 9, 2, 0, 1]
    assert allocate([5, 5, 5], 2) == [1, 1, 0]  # fewer sites than operators: registry order


def test_sampling_within_an_operator_is_uniform() -> None:
    """Each site of an operator is equally likely to be judged (unbiased survival rates)."""
    candidates = [Candidate("drop_tool_call", "", k, f"s{k}", None) for k in range(10)]  # type: ignore[arg-type]
    picked: Counter[str] = Counter()
    trials = 3000
    for trial in range(trials):
        wire = [{"role": "user", "content": str(trial)}]
        groups, _ = apply_budget([("drop_tool_call", candidates)], 3, wire)
        picked.update(candidate.site for candidate in groups[0][1])
    for count in picked.values():
        assert abs(count / trials - 0.3) < 0.04


def test_under_the_budget_the_report_is_unchanged() -> None:
    full = _run(None)
    sites = sum(len(m.sites) for m in full.mutants if m.status != SKIPPED)
    for budget in (sites, sites + 1, DEFAULT_MAX_MUTANTS_PER_PAIR):
        limited = _run(budget)
        assert limited == full
        assert json.dumps(limited.to_dict(), sort_keys=True) == json.dumps(full.to_dict(), sort_keys=True)


def test_over_the_budget_a_deterministic_sample_judged_as_without_one() -> None:
    full = _run(None)
    first, second = _run(60), _run(60)
    assert first == second and first.to_dict() == second.to_dict()
    judged = [m for m in first.mutants if m.status != SKIPPED]
    assert len(judged) <= 60
    by_site = {(m.operator, site): m for m in full.mutants for site in m.sites}
    for mutant in judged:
        reference = by_site[mutant.operator, mutant.sites[0]]
        assert (mutant.status, mutant.reason, mutant.report) == (
            reference.status, reference.reason, reference.report)
    cut = [m for m in first.mutants if m.budget_skipped]
    full_sites = Counter(m.operator for m in full.mutants for _ in m.sites)
    judged_sites = Counter(m.operator for m in judged for _ in m.sites)
    assert {m.operator for m in cut} == {op for op in full_sites if judged_sites[op] < full_sites[op]}
    for entry in cut:
        assert entry.status == SKIPPED and entry.sites == () and entry.message_index is None
        assert entry.reason == (f"Budget: {entry.budget_skipped} of {full_sites[entry.operator]} "
                                "sites not judged (at most 60 mutants per pair).")
        assert judged_sites[entry.operator] + entry.budget_skipped == full_sites[entry.operator]
        assert judged_sites[entry.operator] >= 1  # every operator with sites is represented
    operators = [m.operator for m in first.mutants]
    assert operators == sorted(operators, key=[m.operator for m in full.mutants].index)
    assert first.skipped == len(cut) and first.applicable == len(judged)


def test_other_outputs_give_other_samples_and_verify_agrees() -> None:
    other = orjson.dumps(huge_session(400, seed=2))
    sample = [m.sites for m in _run(40).mutants]
    assert sample != [m.sites for m in _run(40, other).mutants]
    assert _run(40, verify=True) == _run(40)


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_a_budget_must_be_a_positive_integer(bad: Any) -> None:
    with pytest.raises(InputError, match="positive integer"):
        _run(bad)
    with pytest.raises(InputError):
        run_mutations(huge_session(20), contract=CONTRACT, after=huge_session(20), max_mutants=bad)
    with pytest.raises(ConfigError):
        AuditConfig(inputs=("x",), out="y", max_mutants_per_pair=bad)


# ------------------------------------------------------------------ the command line

def test_mutate_option(tmp_path: Any) -> None:
    session = huge_session(200)
    path = tmp_path / "session.json"
    path.write_bytes(orjson.dumps(session))
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACTS["audit"], encoding="utf-8")
    args = ["mutate", "--input", str(path), "--after", str(path), "--contract", str(contract)]
    runner = CliRunner()
    full = runner.invoke(cli_main, args)
    limited = runner.invoke(cli_main, [*args, "--max-mutants-per-pair", "30", "--format", "json"])
    assert full.exit_code == 1 and "Budget:" not in full.output  # old exchanges survive
    assert limited.exit_code == 1, limited.output
    report = json.loads(limited.output)
    assert report["applicable"] <= 30 and report["skipped"] >= 1
    assert any(m["reason"].startswith("Budget: ") for m in report["mutants"])
    assert runner.invoke(cli_main, [*args, "--max-mutants-per-pair", "0"]).output == full.output
    bad = runner.invoke(cli_main, [*args, "--max-mutants-per-pair", "-3"])
    assert bad.exit_code == 2
    done = subprocess.run([sys.executable, "-m", "frayproof_audit", *args,
                           "--max-mutants-per-pair", "30"], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and done.stdout.count("SKIPPED") >= 1 and "Budget: " in done.stdout


def test_audit_option_counts_budget_skips(tmp_path: Any) -> None:
    records = tmp_path / "logs.jsonl"
    lines = [{"pair_id": f"p{k}", "before": huge_session(120, seed=k), "after": huge_session(120, seed=k)}
             for k in range(3)]
    records.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACTS["audit"], encoding="utf-8")
    runner = CliRunner()
    base = ["audit", str(records), "--contract", str(contract), "--jobs", "1", "--format", "json", "-q"]
    limited = runner.invoke(cli_main, [*base, "--out", str(tmp_path / "a"), "--max-mutants-per-pair", "25"])
    assert limited.exit_code == 0, limited.output
    summary = json.loads(limited.output)["mutation"]
    assert summary["budget_pairs"] == 3 and summary["budget_sites_not_judged"] > 0
    assert summary["caught"] + summary["survived"] <= 75
    full = runner.invoke(cli_main, [*base, "--out", str(tmp_path / "b")])
    assert json.loads(full.output)["mutation"]["budget_pairs"] == 0
    text = runner.invoke(cli_main, ["audit", str(records), "--contract", str(contract), "--jobs", "1",
                                    "-q", "--out", str(tmp_path / "c"), "--max-mutants-per-pair", "25"])
    assert "mutation budget: 3 pair(s) over it" in text.output
