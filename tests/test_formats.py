"""The input-format seam: choosing a format, and a second format end to end.

`tests/turns_format.py` registers a test-only format whose wire messages group several neutral
ones; every verdict and mutant status must equal the same conversation read as `openai`, while
findings and mutant sites point at the turn-wise wire data.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from frayproof_audit import InputError, check, validate
from frayproof_audit.formats import FORMATS, get_format
from frayproof_audit.mutate import run_mutations
from tests.helpers import (
    EXAMPLE_CONTRACT,
    call,
    history,
    make_contract,
    result,
    run_cli,
    session,
    system,
    user,
)
from tests.turns_format import TURNS, as_turns


@pytest.fixture
def turns_registered() -> Iterator[None]:
    FORMATS[TURNS.name] = TURNS
    try:
        yield
    finally:
        del FORMATS[TURNS.name]


def test_unknown_format_names_are_input_errors() -> None:
    with pytest.raises(InputError, match=r"unknown input format 'palm' \(known: openai, "):
        validate([user()], input_format="palm")
    with pytest.raises(InputError, match="format: must be one of 'openai', "):
        make_contract("format: turns\n")


def test_openai_is_the_default_and_can_be_named() -> None:
    assert get_format("openai") is FORMATS["openai"]
    broken = [user(), result("z")]
    assert validate(broken).violations == validate(broken, input_format="openai").violations


def test_cli_input_format_option() -> None:
    out = run_cli("validate", "--snapshot", "fixtures/orphaned_result.json",
                  "--input-format", "openai", expect=1)
    assert "TP-ORPHAN" in out.stdout
    bad = run_cli("validate", "--snapshot", "fixtures/orphaned_result.json",
                  "--input-format", "palm", expect=2)
    assert "palm" in bad.stderr


@pytest.mark.usefixtures("turns_registered")
def test_a_contract_can_name_a_registered_format() -> None:
    contract = make_contract("format: turns\n")
    assert contract.format == "turns"
    after = as_turns([system(), user(), result("z")])
    [finding] = validate(after, contract).violations
    assert (finding.code, finding.message_index) == ("TP-ORPHAN", 1)  # turn 1 holds the result


CONVERSATIONS: dict[str, tuple[list[Any], list[Any]]] = {
    "kept": (history(3), history(3)),
    "summarised": (history(3), [history(3)[0], user("summary"), *history(3)[9:]]),
    "orphan": (session(), [system(), user(), result("a"), user("Continue")]),
    "dangling": (session(), [system(), user(), call("a"), user("Continue")]),
    "lost-system": (session(), session()[1:]),
}


@pytest.mark.usefixtures("turns_registered")
@pytest.mark.parametrize("name", CONVERSATIONS)
def test_the_same_conversation_gets_the_same_verdict_in_both_formats(name: str) -> None:
    before, after = CONVERSATIONS[name]
    contract = make_contract({
        "pins": [{"name": "system", "role": "system"}],
        "retain": {"latest_user_message": "exact", "recent_exchanges": 1, "tool_results": "complete"},
    })
    flat = check(before, after, contract)
    grouped = check(as_turns(before), as_turns(after), contract, input_format="turns")
    assert [(v.code, v.snapshot) for v in grouped.violations] == [
        (v.code, v.snapshot) for v in flat.violations]
    turn_of = {"before": _turn_index(before), "after": _turn_index(after)}
    for mine, theirs in zip(grouped.violations, flat.violations, strict=True):
        expected = None if theirs.message_index is None else turn_of[theirs.snapshot][theirs.message_index]
        assert mine.message_index == expected


def _turn_index(messages: list[Any]) -> list[int]:
    """For each flat message, the index of the turn `as_turns` puts it in."""
    found = []
    for turn, item in enumerate(as_turns(messages)):
        found.extend([turn] * len(item["turn"]))
    return found


@pytest.mark.usefixtures("turns_registered")
@pytest.mark.parametrize("verify", [False, True], ids=["fast", "verify"])
def test_mutation_works_on_the_neutral_model_and_labels_wire_coordinates(verify: bool) -> None:
    before = history(2)
    flat = run_mutations(before, after=before, contract=EXAMPLE_CONTRACT, verify=verify)
    grouped = run_mutations(as_turns(before), after=as_turns(before), contract=EXAMPLE_CONTRACT,
                            input_format="turns", verify=verify)
    assert [(m.operator, m.status, m.caught_by) for m in grouped.mutants] == [
        (m.operator, m.status, m.caught_by) for m in flat.mutants]
    sites = {site for mutant in grouped.mutants for site in mutant.sites}
    assert "after[1].turn[1].tool_calls[0]" in sites  # the first call, in turn 1
    assert "after[1].turn[2]" in sites  # its result, in the same turn
    assert not any(site.startswith("after[") and ".turn[" not in site
                   for site in sites if not site.startswith("pin:"))


@pytest.mark.usefixtures("turns_registered")
def test_a_corpus_mixes_formats_record_by_record(tmp_path: Any) -> None:
    import json

    from frayproof_audit.corpus import audit, read_table

    before, after = CONVERSATIONS["orphan"]
    records = [
        {"pair_id": "flat", "before": before, "after": after},
        {"pair_id": "grouped", "format": "turns", "before": as_turns(before), "after": as_turns(after)},
        {"pair_id": "unknown", "format": "palm", "before": before, "after": after},
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    audit([str(path)], None, str(tmp_path / "out"), jobs=1, mutate=False, fail_on=("none",))
    pairs = {row["pair_id"]: row for row in read_table(tmp_path / "out", "pairs").collect().to_dicts()}
    assert {name: (row["format"], row["status"]) for name, row in pairs.items()} == {
        "flat": ("openai", "fail"), "grouped": ("turns", "fail"), "unknown": ("palm", "input_error")}
    reason = pairs["unknown"]["input_error"]
    assert "format must be one of openai, " in reason and "turns, got 'palm'" in reason
    findings = read_table(tmp_path / "out", "findings").collect()
    by_pair = {pair_id: sorted(zip(group["code"], group["message_index"], strict=True))
               for (pair_id,), group in findings.group_by("pair_id")}
    assert by_pair == {"flat": [("TP-ORPHAN", 2)], "grouped": [("TP-ORPHAN", 1)]}


def test_audit_input_format_must_be_registered(tmp_path: Any) -> None:
    out = run_cli("audit", "examples/corpus", "--out", tmp_path / "out", "--input-format", "x",
                  expect=2)
    assert "x" in out.stderr and not (tmp_path / "out").exists()


@pytest.mark.usefixtures("turns_registered")
def test_a_lost_exchange_is_named_in_the_users_own_coordinates() -> None:
    contract = make_contract({"retain": {"recent_exchanges": 1}})
    before = history(2)
    after = [before[0], user("summary"), before[-1]]
    [flat] = check(before, after, contract).violations
    assert flat.message == "Recent exchange before[5:9] is not retained verbatim and in order."
    [grouped] = check(as_turns(before), as_turns(after), contract, input_format="turns").violations
    assert grouped.code == flat.code == "RET-EXCHANGE"
    # turn 2 holds user 5 .. answer 8 (`as_turns` starts a turn at every user message)
    assert grouped.message == (
        "Recent exchange before[2].turn[0]..[2].turn[3] is not retained verbatim and in order.")
    assert grouped.message_index == 2
