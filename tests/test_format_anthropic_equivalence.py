"""The anthropic format judges a conversation exactly as openai judges the same conversation.

Generated Chat sessions (`sessiongen`) are rewritten as Anthropic wire data
(`tests/anthropic_wire.py`): a top-level system, `tool_use` blocks, user messages of
`tool_result` blocks. Every verdict must be the same (codes, checks, severities, snapshots,
ids, pins, rules), with message indices mapped through the rewrite (a finding on the top-level
system has none), and every mutant must get the same status from the same checks, at the
Anthropic spelling of the same site. A corpus mixing formats record by record labels each pair
with the format that read it.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from frayproof_audit import InputError, check
from frayproof_audit.contract import Contract
from frayproof_audit.formats.anthropic import compact_json
from frayproof_audit.mutate import MutationReport, run_mutations
from frayproof_audit.report import Report
from sessiongen import arguments, small
from sessiongen.strategies import DrawSource, clean_mutation_cases, mutation_cases
from tests.anthropic_wire import NotExpressible, Place, expected_site, index_map, to_anthropic
from tests.helpers import make_contract

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _convert(messages: list[Any], top_system: bool) -> tuple[Any, list[Place]]:
    try:
        return to_anthropic(messages, top_system=top_system)
    except NotExpressible:
        assume(False)
        raise  # unreachable: assume(False) raises


def _same_verdict(chat: Report, wire: Report, places: dict[str, list[Place]]) -> None:
    assert [(v.code, v.check, v.severity, v.snapshot, v.tool_call_id, v.pin, v.rule)
            for v in wire.violations] == [
        (v.code, v.check, v.severity, v.snapshot, v.tool_call_id, v.pin, v.rule)
        for v in chat.violations]
    for mine, theirs in zip(wire.violations, chat.violations, strict=True):
        expected = (None if theirs.message_index is None
                    else index_map(places[theirs.snapshot])[theirs.message_index])
        assert mine.message_index == expected, (mine, theirs)


@SETTINGS
@given(mutation_cases(), st.booleans())
def test_noisy_sessions_get_the_same_verdict(case: small.MutationCase, top_system: bool) -> None:
    before, after, contract_yaml = case
    wire_before, before_places = _convert(before, top_system)
    wire_after, after_places = _convert(after, top_system)
    contract = make_contract(contract_yaml)
    try:
        chat = check(before, after, contract)
    except InputError:
        with pytest.raises(InputError):
            check(wire_before, wire_after, contract, input_format="anthropic")
        return
    wire = check(wire_before, wire_after, contract, input_format="anthropic")
    _same_verdict(chat, wire, {"before": before_places, "after": after_places})


def _mutations(before: Any, after: Any, contract: Any, fmt: str, verify: bool) -> MutationReport:
    """`run_mutations` on a logged pair; an object snapshot (top-level system) goes by file."""
    if isinstance(before, list) and isinstance(after, list):
        return run_mutations(before, after=after, contract=contract, input_format=fmt,
                             verify=verify)
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, value in (("before", before), ("after", after)):
            path = Path(folder) / f"{name}.json"
            path.write_text(json.dumps(value), encoding="utf-8")
            paths.append(path)
        return run_mutations(paths[0], after=paths[1], contract=contract, input_format=fmt,
                             verify=verify)


def _same_mutants(before: list[Any], after: list[Any], contract: Any, top_system: bool,
                  verify: bool = False) -> None:
    if isinstance(contract, str):
        contract = make_contract(contract)
    wire_before, _ = _convert(before, top_system)
    wire_after, places = _convert(after, top_system)
    chat = _mutations(before, after, contract, "openai", verify)
    wire = _mutations(wire_before, wire_after, contract, "anthropic", verify)
    assert wire.baseline.passed == chat.baseline.passed
    assert [(m.operator, m.description, m.status, m.caught_by) for m in wire.mutants] == [
        (m.operator, m.description, m.status, m.caught_by) for m in chat.mutants]
    for mine, theirs in zip(wire.mutants, chat.mutants, strict=True):
        assert mine.sites == tuple(expected_site(site, places) for site in theirs.sites)


@SETTINGS
@given(clean_mutation_cases(), st.booleans())
def test_clean_sessions_give_the_same_mutants(case: small.MutationCase, top_system: bool) -> None:
    before, after, contract_yaml = case
    _same_mutants(before, after, contract_yaml, top_system)


def _compact_arguments(messages: list[Any]) -> list[Any]:
    """Arguments rewritten as compact JSON (Anthropic holds `input` as a value, so spacing is
    not expressible); texts that are not JSON are left for the converter to refuse, "" means
    no `input`."""
    for message in messages:
        for call in message.get("tool_calls") or ():
            function = call["function"]
            with contextlib.suppress(ValueError):
                function["arguments"] = compact_json(json.loads(function["arguments"]))
    return messages


@st.composite
def argument_cases(draw: st.DrawFn) -> tuple[list[Any], list[Any], Contract]:
    return arguments.argument_case(DrawSource(draw))


@SETTINGS
@given(argument_cases(), st.booleans())
def test_argument_operators_and_call_integrity_agree(
        case: tuple[list[Any], list[Any], Contract], top_system: bool) -> None:
    before, after, contract = case
    before, after = _compact_arguments(before), _compact_arguments(after)
    wire_before, before_places = _convert(before, top_system)
    wire_after, after_places = _convert(after, top_system)
    _same_verdict(check(before, after, contract),
                  check(wire_before, wire_after, contract, input_format="anthropic"),
                  {"before": before_places, "after": after_places})
    _same_mutants(before, after, contract, top_system)


@pytest.mark.parametrize("seed", range(3))
def test_fast_path_and_full_recheck_agree_on_anthropic_wire(seed: int) -> None:
    """`verify=True` rechecks every anthropic mutant from scratch and raises on a difference."""
    from sessiongen.source import RandomSource

    src = RandomSource(seed)
    judged = 0
    for _ in range(8):
        before, after, contract_yaml = small.clean_mutation_case(src)
        try:
            to_anthropic(before), to_anthropic(after)
        except NotExpressible:
            continue
        _same_mutants(before, after, contract_yaml, top_system=seed % 2 == 0, verify=True)
        judged += 1
    assert judged
