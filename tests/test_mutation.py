"""Mutation testing through the library API: frayproof's documented mutation behaviours (test_mutation.py,
test_mutation_wire_input.py and the retention/review rows that mention it), targets of every
kind, `after=` mode, `mutate_pair` and the JSON schema of the report."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.contract import Contract
from frayproof_audit.engine import check_loaded
from frayproof_audit.errors import InputError
from frayproof_audit.mutate import (
    OPERATORS,
    MutantOutcome,
    MutationReport,
    build_mutants,
    mutate_pair,
    run_mutations,
    run_mutations_async,
)
from frayproof_audit.mutate.operators import get_operator
from frayproof_audit.mutate.report import NO_COVERAGE_LINE
from frayproof_audit.snapshot import load_list
from tests.helpers import (
    FIXTURES,
    assistant,
    call,
    developer,
    make_contract,
    result,
    session,
    system,
    user,
)

WEAK = make_contract({"checks": {"structure": {"system_messages": "anywhere"}}})
STRONG = make_contract({"pins": [
    {"name": "system-prompt", "role": "system"},
    {"name": "no-prod", "contains": "Never write to production"},
    {"name": "requests", "role": "user"},
    {"name": "results", "role": "tool"},
]})
ALL_RETAIN = make_contract({"retain": {"latest_user_message": "exact", "recent_exchanges": 2,
                                       "tool_results": "complete"}})


def identity(messages: Any) -> Any:
    return messages


def after_mode(after: list[Any], contract: Contract | None = None,
               before: list[Any] | None = None, **options: Any) -> MutationReport:
    return run_mutations(before if before is not None else after, contract=contract,
                         after=after, **options)


def statuses(report: MutationReport) -> list[tuple[str, str]]:
    return [(m.operator, m.status) for m in report.mutants]


def by_operator(report: MutationReport, name: str) -> list[MutantOutcome]:
    return [m for m in report.mutants if m.operator == name]


# ---------------------------------------------------------------- scores and survivors

def test_weak_contract_on_the_session() -> None:
    report = run_mutations(session(), identity, WEAK)
    assert (report.caught, report.survived, report.skipped) == (4, 5, 0)
    assert report.score_percent == 44.44
    assert [m.operator for m in report.mutants if m.status == "survived"] == [
        "remove_pinned_text", "move_instruction", "drop_latest_user", "truncate_tool_result",
        "drop_recent_exchange"]
    assert "pins" in report.mutants[3].reason
    assert "MUTATION SCORE: 4/9 caught (44.44%); 5 survived, 0 skipped." in report.to_text()
    assert not report.passed and report.exit_code == 1


def test_strong_pins_catch_everything() -> None:
    report = run_mutations(session(), identity, STRONG)
    assert (report.caught, report.survived, report.skipped) == (12, 0, 0)
    assert report.score_percent == 100.0
    assert report.passed and report.exit_code == 0
    merged = by_operator(report, "remove_pinned_text")[0]
    assert merged.sites == ("pin:system-prompt@after[0]", "pin:no-prod")


def test_caught_reason_names_error_checks_in_order() -> None:
    report = run_mutations(session(), identity)
    swap = by_operator(report, "swap_call_result")[0]
    assert swap.reason == "Rejected by tool_pair_integrity, structure."
    assert swap.caught_by == ("tool_pair_integrity", "structure")
    assert by_operator(report, "duplicate_tool_id")[0].caught_by == ("unique_tool_ids",)
    move = by_operator(report, "move_instruction")[0]
    assert move.caught_by == ("structure",)
    assert {m.caught_by for m in report.mutants if m.status != "caught"} == {()}


def test_warning_only_findings_are_survivors() -> None:
    contract = make_contract({"checks": {name: {"severity": "warning"} for name in (
        "tool_pairs", "unique_tool_ids", "structure", "pinned_content", "retention")}})
    report = run_mutations(session(), identity, contract)
    assert (report.caught, report.survived) == (0, 9)
    assert report.mutants[0].report is not None and report.mutants[0].report.warnings == 1


def test_disabled_pairing_lets_a_dropped_call_survive_without_findings() -> None:
    report = run_mutations(session(), identity, make_contract({"checks": {"tool_pairs": False}}))
    dropped = by_operator(report, "drop_tool_call")[0]
    assert dropped.status == "survived"
    assert dropped.report is not None and dropped.report.violations == ()


def test_trailing_allowance_lets_a_dropped_result_survive() -> None:
    contract = make_contract({"checks": {"tool_pairs": {"allow_trailing_pending_call": True}}})
    report = run_mutations([system(), user(), call("a"), result("a")], identity, contract)
    assert by_operator(report, "drop_tool_result")[0].status == "survived"


def test_empty_output_measures_nothing() -> None:
    report = after_mode([])
    assert report.score_percent is None
    assert report.skipped == 9 and report.applicable == 0
    assert not report.passed and report.exit_code == 1
    assert NO_COVERAGE_LINE in report.to_text()
    assert "(not measured)" in report.to_text()


def test_role_less_output_with_structure_off_skips_everything() -> None:
    report = after_mode([{"content": "x"}], make_contract({"checks": {"structure": False}}))
    assert report.baseline.passed and report.skipped == 9


def test_partial_applicability() -> None:
    report = after_mode([call("a"), result("a"), user()])
    assert (report.applicable, report.skipped, report.score_percent) == (6, 3, 66.67)


def test_parallel_batch_counts() -> None:
    report = after_mode([call("a", "b"), result("b"), result("a"), user()])
    assert (report.caught, report.applicable) == (8, 11)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_a_batch_of_k_calls_gives_6k_plus_6_caught(k: int) -> None:
    ids = [f"c{i}" for i in range(k)]
    messages = [system(), user(), call(*ids), *(result(i, f"output {i}") for i in ids),
                user("Continue")]
    report = run_mutations(messages, identity, STRONG)
    assert (report.caught, report.survived) == (6 * k + 6, 0)


def test_three_calls_in_two_batches() -> None:
    messages = [user(), call("a"), result("a"), user("next"), call("b", "c"), result("b"),
                result("c"), user("last")]
    report = after_mode(messages)
    for name in ("drop_tool_call", "duplicate_tool_id"):
        entries = by_operator(report, name)
        assert [m.status for m in entries] == ["caught"] * 3
        assert [m.sites for m in entries] == [("after[1].tool_calls[0]",),
                                              ("after[4].tool_calls[0]",),
                                              ("after[4].tool_calls[1]",)]
    assert [m.status for m in by_operator(report, "truncate_tool_result")] == ["survived"] * 3


def test_score_rounds_like_python() -> None:
    outcome = MutantOutcome("drop_tool_call", "d", "caught", 1, ("s",), "r")
    survivor = MutantOutcome("drop_tool_call", "d", "survived", 1, ("s",), "r")
    report = MutationReport(check_loaded(load_list([]), load_list([]), Contract()),
                            (outcome,) + (survivor,) * 799)
    assert report.score_percent == 0.12  # 0.125 rounds to even in binary floating point


# ---------------------------------------------------------------- baseline

def test_target_runs_once_and_an_in_place_edit_fails_the_baseline() -> None:
    calls = []

    def drop_system(messages: list[Any]) -> list[Any]:
        calls.append(1)
        del messages[0]
        return messages

    contract = make_contract({"pins": [{"name": "system-prompt", "role": "system"}]})
    original = session()
    report = run_mutations(original, drop_system, contract)
    assert calls == [1]
    assert original == session(), "the caller's list is never touched"
    assert not report.baseline.passed and report.mutants == ()
    assert report.to_text().startswith("BASELINE FAIL:")
    assert report.to_dict()["operators"] == {} and report.to_dict()["mutants"] == []
    assert (report.caught, report.survived, report.skipped, report.score_percent) == (0, 0, 0, None)


def test_warnings_alone_do_not_stop_mutation() -> None:
    contract = make_contract({"checks": {"structure": {"severity": "warning"}}})
    report = after_mode([user(), system()], contract)
    assert report.baseline.warnings == 1 and report.mutants


def test_real_retention_loss_fails_the_baseline_only_on_retention() -> None:
    before = [system(), user("q1"), call("a"), result("a"), user("q2"), call("b"), result("b"),
              user("latest")]
    report = run_mutations(before, lambda m: m[:4] + m[7:], ALL_RETAIN)
    assert not report.baseline.passed and report.mutants == ()
    assert {v.check for v in report.baseline.violations} == {"retention"}


# ---------------------------------------------------------------- operators in context

def test_loss_operators_are_caught_once_each_by_retention() -> None:
    messages = [system(), user("q1"), call("a"), result("a", "alpha"), user("q2"), call("b"),
                result("b", "beta"), user("latest")]
    report = run_mutations(messages, identity, ALL_RETAIN)
    for name in ("drop_latest_user", "truncate_tool_result", "drop_recent_exchange"):
        entries = by_operator(report, name)
        assert entries and all(m.status == "caught" for m in entries)
        assert all("retention" in m.caught_by for m in entries)


@pytest.mark.parametrize("setting", [False, {"severity": "warning"}])
def test_without_retention_loss_operators_survive(setting: Any) -> None:
    retain = {"latest_user_message": "exact", "recent_exchanges": 2, "tool_results": "complete"}
    contract = make_contract({"checks": {"retention": setting}, "retain": retain})
    report = run_mutations(session(), identity, contract)
    for name in ("drop_latest_user", "truncate_tool_result", "drop_recent_exchange"):
        assert [m.status for m in by_operator(report, name)] == ["survived"]


def test_duplicate_and_move_are_caught_by_one_check_each() -> None:
    report = run_mutations(session(), identity)
    assert by_operator(report, "duplicate_tool_id")[0].caught_by == ("unique_tool_ids",)
    assert by_operator(report, "move_instruction")[0].caught_by == ("structure",)


def test_first_mutant_and_its_finding_point_at_index_2() -> None:
    report = run_mutations(session(), identity)
    first = report.mutants[0]
    assert first.message_index == 2
    assert first.report is not None and first.report.violations[0].message_index == 2


def test_dropped_call_keeps_the_assistant_text() -> None:
    report = after_mode([call("a", content="Checking"), result("a"), user()])
    dropped = by_operator(report, "drop_tool_call")[0]
    assert dropped.report is not None
    assert [(v.check, v.message_index) for v in dropped.report.violations] == [
        ("tool_pair_integrity", 1)]


@pytest.mark.parametrize("messages, skipped", [
    ([user(), call("a")], "drop_tool_call"),
    ([user(), call("a"), result("a"), call("a"), result("b")], "drop_tool_call"),
    ([user(), call("a"), result("a"), result("a")], "drop_tool_result"),
])
def test_ineligible_drops_are_skipped(messages: list[Any], skipped: str) -> None:
    contract = make_contract({"checks": {"tool_pairs": {"severity": "warning"},
                                         "unique_tool_ids": {"severity": "warning"}}})
    report = after_mode(messages, contract)
    entry = by_operator(report, skipped)
    assert [m.status for m in entry] == ["skipped"]
    assert entry[0].sites == () and entry[0].message_index is None and entry[0].report is None
    assert entry[0].description == entry[0].reason


def test_text_operator_uses_pins_even_when_disabled() -> None:
    contract = make_contract({"checks": {"pinned_content": False},
                              "pins": [{"name": "prod", "contains": "Never write"}]})
    messages = [user("Never write to production"), assistant("I will Never write there")]
    report = after_mode(messages, contract, operators=["remove_pinned_text"])
    assert [(m.sites, m.status) for m in report.mutants] == [(("pin:prod",), "survived")]


def test_absent_contains_pin_and_textless_role_pin_skip() -> None:
    contract = make_contract({"checks": {"structure": False},
                              "pins": [{"name": "prod", "contains": "prod"},
                                       {"name": "tools", "role": "tool"}]})
    report = run_mutations([user("go"), call("a"), result("a", None)], identity, contract)
    assert [m.status for m in by_operator(report, "remove_pinned_text")] == ["skipped"]


def test_two_instructions_give_two_text_and_two_move_survivors() -> None:
    messages = [system(), developer(), user("q1"), call("a"), result("a"), user("q2"),
                call("b"), result("b"), user("last")]
    report = after_mode(messages, WEAK)
    assert [(m.sites, m.status) for m in by_operator(report, "remove_pinned_text")] == [
        (("after[0]",), "survived"), (("after[1]",), "survived")]
    assert [m.status for m in by_operator(report, "move_instruction")] == ["survived"] * 2
    assert [m.sites for m in by_operator(report, "drop_recent_exchange")] == [
        ("after[2:5]",), ("after[5:8]",)]


def test_instruction_only_output_skips_the_latest_user() -> None:
    report = after_mode([system(), developer()])
    assert [m.status for m in by_operator(report, "drop_latest_user")] == ["skipped"]


def test_literal_removal_with_joins_is_caught_and_skips_the_rest() -> None:
    contract = make_contract({"pins": [{"name": "joined", "contains": "aba"}]})
    report = after_mode([assistant("aababa")], contract)
    assert (report.caught, report.skipped) == (1, 8) and report.passed


def test_identical_shared_instructions_merge_like_frayproof() -> None:
    # The same dict object at two positions: a deep copy keeps the sharing, so removing the
    # text at one position removes it at both, and both sites give one mutant.
    shared = system("Be brief")
    output = [shared, shared, user()]
    report = run_mutations([system("Be brief"), system("Be brief"), user()], lambda _m: output,
                           operators=["remove_pinned_text"])
    assert [m.sites for m in report.mutants] == [("after[0]", "after[1]")]
    unshared = run_mutations([system("Be brief"), system("Be brief"), user()], identity,
                             operators=["remove_pinned_text"])
    assert [m.sites for m in unshared.mutants] == [("after[0]",), ("after[1]",)]


def test_shared_content_block_is_truncated_twice_like_frayproof() -> None:
    block = {"type": "text", "text": "abcdefgh"}
    output = [call("a"), result("a", [block, block])]
    mutant = build_mutants(load_list([]), load_list(output), Contract(),
                           ["truncate_tool_result"])
    assert mutant[0].messages[1]["content"][0]["text"] == "abcd"
    report = run_mutations([call("a"), result("a", [dict(block), dict(block)])],
                           lambda _m: output, operators=["truncate_tool_result"])
    assert report.mutants[0].status == "survived"


# ---------------------------------------------------------------- targets

def test_bad_outputs_and_failing_targets_are_input_errors() -> None:
    with pytest.raises(InputError, match="list of message objects"):
        run_mutations(session(), lambda _m: None)
    with pytest.raises(InputError, match="list of message objects"):
        run_mutations(session(), lambda _m: {"role": "user"})
    with pytest.raises(InputError, match=r"messages\[0\]"):
        run_mutations(session(), lambda _m: [{"role": "user", "content": 3}])

    def boom(_messages: Any) -> Any:
        raise ValueError("exploded")

    with pytest.raises(InputError, match="Transformation failed: ValueError: exploded"):
        run_mutations(session(), boom)


def test_async_targets() -> None:
    calls = []

    async def compact(messages: list[Any]) -> list[Any]:
        calls.append(1)
        await asyncio.sleep(0)
        return messages

    report = asyncio.run(run_mutations_async(session(), compact, WEAK))
    assert calls == [1] and report.caught == 4
    with pytest.raises(InputError, match="async"):
        run_mutations(session(), compact)
    assert len(calls) == 1, "the coroutine is closed, never run"
    wrapped = asyncio.run(run_mutations_async(session(), identity, WEAK))
    assert wrapped == report

    async def fail(_messages: Any) -> Any:
        raise RuntimeError("later")

    with pytest.raises(InputError, match="Transformation failed: RuntimeError: later"):
        asyncio.run(run_mutations_async(session(), fail))


def test_input_contract_and_argument_errors() -> None:
    from frayproof_audit.model import Snapshot
    with pytest.raises(InputError, match="not a Snapshot"):
        run_mutations(Snapshot(()), identity)
    with pytest.raises(InputError):
        run_mutations({"role": "user"}, identity)
    with pytest.raises(InputError):
        run_mutations(session(), identity, {"pins": []})
    with pytest.raises(InputError, match="exactly one"):
        run_mutations(session(), identity, after=session())
    with pytest.raises(InputError, match="exactly one"):
        run_mutations(session())
    with pytest.raises(InputError, match="A logged after snapshot must be a list"):
        run_mutations(session(), after={"role": "user"})
    with pytest.raises(InputError, match="Unknown mutation operator 'nope'"):
        run_mutations(session(), identity, operators=["nope"])


@pytest.mark.parametrize("discriminator", [[], {}, None, 1, True])
def test_non_string_block_types_are_input_errors(discriminator: Any) -> None:
    bad = [user([{"type": discriminator, "text": "x"}])]
    with pytest.raises(InputError, match=r"content\[0\]\.type"):
        run_mutations(bad, identity)
    with pytest.raises(InputError, match=r"content\[0\]\.type"):
        run_mutations(session(), lambda _m: bad)


def test_operator_selection_keeps_frayproof_order() -> None:
    report = run_mutations(session(), identity, operators=["drop_latest_user", "drop_tool_call"])
    assert [m.operator for m in report.mutants] == ["drop_tool_call", "drop_latest_user"]
    assert list(report.operators) == ["drop_tool_call", "drop_latest_user"]


# ---------------------------------------------------------------- wire input

@pytest.mark.parametrize("runner", ["sync", "async"])
@pytest.mark.parametrize("shared", [False, True])
def test_the_target_owns_a_deep_copy_that_keeps_the_inputs_sharing(runner: str, shared: bool) -> None:
    """The target's input is `copy.deepcopy`'s copy: none of the caller's lists or dicts, the
    same sharing (made by one walk for a plain tree, by deepcopy otherwise), and what the
    target does to it reaches neither the caller's list nor the before snapshot judged."""
    prompt = system("Be brief")
    original = [prompt, prompt if shared else system("Be brief"), user("go")]
    pristine = copy.deepcopy(original)
    seen: list[Any] = []

    def vandal(messages: list[Any]) -> list[Any]:
        seen.append((messages is original, [m is o for m, o in zip(messages, original, strict=True)],
                     messages[0] is messages[1]))
        output = copy.deepcopy(messages)
        messages[0]["content"] = "changed"
        messages.append(user("more"))
        return output

    report = (run_mutations(original, vandal, operators=["remove_pinned_text"]) if runner == "sync"
              else asyncio.run(run_mutations_async(original, vandal, operators=["remove_pinned_text"])))
    assert seen == [(False, [False, False, False], shared)]
    assert original == pristine and (original[0] is original[1]) == shared
    # A shared prompt in the output is edited at both places: one mutant, as in frayproof.
    assert report.baseline.passed and report.caught + report.survived == (1 if shared else 2)


