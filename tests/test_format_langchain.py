"""The `langchain` format: LangChain messages read as LangChain converts them, and equivalence.

The reading is done on plain dicts; it must equal LangChain's own `load` +
`convert_to_openai_messages` on every message LangChain accepts (a property test over messages
built with LangChain's constructors, in its three spellings). Generated Chat Completions
sessions written as serialized LangChain messages (`sessiongen.langchain_wire`) must get the
verdicts and mutant statuses of the same conversation read as `openai` (its `twin`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from frayproof_audit import InputError, check, validate
from frayproof_audit.formats import detect
from frayproof_audit.mutate import run_mutations
from frayproof_audit.snapshot import load_file, load_list
from frayproof_audit.transcript import repair
from sessiongen import small, strategies
from sessiongen.langchain_wire import NotExpressible, expected_site, to_langchain, twin
from sessiongen.source import RandomSource
from tests.helpers import make_contract

lc_load = pytest.importorskip("langchain_core.load")
lc_messages = pytest.importorskip("langchain_core.messages")

LANGCHAIN = "langchain"
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
M = lc_messages


def dumped(*messages: Any) -> list[Any]:
    return [lc_load.dumpd(message) for message in messages]


def langchain_reading(wire: list[Any]) -> list[Any]:
    """LangChain's own reading of serialized messages."""
    loaded = [lc_load.load(item, allowed_objects="core") for item in wire]
    result: list[Any] = M.convert_to_openai_messages(loaded)
    return result


ASK = M.HumanMessage("what is in a", id="h1")


def calls(*ids: str) -> Any:
    return M.AIMessage("", tool_calls=[{"name": "read", "args": {"path": "a"}, "id": i} for i in ids])


def result(call_id: str) -> Any:
    return M.ToolMessage("ok", tool_call_id=call_id)


