"""Small-vocabulary sessions, compactions and contracts: where the checks' corner cases live.

Few call ids and few texts make reused ids, identical messages (dedupe), literal pins that
match, blank and split text common. Every builder takes a `Source`, so the same code gives
hypothesis strategies (`sessiongen.strategies`, which shrink) and seeded batches (`RandomSource`,
for the differential tests that send hundreds of cases to the peer in one process). Messages are
`sessiongen.wire` shapes, as in `sessiongen.realistic`.

Families, from tame to wild:

* `well_formed(src)` — valid transcripts only (leading instructions, user turns, parallel tool
  batches answered in any order, optional answers and open user turn): every check passes.
* `agent_session(src)` / `noisy_session(src)` — transcripts with content arrays, `name` fields
  and a pending call; the noisy ones add messages the checks reject and an identical copy.
* `Wild(src)` — anything the loaders accept and more: null fields, odd roles, blank and reused
  ids, misplaced results, text blocks of every kind, planted defects, lossy and reordering edits,
  contracts with pins cut out of the session, JSON in several layouts, deliberate input errors.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from frayproof_audit.model import TEXT_BLOCK_TYPES
from sessiongen import wire
from sessiongen.source import RandomSource, Source

Message = dict[str, Any]

ROLES = ("system", "developer", "user", "assistant", "tool")
ODD_ROLES = ("", "alien", "System", "function")
IDS = ("a", "b", "c", "call_1", "call_2")
ODD_IDS = ("", " ", "A")
TEXTS = ("hello", "Never write to production", "data 42", "x y", "é ✓ 漢字", "summary",
         "ok", "Never write", " to production", "line one\nline two")
AGENT_TEXTS = ("Never write to production", "ok", "hello", "aba", "aababa", "line one\nline two",
               "Continue", "x", "", " ", "Never write", "done")
LITERALS = ("Never write to production", "aba", "ok", "line two", "Continue")
BLANKS = ("", " ", "\u3000", "\n\t")
PLAIN_TEXTS = ("a", "ab", "b a", "é", "a\nb", "ba é")
CHECK_KEYS = ("tool_pairs", "unique_tool_ids", "structure", "pinned_content", "retention")


# --------------------------------------------------------------------------- well formed


def well_formed(src: Source) -> list[Message]:
    """A valid transcript: 0-2 instruction messages, 0-4 user turns each with 0-2 tool batches
    of 1-3 calls (unique ids, results in any order, possibly empty), an optional answer, and an
    optional open user turn."""
    messages = [wire.instruction(src.pick(wire.INSTRUCTION_ROLES), src.pick(PLAIN_TEXTS))
                for _ in range(src.integer(0, 2))]
    counter = 0
    for _ in range(src.integer(0, 4)):
        messages.append(wire.user(src.pick(PLAIN_TEXTS)))
        for _ in range(src.integer(0, 2)):
            ids = []
            for _ in range(src.integer(1, 3)):
                counter += 1
                ids.append(f"call_{counter}")
            content = src.pick(PLAIN_TEXTS) if src.chance(0.5) else None
            messages.append(wire.assistant(content, [wire.function_call(i, "read", "{}") for i in ids]))
            for call_id in src.shuffled(ids):
                messages.append(wire.tool_result(call_id, "" if src.chance(0.2) else src.pick(PLAIN_TEXTS)))
        if src.chance(0.5):
            messages.append(wire.assistant(src.pick(PLAIN_TEXTS)))
    if src.chance(0.5):
        messages.append(wire.user(src.pick(PLAIN_TEXTS)))
    return messages


# --------------------------------------------------------------------------- agent sessions


def _agent_text(src: Source) -> Any:
    text = src.pick(AGENT_TEXTS)
    shape = src.fraction()
    if shape < 0.7:
        return text
    if shape < 0.85:
        return [wire.text_block(text)]
    if shape < 0.95:
        return [wire.text_block(text), wire.image_block("https://example.com/i.png"),
                wire.text_block(src.pick(AGENT_TEXTS), "output_text")]
    return [wire.text_block(text), wire.text_block(text)]


def _agent_call(src: Source, call_id: str) -> dict[str, Any]:
    call = wire.function_call(call_id, src.pick(("read", "write")), "{}")
    if src.chance(0.05):
        call["type"] = "custom"
    return call


def _decorate(src: Source, message: Message) -> Message:
    roll = src.fraction()
    if roll < 0.08:
        message["name"] = None
    elif roll < 0.12:
        message["name"] = "agent"
    elif roll < 0.15:
        message["custom"] = {"n": 1}
    return message


def agent_session(src: Source) -> list[Message]:
    """A well-formed agent transcript: instructions, closed exchanges with parallel calls, the
    latest request and sometimes a pending call."""
    messages: list[Message] = [wire.instruction("system", _agent_text(src))]
    if src.chance(0.3):
        messages.append(wire.instruction("developer", src.pick(AGENT_TEXTS)))
    counter = 0
    for _ in range(src.integer(0, 4)):
        messages.append(_decorate(src, wire.user(_agent_text(src))))
        for _ in range(src.integer(0, 2)):
            ids = []
            for _ in range(src.integer(1, 3)):
                counter += 1
                ids.append(f"call_{counter}")
            content = src.pick(AGENT_TEXTS) if src.chance(0.3) else None
            calls = [_agent_call(src, i) for i in ids]
            messages.append(_decorate(src, wire.assistant(content, calls)))
            for call_id in src.shuffled(ids):
                messages.append(wire.tool_result(call_id, _agent_text(src)))
        if src.chance(0.7):
            messages.append(_decorate(src, wire.assistant(_agent_text(src))))
    messages.append(wire.user(_agent_text(src)))
    if src.chance(0.2):
        counter += 1
        messages.append(wire.assistant(None, [_agent_call(src, f"call_{counter}")]))
    return messages


def noisy_message(src: Source) -> Message:
    """Any shape the loaders accept, including ones the checks reject."""
    kind = src.pick(("user", "system", "developer", "assistant", "calls", "tool", "tool", "odd"))
    if kind == "calls":
        ids = [src.pick((*IDS[:4], "")) for _ in range(src.integer(1, 3))]
        message = wire.assistant(src.pick((None, "", "hi")), [_agent_call(src, i) for i in ids])
        if src.chance(0.1):
            message["refusal"] = src.pick(("no", " "))
        return message
    if kind == "tool":
        message = {"role": "tool", "content": _agent_text(src) if not src.chance(0.1) else None}
        if not src.chance(0.1):
            message["tool_call_id"] = src.pick(IDS[:4])
        return message
    if kind == "odd":
        return copy.deepcopy(src.pick(({"role": "critic", "content": "?"}, {"content": "no role"},
                                       {"role": "assistant", "content": None},
                                       {"role": "user", "content": None, "tool_call_id": "a"})))
    return _decorate(src, {"role": kind, "content": _agent_text(src)})


def noisy_session(src: Source) -> list[Message]:
    """An agent session; half of them with 1-3 noisy messages, some with an identical copy."""
    messages = agent_session(src)
    if src.chance(0.5):
        for _ in range(src.integer(1, 3)):
            messages.insert(src.integer(0, len(messages)), noisy_message(src))
    if src.chance(0.2) and messages:
        # An identical copy somewhere, so identical mutants and role-pin copies occur.
        source = src.integer(0, len(messages) - 1)
        messages.insert(src.integer(0, len(messages)), copy.deepcopy(messages[source]))
    return messages


def plausible_compaction(src: Source, before: list[Message]) -> list[Message]:
    """A plausible output (a fresh copy): unchanged, or the instructions, maybe a summary, and
    everything from a user turn on."""
    lead = wire.header_length(before)
    users = [i for i, m in enumerate(before) if m.get("role") == "user" and i >= lead]
    roll = src.fraction()
    if roll < 0.35 or len(users) < 2:
        return copy.deepcopy(before)
    start = src.pick(users)
    summary = [{"role": src.pick(("assistant", "system", "user")), "content": "summary"}]
    return copy.deepcopy([*before[:lead], *(summary if roll < 0.7 else []), *before[start:]])


def contract_document(src: Source) -> dict[str, Any]:
    """A contract as the YAML mapping a user would write: checks off or at warning, trailing
    calls allowed, a system-message policy, role and literal pins, retention rules."""
    document: dict[str, Any] = {"version": 1}
    checks: dict[str, Any] = {}
    for key in CHECK_KEYS:
        roll = src.fraction()
        if roll < 0.1:
            checks[key] = False
        elif roll < 0.3:
            checks[key] = {"severity": "warning"}
        elif roll < 0.4:
            checks[key] = {"enabled": True}
    if src.chance(0.3) and isinstance(checks.setdefault("tool_pairs", {}), dict):
        checks["tool_pairs"]["allow_trailing_pending_call"] = True
    if src.chance(0.6):
        policy = src.pick(("anywhere", "leading_only", "anywhere", "forbidden"))
        if isinstance(checks.get("structure", {}), dict):
            checks.setdefault("structure", {})["system_messages"] = policy
    if checks:
        document["checks"] = checks
    pins = []
    for index in range(src.pick((0, 0, 1, 2, 3))):
        pin: dict[str, Any] = {"name": f"pin-{index}"}
        if src.chance(0.5):
            pin["contains"] = src.pick(LITERALS)
        else:
            pin["role"] = src.pick(("system", "system", "developer", "user", "tool", "assistant"))
        if src.chance(0.2):
            pin["severity"] = "warning"
        pins.append(pin)
    if pins:
        document["pins"] = pins
    return _with_retain(document, src, window_chance=0.4)


def strict_contract_document(src: Source) -> dict[str, Any]:
    """A strict contract for well-formed outputs: system and literal pins, every retention rule,
    sometimes trailing calls allowed and systems anywhere (where the fast path skips most)."""
    document: dict[str, Any] = {
        "pins": [{"name": "system", "role": "system"},
                 {"name": "text", "contains": src.pick(LITERALS)}],
        "retain": {"latest_user_message": "exact", "recent_exchanges": src.integer(1, 3),
                   "tool_results": "complete"}}
    if src.chance(0.5):
        document["checks"] = {"tool_pairs": {"allow_trailing_pending_call": True},
                              "structure": {"system_messages": "anywhere"}}
    return document


def to_yaml(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=False)


MutationCase = tuple[list[Message], list[Message], str]
"""(before, after, contract YAML)."""


def mutation_case(src: Source) -> MutationCase:
    """A noisy session, a plausible output of it, and a contract."""
    before = noisy_session(src)
    after = plausible_compaction(src, before)
    return before, after, to_yaml(contract_document(src))


def clean_mutation_case(src: Source) -> MutationCase:
    """A well-formed agent session, a plausible output, and a strict contract."""
    before = agent_session(src)
    after = plausible_compaction(src, before)
    return before, after, to_yaml(strict_contract_document(src))


def mutation_cases(seed: int, count: int) -> list[MutationCase]:
    """`count` reproducible `mutation_case`s from one seed (for batched peer runs)."""
    src = RandomSource(seed)
    return [mutation_case(src) for _ in range(count)]


# --------------------------------------------------------------------------- wild inputs


@dataclass
class GeneratedCase:
    """One comparison: `validate(after)` or `check(before, after)` under `contract_yaml`."""

    name: str
    after: list[Any]
    before: list[Any] | None = None
    contract_yaml: str | None = None
    after_bytes: bytes | None = None  # when set, written verbatim instead of `after`
    notes: list[str] = field(default_factory=list)


INPUT_ERRORS: tuple[tuple[str, Any], ...] = (
    ("role", 2),
    ("content", 3),
    ("content", ["text"]),
    ("content", [{"type": None}]),
    ("tool_calls", "calls"),
    ("tool_calls", [None]),
    ("tool_calls", [{"id": "a", "function": None}]),
    ("tool_calls", [{"id": 3, "type": "function", "function": {"name": "r", "arguments": ""}}]),
    ("tool_calls", [{"id": "a", "type": "function", "function": {"name": "r", "arguments": {}}}]),
    ("tool_calls", [{"id": "a", "type": None, "function": {"name": "r", "arguments": ""}}]),
    ("tool_call_id", 4),
    ("refusal", 4),
)
"""(field, value) pairs the wire format forbids: set on a message, they make an input error."""

RAW_INPUT_ERRORS: tuple[bytes, ...] = (
    b'[{"role": "user", "content": "x", "content": "y"}]',
    b'[{"role": "user", "content": [{"type": "text", "text": "a", "x": {"k": 1, "k": 2}}]}]',
    b'[{"role": "user", "content": "x", "n": NaN}]',
    b'[{"role": "user", "content": "x", "n": -Infinity}]',
    b'[{"role": "user", "content": "x", "n": 1e999}]',
    b'[{"role": "user", "content": "x"}] []',
    b'{"role": "user", "content": "x"}',
    b'"[]"',
    b"",
    b'[{"role": "user", "content": "\xff"}]',
    b'[NaN]',
    b'["text"]',
)
"""Files that are no snapshot at all (bad JSON, duplicate keys, non-finite numbers, ...)."""


class Wild:
    """Sessions, compactions, contracts and encodings with every odd shape the format allows."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.counter = 0

    # --- small values ---------------------------------------------------------------------

    def fresh_id(self) -> str:
        self.counter += 1
        if self.src.chance(0.15):
            return self.src.pick(IDS + ODD_IDS)
        return f"call_{self.counter}"

    def text(self) -> str:
        return self.src.pick(BLANKS) if self.src.chance(0.08) else self.src.pick(TEXTS)

    def block(self) -> dict[str, Any]:
        kind = self.src.fraction()
        if kind < 0.55:
            return wire.text_block(self.text(), self.src.pick(sorted(TEXT_BLOCK_TYPES)))
        if kind < 0.65:
            return {"type": "text"}
        if kind < 0.8:
            return wire.image_block("https://example.com/a.png")
        if kind < 0.88:
            return {}
        if kind < 0.94:
            return {"type": "future_block", "text": self.text()}
        return {"text": self.text()}

    def content(self, role: str) -> Any:
        kind = self.src.fraction()
        if kind < 0.72:
            return self.text()
        if kind < 0.8 and role in ("assistant", "tool", "user"):
            return None
        if kind < 0.84:
            return "<absent>"
        return [self.block() for _ in range(self.src.integer(0, 3))]

    def extras(self, message: Message) -> None:
        """Identity-relevant and identity-neutral extra keys."""
        src = self.src
        if src.chance(0.12):
            message["name"] = None if src.chance(0.6) else "ops"
        if src.chance(0.05):
            message["custom"] = None
        if src.chance(0.05):
            message["meta"] = {"n": src.pick([1, 1.0, -0.0, 10**20, True]), "tags": ["x"]}
        if message.get("role") == "assistant" and src.chance(0.12):
            message["refusal"] = None if src.chance(0.6) else src.pick(["no", " ", ""])
            for key in ("audio", "annotations", "function_call"):
                if src.chance(0.5):
                    message[key] = None
        if message.get("role") != "tool" and src.chance(0.04):
            message["tool_call_id"] = None
        if "tool_calls" not in message and src.chance(0.06):
            message["tool_calls"] = None if src.chance(0.5) else []

    def message(self, role: str, content: Any = "<random>") -> Message:
        value = self.content(role) if content == "<random>" else content
        message: Message = {"role": role}
        if value != "<absent>":
            message["content"] = value
        self.extras(message)
        return message

    def tool_call(self, call_id: str | None) -> dict[str, Any]:
        src = self.src
        call: dict[str, Any] = {}
        if call_id is not None:
            call["id"] = call_id
        kind = src.fraction()
        if kind < 0.9:
            call["type"] = "function"
        elif kind < 0.95:
            call["type"] = "custom"
        name = src.pick(["read", "search", "read", "", " "]) if src.chance(0.1) else "read"
        function: dict[str, Any] = {"name": name, "arguments": json.dumps({"q": self.text()})}
        if src.chance(0.04):
            del function["name"]
        if src.chance(0.04):
            function["strict"] = True
        if not src.chance(0.03):
            call["function"] = function
        if src.chance(0.04):
            call["index"] = 0
        return call

    # --- sessions ---------------------------------------------------------------------------

    def batch(self, messages: list[Message], *, complete: bool = True) -> None:
        src = self.src
        ids = [self.fresh_id() for _ in range(src.integer(1, 3))]
        call = self.message("assistant", self.text() if src.chance(0.2) else None)
        call["tool_calls"] = [self.tool_call(None if src.chance(0.03) else i) for i in ids]
        messages.append(call)
        answered = ids if complete else [i for i in ids if src.chance(0.5)]
        for call_id in src.shuffled(answered):
            result = self.message("tool", self.content("tool") if src.chance(0.15) else self.text())
            result["tool_call_id"] = call_id
            messages.append(result)

    def session(self) -> list[Message]:
        src = self.src
        messages: list[Message] = []
        for _ in range(src.pick([1, 1, 1, 0, 2])):
            messages.append(self.message(src.pick(["system", "system", "developer"]), src.pick(TEXTS)))
        for _ in range(src.integer(0, 5)):
            messages.append(self.message("user", src.pick(TEXTS)))
            for _ in range(src.pick([1, 1, 0, 2])):
                self.batch(messages)
            if not src.chance(0.2):
                messages.append(self.message("assistant", src.pick(TEXTS)))
        tail = src.fraction()
        if tail < 0.5:
            messages.append(self.message("user", src.pick(TEXTS)))
        elif tail < 0.7:
            messages.append(self.message("user", src.pick(TEXTS)))
            self.batch(messages, complete=False)
        if src.chance(0.35):
            self.defect(messages)
        return messages

    def position(self, messages: list[Message]) -> int:
        return self.src.integer(0, len(messages))

    def defect(self, messages: list[Message]) -> None:
        """Plant one or two problems the checks should see."""
        src = self.src
        for _ in range(src.integer(1, 2)):
            kind = src.integer(0, 11)
            n = len(messages)
            if kind == 0:
                messages.insert(self.position(messages), {"role": "system", "content": "late rules"})
            elif kind == 1:
                messages.insert(self.position(messages), {"role": "tool", "content": "stray",
                                                          "tool_call_id": src.pick(IDS)})
            elif kind == 2 and n:
                del messages[src.integer(0, n - 1)]
            elif kind == 3 and n:
                messages.insert(self.position(messages), copy.deepcopy(src.pick(messages)))
            elif kind == 4 and n:
                src.pick(messages)["role"] = src.pick(ODD_ROLES)
            elif kind == 5 and n:
                src.pick(messages).pop("role", None)
            elif kind == 6 and n:
                src.pick(messages)["content"] = None
            elif kind == 7:
                messages.insert(self.position(messages), {
                    "role": "user", "content": "do it", "tool_calls": [self.tool_call(src.pick(IDS))]})
            elif kind == 8 and n > 1:
                i = src.integer(0, n - 1)
                j = src.integer(0, n - 2)
                j += j >= i
                messages[i], messages[j] = messages[j], messages[i]
            elif kind == 9:
                messages.insert(self.position(messages), {"role": "user", "content": "x",
                                                          "tool_call_id": ""})
            elif kind == 10:
                messages.insert(self.position(messages), {"role": "tool", "content": "r"})
            elif kind == 11 and n:
                target = src.pick(messages)
                if target.get("tool_calls"):
                    target["tool_calls"].append(copy.deepcopy(target["tool_calls"][0]))

    # --- compactions ------------------------------------------------------------------------

    def compaction(self, before: list[Message]) -> list[Message]:
        after = copy.deepcopy(before)
        for _ in range(self.src.pick([1, 1, 0, 2, 3])):
            after = self.edit(after)
        return after

    def edit(self, messages: list[Message]) -> list[Message]:
        src = self.src
        kind = src.integer(0, 13)
        n = len(messages)
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        if kind == 0 and users:  # good compaction: head + summary + from a user on
            head = wire.header_length(messages)
            start = src.pick(users)
            summary = {"role": "assistant", "content": "Summary of earlier turns."}
            return messages[:head] + ([] if src.chance(0.3) else [summary]) + messages[start:]
        if kind == 1 and n:
            del messages[src.integer(0, n - 1)]
        elif kind == 2 and n > 1:
            i = src.integer(0, n - 1)
            del messages[i:src.integer(i + 1, n)]
        elif kind == 3:
            for m in messages:
                if m.get("role") == "tool" and isinstance(m.get("content"), str) and src.chance(0.5):
                    m["content"] = m["content"][: len(m["content"]) // 2]
        elif kind == 4 and n:
            m = src.pick(messages)
            if isinstance(m.get("content"), str):
                m["content"] += "!"
        elif kind == 5:
            return [self.shuffle_keys(m) for m in messages]
        elif kind == 6:
            for m in messages:
                if src.chance(0.4):
                    m.setdefault(src.pick(["name", "audio", "annotations", "function_call"]), None)
        elif kind == 7 and n > 1:
            i = src.integer(0, n - 2)
            messages[i], messages[i + 1] = messages[i + 1], messages[i]
        elif kind == 8 and n:
            i = src.integer(0, n - 1)
            messages.insert(i, copy.deepcopy(messages[i]))
        elif kind == 9:
            for m in messages:
                if m.get("role") == "system":
                    m["content"] = "You are helpful."
                    break
        elif kind == 10:
            messages.insert(self.position(messages), {"role": "assistant", "content": "Summary."})
        elif kind == 11:
            for m in messages:
                if isinstance(m.get("meta"), dict) and isinstance(m["meta"].get("n"), int):
                    m["meta"]["n"] = float(m["meta"]["n"])
        elif kind == 12 and users:
            del messages[users[-1]]
        elif kind == 13:
            messages.append({"role": "user", "content": "a new request"})
        return messages

    def shuffle_keys(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self.shuffle_keys(v) for k, v in self.src.shuffled(list(value.items()))}
        if isinstance(value, list):
            return [self.shuffle_keys(v) for v in value]
        return value

    # --- contracts --------------------------------------------------------------------------

    def contract(self, before: list[Message] | None) -> dict[str, Any]:
        """A contract; with `before`, also pins (some cut out of its texts) and retention."""
        src = self.src
        document: dict[str, Any] = {}
        checks: dict[str, Any] = {}
        for key in CHECK_KEYS:
            kind = src.fraction()
            if kind < 0.5:
                continue
            if kind < 0.6:
                checks[key] = src.chance(0.7)
                continue
            block: dict[str, Any] = {}
            if src.chance(0.3):
                block["enabled"] = src.chance(0.8)
            if src.chance(0.4):
                block["severity"] = src.pick(["error", "warning"])
            if key == "tool_pairs" and src.chance(0.6):
                block["allow_trailing_pending_call"] = src.chance(0.7)
            if key == "structure" and src.chance(0.6):
                block["system_messages"] = src.pick(["leading_only", "anywhere", "forbidden"])
            checks[key] = block
        if checks:
            document["checks"] = checks
        if before is None:
            return document
        pins = []
        for n in range(src.pick([0, 0, 1, 2, 3])):
            pin: dict[str, Any] = {"name": f"pin-{n}"}
            if src.chance(0.5):
                pin["role"] = src.pick(ROLES)
            else:
                pin["contains"] = self.pin_text(before)
            if src.chance(0.25):
                pin["severity"] = src.pick(["error", "warning", None])
            pins.append(pin)
        if pins:
            document["pins"] = pins
        return _with_retain(document, src, window_chance=0.5)

    def pin_text(self, before: list[Message]) -> str:
        src = self.src
        texts = [m["content"] for m in before if isinstance(m.get("content"), str) and m["content"]]
        if texts and not src.chance(0.2):
            text: str = src.pick(texts)
            start = src.integer(0, len(text) - 1)
            return text[start:src.integer(start + 1, len(text))]
        return src.pick(["Never write to production", "XYZ", "ok"])

    # --- serialization ----------------------------------------------------------------------

    def encode(self, messages: list[Any]) -> bytes:
        """JSON in one of the layouts real files use (indents, separators, escapes, a BOM)."""
        style = self.src.integer(0, 4)
        if style == 0:
            text = json.dumps(messages, ensure_ascii=False)
        elif style == 1:
            text = json.dumps(messages, indent=2)
        elif style == 2:
            text = json.dumps(messages, separators=(",", ":"), ensure_ascii=False)
        elif style == 3:
            text = json.dumps(messages, separators=(", ", " : "))
        else:
            text = json.dumps(messages, ensure_ascii=False, indent="\t")
        data = text.encode("utf-8")
        return b"\xef\xbb\xbf" + data if self.src.chance(0.05) else data

    # --- whole cases ------------------------------------------------------------------------

    def case(self, n: int) -> GeneratedCase:
        """A validation (30 %) or a check, with a contract, and sometimes an input error."""
        src = self.src
        before = self.session()
        if src.chance(0.3):
            document = self.contract(None)
            case = GeneratedCase(f"validate-{n}", before)
            if src.chance(0.04):
                document["pins"] = [{"name": "p", "role": "system"}]
                case.notes.append("validate with pins")
        else:
            after = self.compaction(before)
            document = self.contract(before)
            case = GeneratedCase(f"check-{n}", after, before)
        case.contract_yaml = to_yaml(document) if document else None
        roll = src.fraction()
        if roll >= 0.11:
            pass
        elif roll < 0.05 and case.after:
            key, value = src.pick(INPUT_ERRORS)
            src.pick(case.after)[key] = value
            case.notes.append(f"input error: {key}")
        elif roll < 0.08:
            case.after_bytes = src.pick(RAW_INPUT_ERRORS)
            case.notes.append("raw input error")
        elif case.after:
            src.pick(case.after)["role"] = None
            case.notes.append("role null (B3)")
        if case.after_bytes is None:
            case.after_bytes = self.encode(case.after)
        return case


def differential_cases(seed: int, count: int) -> list[GeneratedCase]:
    """`count` reproducible wild cases from `seed`: validations, checks, deliberate input errors."""
    wild = Wild(RandomSource(seed))
    return [wild.case(n) for n in range(count)]


def _with_retain(document: dict[str, Any], src: Source, window_chance: float) -> dict[str, Any]:
    """`document` with a drawn `retain:` block (each rule independently, none: no block). The
    draws are the same in every builder, so seeded sequences stay as they were."""
    retain: dict[str, Any] = {}
    if src.chance(0.4):
        retain["latest_user_message"] = "exact"
    if src.chance(window_chance):
        retain["recent_exchanges"] = src.integer(0, 3)
    if src.chance(0.4):
        retain["tool_results"] = "complete"
    if retain:
        document["retain"] = retain
    return document