@pytest.mark.parametrize("calls_value", [None, []])
@pytest.mark.parametrize("runner", ["sync", "async"])
def test_target_sees_the_exact_original_wire(calls_value: Any, runner: str) -> None:
    original = [system(), {"content": "hi", "name": None, "role": "user",
                           "tool_calls": calls_value}]
    seen: list[Any] = []

    def spy(messages: list[Any]) -> list[Any]:
        seen.append(copy.deepcopy(messages))
        return messages

    if runner == "sync":
        report = run_mutations(original, spy)
    else:
        report = asyncio.run(run_mutations_async(original, spy))
    assert seen == [original]
    assert [list(m) for m in seen[0]] == [list(m) for m in original], "key order kept"
    assert report.baseline.passed


def test_target_reads_a_bom_file_once_and_gets_the_same_wire(tmp_path: Path,
                                                              monkeypatch: Any) -> None:
    original = [system(), {"role": "user", "tool_calls": [], "content": "é"}]
    path = tmp_path / "before.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(original, ensure_ascii=False).encode())
    reads: list[Path] = []
    import frayproof_audit.snapshot as snapshot_module

    real = snapshot_module.read_regular_file

    def counting(where: Any, limit: int) -> bytes:
        reads.append(Path(where))
        return real(where, limit)

    monkeypatch.setattr(snapshot_module, "read_regular_file", counting)
    seen: list[Any] = []

    def spy(messages: list[Any]) -> list[Any]:
        seen.append(messages)
        return messages

    report = run_mutations(path, spy)
    assert reads.count(path) == 1
    assert seen == [original] and list(seen[0][1]) == ["role", "tool_calls", "content"]
    assert report.baseline.passed