CASES: dict[str, tuple[list[Any], list[tuple[str, int | None]]]] = {
    "answered": ([ASK, calls("c1", "c2"), result("c2"), result("c1"), M.AIMessage("done")], []),
    "orphan-result": ([ASK, calls("c1"), result("c1"), result("zz")], [("TP-ORPHAN", 3)]),
    "unanswered-call": (
        [ASK, calls("c1", "c2"), result("c1"), M.HumanMessage("go on")],
        [("TP-UNANSWERED", 1)],
    ),
    "anthropic-tool-result-blocks": (
        [
            ASK,
            M.AIMessage([{"type": "tool_use", "id": "c1", "name": "read", "input": {}}]),
            M.HumanMessage([{"type": "tool_result", "tool_use_id": "zz", "content": "x"}]),
        ],
        [("TP-ORPHAN", 2), ("TP-UNANSWERED", 1)],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_cases(name: str) -> None:
    messages, expected = CASES[name]
    report = validate(dumped(*messages), input_format=LANGCHAIN)
    assert [(v.code, v.message_index) for v in report.violations] == expected


def test_neutral_reading_and_sites() -> None:
    wire = dumped(
        M.SystemMessage("rules", additional_kwargs={"__openai_role__": "developer"}),
        M.HumanMessage([{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}, "b"]),
        M.AIMessage(
            [
                {"type": "text", "text": "x"},
                {"type": "tool_use", "id": "c2", "name": "grep", "input": {"q": "é"}},
            ],
            tool_calls=[{"name": "read", "args": {"path": "a"}, "id": "c1"}],
            usage_metadata={"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
        ),
        M.ToolMessage("ok", tool_call_id="c1", status="error", artifact={"raw": 1}),
        M.HumanMessage([{"type": "tool_result", "tool_use_id": "c2", "content": "r"}]),
        M.AIMessage([{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "t"}], name="bob"),
    )
    loaded = load_list(wire, LANGCHAIN)
    assert loaded.wire == [
        {"role": "developer", "content": "rules"},
        {"role": "user", "content": "a\nb"},
        {
            "role": "assistant",
            "content": "x",
            "tool_calls": [
                {"type": "function", "id": "c1", "function": {"name": "read", "arguments": '{"path": "a"}'}},
                {"type": "function", "id": "c2", "function": {"name": "grep", "arguments": '{"q": "é"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "tool", "tool_call_id": "c2", "content": "r"},
        {
            "role": "assistant",
            "name": "bob",
            "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "t"}],
        },
    ]
    assert loaded.wire == langchain_reading(wire)
    assert [loaded.site("after", i) for i in range(len(loaded))] == [
        "after[0]",
        "after[1]",
        "after[2]",
        "after[3]",
        "after[4].kwargs.content[0]",
        "after[5]",
    ]
    assert loaded.site("after", 2, 0, "path") == "after[2].kwargs.tool_calls[0].args.path"
    assert loaded.site("after", 2, 1, "two words") == 'after[2].kwargs.content[1].input["two words"]'
    assert [loaded.wire_index(i) for i in range(len(loaded))] == [0, 1, 2, 3, 4, 5]


def test_the_three_spellings_read_alike_and_sites_follow_each() -> None:
    messages = [ASK, calls("c1"), result("c1")]
    serialized = dumped(*messages)
    fields = [message.model_dump() for message in messages]
    histories = M.messages_to_dict(messages)
    readings = [load_list(wire, LANGCHAIN) for wire in (serialized, fields, histories)]
    assert readings[0].wire == readings[1].wire == readings[2].wire == langchain_reading(serialized)
    assert [reading.site("after", 1, 0, "path") for reading in readings] == [
        "after[1].kwargs.tool_calls[0].args.path",
        "after[1].tool_calls[0].args.path",
        "after[1].data.tool_calls[0].args.path",
    ]


def test_remove_markers_are_no_messages_and_are_noted() -> None:
    wire = dumped(M.RemoveMessage(id="__remove_all__"), M.HumanMessage("Here is a summary"), ASK)
    loaded = load_list(wire, LANGCHAIN)
    assert [message["content"] for message in loaded.wire] == ["Here is a summary", "what is in a"]
    assert [loaded.wire_index(i) for i in range(len(loaded))] == [1, 2]
    [note] = loaded.notes
    assert note.startswith("messages[0]: a RemoveMessage")
    codes = [v.code for v in validate(wire, input_format=LANGCHAIN).violations]
    assert codes == ["FMT-NORMALIZED"]


@pytest.mark.parametrize(
    "wire, message",
    [
        ([{"role": "user", "content": "hi"}], r"messages\[0\] is no LangChain message"),
        ({"messages": []}, "A snapshot must be an array"),
        ([{"type": "ai", "content": 3}], r"messages\[0\]\.content must be a string or an array"),
        (
            [{"type": "ai", "content": "", "tool_calls": [{"name": "f", "args": [1], "id": "c"}]}],
            r"messages\[0\]\.tool_calls\[0\]\.args must be an object",
        ),
        (
            [{"type": "tool", "data": {"content": "x", "tool_call_id": None}}],
            r"messages\[0\]\.data\.tool_call_id must be a string",
        ),
        (
            [
                {
                    "lc": 1,
                    "type": "constructor",
                    "id": ["langchain", "schema", "messages", "HumanMessage"],
                    "kwargs": {"content": [{"type": "text"}]},
                }
            ],
            r"messages\[0\]\.kwargs\.content\[0\]\.text must be a string",
        ),
        (
            [{"type": "human", "content": [{"type": "tool_use", "id": "c", "name": "f", "input": {}}]}],
            r"messages\[0\]\.content\[0\] is a tool_use block outside an AIMessage",
        ),
    ],
)
def test_input_errors_name_the_field(wire: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        validate(wire, input_format=LANGCHAIN)


def test_multimodal_blocks_are_read_by_langchain_or_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    image = M.HumanMessage(
        [{"type": "text", "text": "look"}, {"type": "image", "base64": "AAAA", "mime_type": "image/png"}]
    )
    wire = dumped(image)
    assert load_list(wire, LANGCHAIN).wire == langchain_reading(wire)
    for module in ("langchain_core.load", "langchain_core.messages"):  # as if not installed
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(
        InputError,
        match=r"messages\[0\] holds a multimodal image block, which "
        r"needs langchain-core",
    ):
        load_list(wire, LANGCHAIN)


def test_auto_detects_serialized_messages_and_files_load(tmp_path: Path) -> None:
    wire = dumped(ASK, calls("c1"), result("c1"))
    assert detect(wire)[0].name == LANGCHAIN
    assert validate(wire, input_format="auto").violations == validate(wire, input_format=LANGCHAIN).violations
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(wire), encoding="utf-8")
    assert load_file(path, LANGCHAIN).wire == load_list(wire, LANGCHAIN).wire


def test_repair_answers_a_dangling_call_with_a_tool_message_langchain_loads() -> None:
    wire = dumped(ASK, calls("c1", "c2"), result("c1"), M.HumanMessage("go on"))
    repaired = repair(wire, LANGCHAIN)
    out = repaired.transcript
    assert [item["kwargs"].get("tool_call_id") for item in out] == [None, None, "c1", "c2", None]
    assert out[3]["kwargs"]["status"] == "error"
    assert out[0] == wire[0] and out[2] == wire[2]  # untouched messages as they were
    assert [type(lc_load.load(item, allowed_objects="core")).__name__ for item in out] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert validate(out, input_format=LANGCHAIN).passed
    flat = repair(
        [message.model_dump() for message in (ASK, calls("c1", "c2"), result("c1"), M.HumanMessage("go on"))],
        LANGCHAIN,
    )
    assert flat.transcript[3]["type"] == "tool" and flat.transcript[3]["tool_call_id"] == "c2"


def test_a_message_read_as_several_cannot_be_rewritten() -> None:
    wire = dumped(
        ASK,
        M.AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": c} for c in ("c1", "c2", "c3")]),
        M.HumanMessage([{"type": "tool_result", "tool_use_id": c, "content": "x"} for c in ("c1", "c2")]),
    )
    with pytest.raises(
        InputError,
        match=r"messages\[2\] is one message read as 2 \(its "
        r"tool_result blocks\): a LangChain snapshot is rewritten",
    ):
        repair(wire, LANGCHAIN)


# --- LangChain's own reading, on every message it accepts ------------------------------------

TEXT = st.sampled_from(["", "a", "é ✓", "line\nline", " "])
ARGS = st.dictionaries(
    st.sampled_from(["path", "q", "é"]),
    st.one_of(st.integers(-3, 3), TEXT, st.lists(st.integers(0, 2), max_size=2)),
    max_size=2,
)
BLOCK = st.one_of(
    TEXT,
    st.builds(lambda t: {"type": "text", "text": t}, TEXT),
    st.builds(lambda t: {"type": "text", "text": t, "cache_control": {"type": "ephemeral"}}, TEXT),
    st.just({"type": "image_url", "image_url": {"url": "https://x/y.png"}}),
    st.just({"type": "thinking", "thinking": "hm", "signature": "s"}),
    st.just({"type": "input_audio", "input_audio": {"data": "AA", "format": "wav"}}),
    st.just({"type": "json", "json": {"k": [1, "é"]}}),
    st.just({"type": "guard_content", "guard_content": {"text": "g"}}),
    st.just({"type": "refusal", "refusal": "no"}),
    st.just({"type": "refusal"}),
    st.just({"type": "custom", "value": 1}),
)
CONTENT = st.one_of(TEXT, st.lists(BLOCK, max_size=3))
CALL = st.builds(
    lambda name, args, i: {"name": name, "args": args, "id": i},
    st.sampled_from(["read", "grep"]),
    ARGS,
    st.sampled_from(["c1", "c2", "c3"]),
)
NAME = st.sampled_from([None, "", "bob"])


@st.composite
def messages(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["human", "ai", "system", "developer", "tool", "chat", "function"]))
    content = draw(CONTENT)
    name = draw(NAME)
    if kind == "human":
        return M.HumanMessage(content, name=name)
    if kind == "system":
        return M.SystemMessage(content, name=name)
    if kind == "developer":
        return M.SystemMessage(content, additional_kwargs={"__openai_role__": "developer"})
    if kind == "tool":
        tool_content = draw(st.one_of(CONTENT, st.integers(0, 3), st.none(), st.just({"a": 1})))
        return M.ToolMessage(
            tool_content,
            tool_call_id=draw(st.sampled_from(["c1", "c2", 7])),
            status=draw(st.sampled_from(["success", "error"])),
        )
    if kind == "chat":
        return M.ChatMessage(content, role=draw(st.sampled_from(["critic", "user"])))
    if kind == "function":
        return M.FunctionMessage(content, name="fn")
    tool_calls = draw(st.lists(CALL, max_size=2))
    blocks = draw(
        st.lists(
            st.one_of(
                st.builds(
                    lambda i, a: {"type": "tool_use", "id": i, "name": "read", "input": a},
                    st.sampled_from(["c1", "c9"]),
                    ARGS,
                ),
                st.builds(
                    lambda i: {
                        "type": "function_call",
                        "call_id": i,
                        "name": "grep",
                        "arguments": '{"q": 1}',
                    },
                    st.sampled_from(["c2", "c8"]),
                ),
                st.builds(
                    lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"},
                    st.sampled_from(["c1", "c4"]),
                ),
            ),
            max_size=2,
        )
    )
    body = content if isinstance(content, list) else ([content] if content else [])
    extra = draw(st.sampled_from([{}, {"refusal": "nope"}, {"refusal": ""}]))
    return M.AIMessage(
        [*body, *blocks] if blocks else content,
        tool_calls=tool_calls,
        name=name,
        additional_kwargs=extra,
        id=draw(st.sampled_from([None, "run-1"])),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages(), min_size=1, max_size=4), st.sampled_from(["serialized", "fields", "dict"]))
def test_the_reading_is_langchains_own(built: list[Any], spelling: str) -> None:
    try:
        expected = M.convert_to_openai_messages(built)
    except (ValueError, KeyError, AttributeError, TypeError):
        assume(False)
    if spelling == "serialized":
        wire = dumped(*built)
    elif spelling == "fields":
        wire = [json.loads(message.model_dump_json()) for message in built]
    else:
        wire = json.loads(json.dumps(M.messages_to_dict(built)))
    assert load_list(wire, LANGCHAIN).wire == json.loads(json.dumps(expected))


# --- the same conversation in both formats ----------------------------------------------------


def _convert(messages: list[Any]) -> list[Any]:
    try:
        return to_langchain(messages)
    except NotExpressible:
        assume(False)
        raise


@SETTINGS
@given(strategies.mutation_cases())
def test_generated_sessions_get_the_same_verdicts(case: small.MutationCase) -> None:
    before, after, contract_yaml = case
    contract = make_contract(contract_yaml)
    wire_before, wire_after = _convert(before), _convert(after)
    try:
        flat = check(twin(before), twin(after), contract)
    except InputError:
        with pytest.raises(InputError):
            check(wire_before, wire_after, contract, input_format=LANGCHAIN)
        return
    mine = check(wire_before, wire_after, contract, input_format=LANGCHAIN)
    assert [
        (v.code, v.check, v.snapshot, v.severity, v.tool_call_id, v.pin, v.rule, v.message_index)
        for v in mine.violations
    ] == [
        (v.code, v.check, v.snapshot, v.severity, v.tool_call_id, v.pin, v.rule, v.message_index)
        for v in flat.violations
    ]


def test_the_neutral_reading_is_the_twin() -> None:
    src = RandomSource(11)
    compared = 0
    for _ in range(80):
        before, _, _ = small.mutation_case(src)
        try:
            wire = to_langchain(before)
        except NotExpressible:
            continue
        mine, flat = load_list(wire, LANGCHAIN), load_list(twin(before), "openai")
        assert [mine.identity(i) for i in range(len(mine))] == [flat.identity(i) for i in range(len(flat))]
        assert mine.wire == langchain_reading(wire)
        compared += 1
    assert compared > 10


def _mutation_cases() -> list[small.MutationCase]:
    src = RandomSource(5)
    found: list[small.MutationCase] = []
    while len(found) < 8:
        case = small.clean_mutation_case(src) if len(found) < 4 else small.mutation_case(src)
        try:
            to_langchain(case[0]), to_langchain(case[1])
        except NotExpressible:
            continue
        found.append(case)
    return found


@pytest.mark.parametrize("case", _mutation_cases())
def test_mutant_statuses_and_sites_match_openai(case: small.MutationCase) -> None:
    before, after, contract_yaml = case
    contract = make_contract(contract_yaml)
    flat = run_mutations(twin(before), after=twin(after), contract=contract)
    mine = run_mutations(
        to_langchain(before), after=to_langchain(after), contract=contract, input_format=LANGCHAIN
    )
    assert mine.baseline.passed == flat.baseline.passed
    assert [(m.operator, m.description, m.status, m.caught_by) for m in mine.mutants] == [
        (m.operator, m.description, m.status, m.caught_by) for m in flat.mutants
    ]
    for theirs, ours in zip(flat.mutants, mine.mutants, strict=True):
        assert ours.sites == tuple(expected_site(site) for site in theirs.sites)
