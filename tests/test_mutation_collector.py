"""The cyclic garbage collector is paused while a pair's mutants are judged (`frayproof_audit/collector.py`),
which is safe only because judging makes no reference cycles: held here for every contract the
benchmarks use, on the fast path, the reference path and both compared, and on the realistic
records the audit corpus holds. The collector's state is restored whatever happens."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from benchmarks.bench_mutate import audit_corpus_pairs
from benchmarks.huge_mutate import ALL_CONTRACTS, huge_record
from frayproof_audit.collector import collector_paused
from frayproof_audit.contract import parse_contract
from frayproof_audit.mutate import MutationReport, mutate_pair, run_mutations
from frayproof_audit.mutate import runner as runner_module
from frayproof_audit.snapshot import load_wire, parse_snapshot_bytes
from sessiongen import realistic
from tests.helpers import cycles_left

MINIMAL = parse_contract("version: 1\n", "<contract>")


@pytest.fixture
def collector_off() -> Iterator[None]:
    """The collector paused by the caller, as a program may."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("verify", [False, True], ids=["fast", "verified"])
@pytest.mark.parametrize("name", sorted(ALL_CONTRACTS))
def test_judging_a_records_mutants_leaves_no_cycle(name: str, verify: bool) -> None:
    contract = parse_contract(ALL_CONTRACTS[name], "<contract>")
    blob = orjson.dumps(huge_record(120, contract.format))
    before = load_wire(parse_snapshot_bytes(blob), contract.format)
    after = load_wire(parse_snapshot_bytes(blob), contract.format)
    reports: list[MutationReport] = []
    assert cycles_left(lambda: reports.append(mutate_pair(before, after, contract, verify=verify))) == 0
    assert reports[0].baseline.passed and reports[0].caught + reports[0].survived > 120


def test_the_audit_corpus_records_leave_no_cycle() -> None:
    contract = realistic.bench_contract()
    pairs = audit_corpus_pairs(6)
    reports: list[MutationReport] = []

    def judge() -> None:
        for before, after in pairs:
            reports.append(run_mutations(before, lambda _messages, after=after: after, contract))

    assert cycles_left(judge) == 0
    assert sum(report.caught + report.survived for report in reports) > 0


def test_a_shared_output_takes_the_reference_path_and_leaves_no_cycle() -> None:
    result = {"type": "text", "text": "the build log, 40 lines"}
    shared: list[Any] = [
        {"role": "system", "content": "Never write to production"},
        {"role": "user", "content": "why does the build fail?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": [result, result]},  # one dict twice
        {"role": "user", "content": "and now?"},
    ]
    reports: list[MutationReport] = []
    assert cycles_left(lambda: reports.append(run_mutations(shared, lambda given: given, MINIMAL))) == 0
    assert reports[0].caught + reports[0].survived > 0


def _watching(seen: list[bool]) -> Any:
    real = runner_module.apply_budget

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    return watched


def test_the_collector_is_off_during_the_loop_and_back_after(monkeypatch: pytest.MonkeyPatch) -> None:
    assert gc.isenabled()
    seen: list[bool] = []
    monkeypatch.setattr(runner_module, "apply_budget", _watching(seen))
    messages: list[Any] = [{"role": "user", "content": "hello"}]
    run_mutations(messages, lambda given: given, MINIMAL)
    assert seen == [False] and gc.isenabled()


def test_a_collector_paused_by_the_caller_stays_paused(collector_off: None) -> None:
    run_mutations([{"role": "user", "content": "hello"}], lambda given: given, MINIMAL)
    assert not gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_collector_comes_back_when_judging_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("an operator's bug")

    monkeypatch.setattr(runner_module, "apply_budget", broken)
    with pytest.raises(RuntimeError, match="an operator's bug"):
        run_mutations([{"role": "user", "content": "hello"}], lambda given: given, MINIMAL)
    assert gc.isenabled()