def test_a_target_editing_present_keys_fails_loudly(tmp_path: Path) -> None:
    def needs_name(messages: list[Any]) -> list[Any]:
        return [{**m, "name": m["name"].upper()} for m in messages]

    with pytest.raises(InputError, match="Transformation failed: KeyError"):
        run_mutations(session(), needs_name)


def test_bad_input_is_rejected_before_the_target_runs(tmp_path: Path) -> None:
    ran: list[Any] = []
    duplicate = tmp_path / "dup.json"
    duplicate.write_text('[{"role": "user", "role": "system", "content": "x"}]')
    nan = tmp_path / "nan.json"
    nan.write_text('[{"role": "user", "content": NaN}]')
    for path in (duplicate, nan):
        with pytest.raises(InputError):
            run_mutations(path, ran.append)
    assert ran == []


def test_shape_dependent_loss_is_found_by_the_baseline() -> None:
    before = [system(), {"role": "user", "content": "hi", "name": "ana"}]
    report = run_mutations(before, lambda m: [m[0], {"role": "user", "content": "hi"}],
                           make_contract({"pins": [{"name": "asks", "role": "user"}]}))
    assert not report.baseline.passed


def test_mutants_keep_raw_fields_in_their_original_order() -> None:
    raw = [{"content": "rules", "tool_calls": None, "role": "system"}, user()]
    mutants = build_mutants(load_list(raw), load_list(raw), Contract(), ["move_instruction"])
    moved = mutants[0].messages[1]
    assert list(moved) == ["content", "tool_calls", "role"]
    report = run_mutations(raw, identity, operators=["move_instruction"])
    assert report.mutants[0].caught_by == ("structure",)


