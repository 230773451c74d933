"""Invariants of the provider profiles over generated sessions.

* Valid transcripts (`small.well_formed`) are requests every profile accepts.
* The same conversation written as Chat Completions messages or as Anthropic Messages gets the
  same defects (codes and ids) from every profile: profiles judge the neutral model.
* The reasoning operators' mutants of a passing pair are caught by the profile their content
  belongs to, wherever before holds the mutated message as it is.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frayproof_audit.errors import InputError
from frayproof_audit.mutate import mutate_pair
from frayproof_audit.mutate.report import CAUGHT
from frayproof_audit.providers import PROFILE_NAMES, provider_defects
from frayproof_audit.snapshot import load_list, load_source
from sessiongen import reasoning, small
from sessiongen.strategies import DrawSource, mutation_cases, well_formed_sessions
from tests.anthropic_wire import NotExpressible, to_anthropic
from tests.helpers import make_contract


@settings(max_examples=60, deadline=None)
@given(well_formed_sessions())
def test_valid_transcripts_pass_every_chat_adjacency_profile(messages: list[Any]) -> None:
    loaded = load_list(messages)
    for profile in ("openai-chat", "openai-responses", "anthropic"):
        assert provider_defects(loaded, profile) == [], profile


def _codes(loaded: Any, profile: str) -> list[tuple[str, str]]:
    return sorted((d.code, d.tool_call_id or "") for d in provider_defects(loaded, profile))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutation_cases())
def test_anthropic_wire_gets_the_chat_readings_defects(case: small.MutationCase) -> None:
    _, after, _ = case
    try:
        chat = load_list(after)
        wire, _places = to_anthropic(after)
    except (InputError, NotExpressible):  # a noisy session no format reads, or no wire spelling
        return
    written = load_source(wire, "anthropic")
    for profile in PROFILE_NAMES:
        assert _codes(written, profile) == _codes(chat, profile), profile


@st.composite
def matched_reasoning_cases(draw: st.DrawFn) -> small.MutationCase:
    """Reasoning cases whose contract judges by the profile the blocks belong to."""
    source = DrawSource(draw)
    style = source.pick(reasoning.STYLES)
    before, after, _ = reasoning.reasoning_case(source, style)
    profile = "anthropic" if style == "thinking" else "openai-responses"
    return before, after, small.to_yaml({"checks": {"provider_validity": {"profile": profile}}})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matched_reasoning_cases())
def test_reasoning_mutants_of_kept_messages_are_caught(case: small.MutationCase) -> None:
    before_raw, after_raw, contract_yaml = case
    try:
        before, after = load_list(before_raw), load_list(after_raw)
    except InputError:  # noisy sessions may hold what no format reads
        return
    kept = {before.identity(i) for i in range(len(before))}
    report = mutate_pair(before, after, make_contract(contract_yaml),
                         ["drop_reasoning_item", "alter_thinking_block"])
    for mutant in report.mutants:
        index = mutant.message_index
        assert index is not None
        if after.identity(index) in kept:
            assert mutant.status == CAUGHT, mutant


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(mutation_cases(), matched_reasoning_cases()))
def test_every_profile_judges_any_loadable_pair(case: small.MutationCase) -> None:
    """No snapshot a format reads makes a profile fail; defects point inside the snapshot,
    come in message order and quote their error text."""
    before_raw, after_raw, _ = case
    try:
        before, after = load_list(before_raw), load_list(after_raw)
    except InputError:
        return
    for profile in PROFILE_NAMES:
        for prior in (None, before):
            defects = provider_defects(after, profile, prior)
            indices = [d.index for d in defects]
            assert indices == sorted(indices)
            for defect in defects:
                assert 0 <= defect.index < len(after)
                assert defect.error in defect.message and defect.site.startswith("after")
                assert defect.profile == profile


@st.composite
def wild_sessions(draw: st.DrawFn) -> list[Any]:
    """Wild sessions (every odd shape a Chat snapshot may have, `content` left out too), half
    of them with thinking or reasoning blocks in front of their assistant messages."""
    source = DrawSource(draw)
    messages = small.Wild(source).session()
    if source.chance(0.5):
        messages = reasoning.decorate(messages, source.pick(reasoning.STYLES))
    for message in messages:  # a message may leave `content` out altogether
        if type(message) is dict and message.get("content") is None and source.chance(0.5):
            message.pop("content", None)
    return messages


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wild_sessions())
def test_profiles_and_operators_take_any_loadable_snapshot(messages: list[Any]) -> None:
    from frayproof_audit.engine import prepare_before
    from frayproof_audit.mutate.operators import OPERATOR_TABLE

    try:
        loaded = load_list(messages)
    except InputError:
        return
    contract = make_contract({"checks": {"provider_validity": True}})
    facts = prepare_before(loaded, contract)
    for profile in PROFILE_NAMES:
        provider_defects(loaded, profile, loaded)
    for operator in OPERATOR_TABLE:
        for candidate in operator.find_sites(loaded, contract, facts):
            assert candidate.site.startswith("after")
