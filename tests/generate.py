"""Random but reproducible sessions, compactions and contracts for the differential test.

Sessions are mostly well formed (so pins and retention have something to compare) with
planted defects and odd shapes: null fields, odd roles, blank ids, reused ids, pending
batches, misplaced results, calls on the wrong role, text blocks of every kind. Compactions
mix good summaries with lossy, reordering and identity-neutral edits. A small share of
inputs are input errors on purpose.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from typing import Any

import yaml

from frayproof_audit.model import TEXT_BLOCK_TYPES

ROLES = ("system", "developer", "user", "assistant", "tool")
ODD_ROLES = ("", "alien", "System", "function")
IDS = ("a", "b", "c", "call_1", "call_2")
ODD_IDS = ("", " ", "A")
TEXTS = ("hello", "Never write to production", "data 42", "x y", "é ✓ 漢字", "summary",
         "ok", "Never write", " to production", "line one\nline two")
BLANKS = ("", " ", "\u3000", "\n\t")

Message = dict[str, Any]


@dataclass
class GeneratedCase:
    """One comparison: `validate(after)` or `check(before, after)` under `contract_yaml`."""

    name: str
    after: list[Any]
    before: list[Any] | None = None
    contract_yaml: str | None = None
    after_bytes: bytes | None = None  # when set, written verbatim instead of `after`
    notes: list[str] = field(default_factory=list)


class Generator:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.counter = 0

    # --- small values ---------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def fresh_id(self) -> str:
        self.counter += 1
        if self.chance(0.15):
            return self.r.choice(IDS + ODD_IDS)
        return f"call_{self.counter}"

    def text(self) -> str:
        if self.chance(0.08):
            return self.r.choice(BLANKS)
        return self.r.choice(TEXTS)

    def block(self) -> dict[str, Any]:
        kind = self.r.random()
        if kind < 0.55:
            return {"type": self.r.choice(sorted(TEXT_BLOCK_TYPES)), "text": self.text()}
        if kind < 0.65:
            return {"type": "text"}
        if kind < 0.8:
            return {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
        if kind < 0.88:
            return {}
        if kind < 0.94:
            return {"type": "future_block", "text": self.text()}
        return {"text": self.text()}

    def content(self, role: str) -> Any:
        kind = self.r.random()
        if kind < 0.72:
            return self.text()
        if kind < 0.8 and role in ("assistant", "tool", "user"):
            return None
        if kind < 0.84:
            return "<absent>"
        return [self.block() for _ in range(self.r.randint(0, 3))]

    def extras(self, message: Message) -> None:
        """Identity-relevant and identity-neutral extra keys."""
        if self.chance(0.12):
            message["name"] = None if self.chance(0.6) else "ops"
        if self.chance(0.05):
            message["custom"] = None
        if self.chance(0.05):
            message["meta"] = {"n": self.r.choice([1, 1.0, -0.0, 10**20, True]), "tags": ["x"]}
        if message.get("role") == "assistant" and self.chance(0.12):
            message["refusal"] = None if self.chance(0.6) else self.r.choice(["no", " ", ""])
            for key in ("audio", "annotations", "function_call"):
                if self.chance(0.5):
                    message[key] = None
        if message.get("role") != "tool" and self.chance(0.04):
            message["tool_call_id"] = None
        if "tool_calls" not in message and self.chance(0.06):
            message["tool_calls"] = None if self.chance(0.5) else []

    def message(self, role: str, content: Any = "<random>") -> Message:
        value = self.content(role) if content == "<random>" else content
        message: Message = {"role": role}
        if value != "<absent>":
            message["content"] = value
        self.extras(message)
        return message

    def tool_call(self, call_id: str | None) -> dict[str, Any]:
        call: dict[str, Any] = {}
        if call_id is not None:
            call["id"] = call_id
        kind = self.r.random()
        if kind < 0.9:
            call["type"] = "function"
        elif kind < 0.95:
            call["type"] = "custom"
        name = self.r.choice(["read", "search", "read", "", " "]) if self.chance(0.1) else "read"
        function: dict[str, Any] = {"name": name, "arguments": json.dumps({"q": self.text()})}
        if self.chance(0.04):
            del function["name"]
        if self.chance(0.04):
            function["strict"] = True
        if not self.chance(0.03):
            call["function"] = function
        if self.chance(0.04):
            call["index"] = 0
        return call

    # --- sessions ---------------------------------------------------------------------------

    def batch(self, messages: list[Message], *, complete: bool = True) -> None:
        ids = [self.fresh_id() for _ in range(self.r.randint(1, 3))]
        call = self.message("assistant", None if self.chance(0.8) else self.text())
        call["tool_calls"] = [self.tool_call(i if not self.chance(0.03) else None) for i in ids]
        messages.append(call)
        answered = ids if complete else [i for i in ids if self.chance(0.5)]
        order = list(answered)
        self.r.shuffle(order)
        for call_id in order:
            result = self.message("tool", self.text() if self.chance(0.85) else self.content("tool"))
            result["tool_call_id"] = call_id
            messages.append(result)

    def session(self) -> list[Message]:
        messages: list[Message] = []
        for _ in range(self.r.choice([0, 1, 1, 1, 2])):
            messages.append(self.message(self.r.choice(["system", "system", "developer"]),
                                         self.r.choice(TEXTS)))
        for _ in range(self.r.randint(0, 5)):
            messages.append(self.message("user", self.r.choice(TEXTS)))
            for _ in range(self.r.choice([0, 1, 1, 2])):
                self.batch(messages)
            if self.chance(0.8):
                messages.append(self.message("assistant", self.r.choice(TEXTS)))
        tail = self.r.random()
        if tail < 0.5:
            messages.append(self.message("user", self.r.choice(TEXTS)))
        elif tail < 0.7:
            messages.append(self.message("user", self.r.choice(TEXTS)))
            self.batch(messages, complete=False)
        if self.chance(0.35):
            self.defect(messages)
        return messages

    def defect(self, messages: list[Message]) -> None:
        """Plant one or two problems the checks should see."""
        for _ in range(self.r.randint(1, 2)):
            kind = self.r.randrange(12)
            n = len(messages)
            if kind == 0:
                messages.insert(self.r.randint(0, n), {"role": "system", "content": "late rules"})
            elif kind == 1:
                messages.insert(self.r.randint(0, n), {"role": "tool", "content": "stray",
                                                       "tool_call_id": self.r.choice(IDS)})
            elif kind == 2 and n:
                del messages[self.r.randrange(n)]
            elif kind == 3 and n:
                messages.insert(self.r.randint(0, n), copy.deepcopy(self.r.choice(messages)))
            elif kind == 4 and n:
                self.r.choice(messages)["role"] = self.r.choice(ODD_ROLES)
            elif kind == 5 and n:
                del self.r.choice(messages)["role"]
            elif kind == 6 and n:
                self.r.choice(messages)["content"] = None
            elif kind == 7:
                messages.insert(self.r.randint(0, n), {
                    "role": "user", "content": "do it",
                    "tool_calls": [self.tool_call(self.r.choice(IDS))]})
            elif kind == 8 and n > 1:
                i, j = self.r.sample(range(n), 2)
                messages[i], messages[j] = messages[j], messages[i]
            elif kind == 9:
                messages.insert(self.r.randint(0, n), {"role": "user", "content": "x",
                                                       "tool_call_id": ""})
            elif kind == 10:
                messages.insert(self.r.randint(0, n), {"role": "tool", "content": "r"})
            elif kind == 11 and n:
                target = self.r.choice(messages)
                if target.get("tool_calls"):
                    target["tool_calls"].append(copy.deepcopy(target["tool_calls"][0]))

    # --- compactions ------------------------------------------------------------------------

    def compaction(self, before: list[Message]) -> list[Message]:
        after = copy.deepcopy(before)
        for _ in range(self.r.choice([0, 1, 1, 2, 3])):
            after = self.edit(after)
        return after

    def edit(self, messages: list[Message]) -> list[Message]:
        kind = self.r.randrange(14)
        n = len(messages)
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        if kind == 0 and users:  # good compaction: head + summary + from a user on
            head = 0
            while head < n and messages[head].get("role") in ("system", "developer"):
                head += 1
            start = self.r.choice(users)
            summary = {"role": "assistant", "content": "Summary of earlier turns."}
            return messages[:head] + ([summary] if self.chance(0.7) else []) + messages[start:]
        if kind == 1 and n:
            del messages[self.r.randrange(n)]
        elif kind == 2 and n > 1:
            i = self.r.randrange(n)
            del messages[i:self.r.randint(i + 1, n)]
        elif kind == 3:
            for m in messages:
                if m.get("role") == "tool" and isinstance(m.get("content"), str) and self.chance(0.5):
                    m["content"] = m["content"][: len(m["content"]) // 2]
        elif kind == 4 and n:
            m = self.r.choice(messages)
            if isinstance(m.get("content"), str):
                m["content"] += "!"
        elif kind == 5:
            return [self.shuffle_keys(m) for m in messages]
        elif kind == 6:
            for m in messages:
                if self.chance(0.4):
                    key = self.r.choice(["name", "audio", "annotations", "function_call"])
                    m.setdefault(key, None)
        elif kind == 7 and n > 1:
            i = self.r.randrange(n - 1)
            messages[i], messages[i + 1] = messages[i + 1], messages[i]
        elif kind == 8 and n:
            i = self.r.randrange(n)
            messages.insert(i, copy.deepcopy(messages[i]))
        elif kind == 9:
            for m in messages:
                if m.get("role") == "system":
                    m["content"] = "You are helpful."
                    break
        elif kind == 10:
            messages.insert(self.r.randint(0, n), {"role": "assistant", "content": "Summary."})
        elif kind == 11:
            for m in messages:
                if "meta" in m and isinstance(m["meta"].get("n"), int):
                    m["meta"]["n"] = float(m["meta"]["n"])
        elif kind == 12 and users:
            del messages[users[-1]]
        elif kind == 13:
            messages.append({"role": "user", "content": "a new request"})
        return messages

    def shuffle_keys(self, value: Any) -> Any:
        if isinstance(value, dict):
            items = list(value.items())
            self.r.shuffle(items)
            return {k: self.shuffle_keys(v) for k, v in items}
        if isinstance(value, list):
            return [self.shuffle_keys(v) for v in value]
        return value

    # --- contracts --------------------------------------------------------------------------

    def contract(self, before: list[Message] | None) -> dict[str, Any]:
        document: dict[str, Any] = {}
        checks: dict[str, Any] = {}
        for key in ("tool_pairs", "unique_tool_ids", "structure", "pinned_content", "retention"):
            kind = self.r.random()
            if kind < 0.5:
                continue
            if kind < 0.6:
                checks[key] = self.chance(0.7)
                continue
            block: dict[str, Any] = {}
            if self.chance(0.3):
                block["enabled"] = self.chance(0.8)
            if self.chance(0.4):
                block["severity"] = self.r.choice(["error", "warning"])
            if key == "tool_pairs" and self.chance(0.6):
                block["allow_trailing_pending_call"] = self.chance(0.7)
            if key == "structure" and self.chance(0.6):
                block["system_messages"] = self.r.choice(["leading_only", "anywhere", "forbidden"])
            checks[key] = block
        if checks:
            document["checks"] = checks
        if before is not None:
            pins = []
            for n in range(self.r.choice([0, 0, 1, 2, 3])):
                pin: dict[str, Any] = {"name": f"pin-{n}"}
                if self.chance(0.5):
                    pin["role"] = self.r.choice(ROLES)
                else:
                    pin["contains"] = self.pin_text(before)
                if self.chance(0.25):
                    pin["severity"] = self.r.choice(["error", "warning", None])
                pins.append(pin)
            if pins:
                document["pins"] = pins
            retain: dict[str, Any] = {}
            if self.chance(0.4):
                retain["latest_user_message"] = "exact"
            if self.chance(0.5):
                retain["recent_exchanges"] = self.r.randint(0, 3)
            if self.chance(0.4):
                retain["tool_results"] = "complete"
            if retain:
                document["retain"] = retain
        return document

    def pin_text(self, before: list[Message]) -> str:
        texts = [m["content"] for m in before if isinstance(m.get("content"), str) and m["content"]]
        if texts and self.chance(0.8):
            text = self.r.choice(texts)
            start = self.r.randrange(len(text))
            return text[start:self.r.randint(start + 1, len(text))]
        return self.r.choice(["Never write to production", "XYZ", "ok"])

    # --- serialization ----------------------------------------------------------------------

    def encode(self, messages: list[Any]) -> bytes:
        style = self.r.randrange(5)
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
        return b"\xef\xbb\xbf" + data if self.chance(0.05) else data


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


def generate(seed: int, count: int) -> list[GeneratedCase]:
    """`count` cases from `seed`: validations, checks, and deliberate input errors."""
    gen = Generator(seed)
    cases: list[GeneratedCase] = []
    for n in range(count):
        kind = gen.r.random()
        before = gen.session()
        if kind < 0.3:
            document = gen.contract(None)
            case = GeneratedCase(f"validate-{n}", before, None, None)
            if gen.chance(0.04):
                document["pins"] = [{"name": "p", "role": "system"}]
                case.notes.append("validate with pins")
        else:
            after = gen.compaction(before)
            document = gen.contract(before)
            case = GeneratedCase(f"check-{n}", after, before)
        case.contract_yaml = yaml.safe_dump(document, sort_keys=False) if document else None
        roll = gen.r.random()
        if roll < 0.05 and case.after:
            key, value = gen.r.choice(INPUT_ERRORS)
            gen.r.choice(case.after)[key] = value
            case.notes.append(f"input error: {key}")
        elif roll < 0.08:
            case.after_bytes = gen.r.choice(RAW_INPUT_ERRORS)
            case.notes.append("raw input error")
        elif roll < 0.11 and case.after:
            gen.r.choice(case.after)["role"] = None
            case.notes.append("role null (B3)")
        if case.after_bytes is None:
            case.after_bytes = gen.encode(case.after)
        cases.append(case)
    return cases