def test_sdk_dump_fixture_mutates() -> None:
    report = run_mutations(FIXTURES / "sdk_dump_session.json", identity)
    assert report.baseline.passed and report.applicable > 0


# ---------------------------------------------------------------- mutate_pair and JSON

def test_mutate_pair_matches_run_mutations_and_never_touches_after() -> None:
    messages = [system(), user("q"), call("a", "b"), result("b"), result("a"), user("last")]
    before, after = load_list(messages), load_list(messages)
    pristine = copy.deepcopy(after.wire)
    baseline = check_loaded(before, after, STRONG)
    report = mutate_pair(before, after, STRONG, baseline=baseline)
    assert after.wire == pristine
    assert report == run_mutations(messages, identity, STRONG)
    assert mutate_pair(before, after, STRONG, ["drop_latest_user"]).operators == {
        "drop_latest_user": {"caught": 1, "survived": 0, "skipped": 0}}
    assert mutate_pair(before, after, STRONG, verify=True) == report


def test_json_report_schema() -> None:
    report = run_mutations(session(), identity, WEAK)
    text = report.to_json()
    assert text == run_mutations(session(), identity, WEAK).to_json()
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert set(data) == {"schema_version", "kind", "passed", "baseline", "caught", "survived",
                         "skipped", "applicable", "score_percent", "operators", "mutants"}
    assert (data["schema_version"], data["kind"], data["passed"]) == (1, "mutation", False)
    assert (data["caught"], data["survived"], data["skipped"], data["applicable"]) == (4, 5, 0, 9)
    assert data["score_percent"] == 44.44
    frayproofs = [name for name in OPERATORS
                  if get_operator(name).applies is None and not get_operator(name).quiet]
    # No tool schemas: the argument operators are not in the run; Chat data holds no reasoning,
    # so the reasoning operators give no entry.
    assert len(frayproofs) == 9
    assert set(data["operators"]) == set(frayproofs)
    assert list(report.operators) == frayproofs
    assert data["operators"]["drop_tool_call"] == {"caught": 1, "survived": 0, "skipped": 0}
    assert set(data["baseline"]) == {"errors", "passed", "schema_version", "violations",
                                     "warnings"}
    first = data["mutants"][0]
    assert set(first) == {"name", "description", "status", "message_index", "sites", "reason",
                          "report"}
    assert (first["name"], first["status"], first["message_index"]) == (
        "drop_tool_call", "caught", 2)
    assert first["sites"] == ["after[2].tool_calls[0]"]
    assert first["report"]["violations"][0]["message_index"] == 2
    assert set(first["report"]["violations"][0]) == {
        "check", "code", "message", "message_index", "pin", "rule", "severity", "snapshot",
        "tool_call_id"}
    skipped = after_mode([]).to_dict()
    assert skipped["score_percent"] is None
    assert skipped["mutants"][0] == {
        "name": "drop_tool_call", "description": skipped["mutants"][0]["reason"],
        "status": "skipped", "message_index": None, "sites": [],
        "reason": skipped["mutants"][0]["reason"], "report": None}


# ---------------------------------------------------------------- targets named by a spec

TARGET_SOURCE = '''
import pathlib
from helper_for_target import keep_all

pathlib.Path(__file__).with_name("imported.marker").write_text("ran")

def compact(messages):
    return keep_all(messages)

async def compact_async(messages):
    return keep_all(messages)

NOT_CALLABLE = 3
'''


@pytest.fixture
def target_dir(tmp_path: Path, write_json: Any) -> Path:
    folder = tmp_path / "targets"
    folder.mkdir()
    (folder / "helper_for_target.py").write_text("def keep_all(messages):\n    return messages\n")
    (folder / "compactor.py").write_text(TARGET_SOURCE)
    (folder / "input.json").write_text(json.dumps(session()))
    (folder / "weak.yaml").write_text("checks: {structure: {system_messages: anywhere}}\n")
    return folder


def request(folder: Path, target: str | None, **fields: Any) -> Any:
    from frayproof_audit.mutate.target import MutateRequest
    return MutateRequest(input=str(folder / "input.json"), target=target, **fields)


def test_file_target_imports_its_siblings_and_restores_the_path(target_dir: Path) -> None:
    import sys

    from frayproof_audit.mutate.target import run_request
    path_before, modules_before = sys.path[:], set(sys.modules)
    report = run_request(request(target_dir, f"{target_dir / 'compactor.py'}:compact",
                                 contract=str(target_dir / "weak.yaml")))
    assert report.caught == 4
    assert sys.path == path_before
    assert not {name for name in set(sys.modules) - modules_before
                if name.startswith("_frayproof_audit_target_")}
    sys.modules.pop("helper_for_target", None)


def test_async_file_target_is_awaited(target_dir: Path) -> None:
    import sys

    from frayproof_audit.mutate.target import run_request
    report = run_request(request(target_dir, f"{target_dir / 'compactor.py'}:compact_async"))
    assert report.baseline.passed and (report.caught, report.survived) == (5, 4)
    sys.modules.pop("helper_for_target", None)


def test_dotted_module_target(tmp_path: Path, monkeypatch: Any) -> None:
    from frayproof_audit.mutate.target import MutateRequest, run_request
    package = tmp_path / "mutation_target_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "strategies.py").write_text("def compact(messages):\n    return messages[:]\n")
    (tmp_path / "input.json").write_text(json.dumps(session()))
    monkeypatch.syspath_prepend(str(tmp_path))
    report = run_request(MutateRequest(input=str(tmp_path / "input.json"),
                                       target="mutation_target_pkg.strategies:compact"))
    assert (report.caught, report.survived) == (5, 4)


@pytest.mark.parametrize("spec, message", [
    ("missing", "Target must be"),
    (":compact", "Target must be"),
    ("module:", "Target must be"),
    ("module:not.valid", "Target must be"),
    ("missing.py:compact", "Cannot import target: FileNotFoundError"),
    ("does_not_exist_anywhere:compact", "Cannot import target: ModuleNotFoundError"),
    ("json:not_there", "Cannot import target: 'json' has no 'not_there'"),
    ("json:__doc__", "is not callable"),
])
def test_bad_target_specs(target_dir: Path, spec: str, message: str) -> None:
    from frayproof_audit.mutate.target import run_request
    with pytest.raises(InputError, match=message):
        run_request(request(target_dir, spec))


def test_contract_and_input_are_checked_before_the_target_is_imported(target_dir: Path) -> None:
    """frayproof's B9, fixed: a bad contract or input never runs the target's module code."""
    from frayproof_audit.mutate.target import run_request
    spec = f"{target_dir / 'compactor.py'}:compact"
    (target_dir / "bad.yaml").write_text("checks: {nope: true}\n")
    with pytest.raises(InputError, match="nope"):
        run_request(request(target_dir, spec, contract=str(target_dir / "bad.yaml")))
    (target_dir / "input.json").write_text('[{"role": "user", "content": 3}]')
    with pytest.raises(InputError, match=r"messages\[0\]"):
        run_request(request(target_dir, spec))
    assert not (target_dir / "imported.marker").exists()


def test_after_mode_runs_no_code(target_dir: Path) -> None:
    from frayproof_audit.mutate.target import run_request
    (target_dir / "after.json").write_text(json.dumps(session()[1:]))
    report = run_request(request(target_dir, None, after=str(target_dir / "after.json")))
    assert report.baseline.passed and report.applicable > 0
    assert not (target_dir / "imported.marker").exists()
    listed = run_mutations(str(target_dir / "input.json"), after=session()[1:])
    assert listed == report


# ---------------------------------------------------------------- literal removal property

@settings(max_examples=80, deadline=None)
@given(st.text(alphabet="ab ", min_size=1, max_size=4),
       st.lists(st.text(alphabet="abc ", max_size=6), min_size=1, max_size=3))
def test_contains_pin_removal_is_always_caught(literal: str, pieces: list[str]) -> None:
    """However the literal overlaps or re-forms by joining, none is left, so the pin fails."""
    from frayproof_audit.mutate.edits import remove_literal
    text = literal.join(pieces) + literal
    assert literal not in remove_literal(text, literal)
    contract = make_contract({"checks": {"structure": False},
                              "pins": [{"name": "p", "contains": literal}]})
    report = after_mode([user(text)], contract, operators=["remove_pinned_text"])
    assert [(m.sites, m.status) for m in report.mutants] == [(("pin:p",), "caught")]
    assert report.mutants[0].caught_by == ("pinned_content",)


def test_benchmark_smoke(capsys: Any) -> None:
    """bench_mutate runs end to end and its paths agree (speed is not asserted here)."""
    from benchmarks import bench_mutate
    assert bench_mutate.main(["--quick", "--no-peer", "--pairs", "2"]) == 0
    assert bench_mutate.main(["--quick", "--no-peer", "--pairs", "2", "--local"]) == 0
    assert "pairs/s" in capsys.readouterr().out


def test_tuples_in_a_target_output_mutate_like_their_json() -> None:
    """A deliberate difference: frayproof edits the raw objects (it crashes appending to a tuple
    `tool_calls` and leaves tuple text unedited); mutants here come from the JSON copy."""
    as_json = [user(), call("a"), result("a", [{"type": "text", "text": "abcdef"}]), user("b")]
    with_tuples = [user(), {**call("a"), "tool_calls": tuple(call("a")["tool_calls"])},
                   result("a", ({"type": "text", "text": "abcdef"},)), user("b")]
    expected = run_mutations(as_json, identity, ALL_RETAIN)
    assert run_mutations(as_json, lambda _m: with_tuples, ALL_RETAIN) == expected
    assert by_operator(expected, "truncate_tool_result")[0].status == "caught"


def test_plain_lists_are_validated_in_place_exactly_like_load_list() -> None:
    from frayproof_audit.jsonio import is_plain_json
    from frayproof_audit.snapshot import load_plain
    nested: Any = "x"
    for _ in range(600):
        nested = [nested]
    for bad in ([{"role": "user", "content": float("nan")}],
                [{"role": "user", "content": nested}], [{"role": "user", "x": {"a"}}],
                [{"role": "user", "content": "lone \ud800 surrogate"}]):
        assert not is_plain_json(bad)
        with pytest.raises(InputError):
            load_plain(bad)
    int_keys = [{"role": "user", "content": "x", "meta": {1: 2}}]
    assert not is_plain_json(int_keys)
    assert load_plain(int_keys).wire == load_list(int_keys).wire == [
        {"role": "user", "content": "x", "meta": {"1": 2}}]
    messages = session()
    loaded = load_plain(messages)
    assert loaded.wire is messages and loaded.views == load_list(messages).views
