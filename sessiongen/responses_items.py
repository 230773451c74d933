"""Chat Completions sessions written as OpenAI Responses API items (equivalence tests, the example corpus).

`to_items` writes a message list the way the Agents SDK does: an assistant message with calls
becomes a `message` item (when it has content) followed by one `function_call` item per call, a
tool result a `function_call_output`, a message-level refusal a `refusal` part. It also says,
for every chat message, which item findings about it point at and how its sites are spelled,
computed here from the items it wrote (not from the format's origins), so tests can compare.

Not every chat list has a Responses spelling: `representable` rewrites the few shapes that
have none (or returns None when it cannot) before both formats are asked for a verdict.
With `reasoning`, assistant turns get a reasoning item in front, as reasoning models log them.
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass
from typing import Any

from frayproof_audit.jsonio import canonical
from frayproof_audit.model import has_content

Message = dict[str, Any]
_MODELLED = ("role", "content", "tool_calls", "tool_call_id", "refusal")
_NULL_OPTIONAL = ("name", "audio", "annotations", "function_call")


def representable(messages: list[Message]) -> list[Message] | None:
    """`messages` with every shape Responses items cannot hold rewritten, or None.

    * A call's `type`: a `function_call` item has none, so every call becomes `function`.
    * `tool_call_id` on a non-tool message: message items carry none; it goes.
    * A blank message-level refusal: as a `refusal` part it would be content; it goes.
    * An assistant message with calls and null content right after another assistant message:
      its calls would join the previous turn (`message` + `function_call` items are one turn),
      so its content becomes "" (a `message` item of its own, which starts a new turn).
    * Calls on a non-assistant message, or on a tool result: no spelling (None).
    * A message-level key set to null (`"name": null`, as SDK dumps write): an item cannot
      tell it from an absent key, which the Chat reading (and its dedupe) does; it goes.
    """
    out = copy.deepcopy(messages)
    for index, message in enumerate(out):
        role = message.get("role")
        calls = message.get("tool_calls")
        if calls and role != "assistant":
            return None
        for call in calls or ():
            call["type"] = "function"
        for key in [k for k, v in message.items() if v is None and k not in ("content", "role")]:
            del message[key]
        if role != "tool":
            message.pop("tool_call_id", None)
        refusal = message.get("refusal")
        if isinstance(refusal, str) and not refusal.strip():
            del message["refusal"]
        previous = out[index - 1] if index else None
        if (calls and message.get("content") is None and previous is not None
                and previous.get("role") == "assistant"):
            message["content"] = ""
    return out


@dataclass(frozen=True)
class Written:
    """Items and, per chat message, the item its findings point at and its item range."""

    items: list[dict[str, Any]]
    anchor: list[int]
    ranges: list[tuple[int, int]]

    def site(self, chat_site: str) -> str:
        """An `openai` site label spelled as `openai-responses` spells it (`a->b` and
        `pin:name@a` part-wise)."""
        if "->" in chat_site:
            return "->".join(self.site(part) for part in chat_site.split("->"))
        if "@" in chat_site:  # pin:name@after[4]
            label, _, where = chat_site.rpartition("@")
            return f"{label}@{self.site(where)}"
        span = re.fullmatch(r"after\[(\d+):(\d+)\]", chat_site)
        if span:
            return f"after[{self.ranges[int(span[1])][0]}:{self.ranges[int(span[2]) - 1][1]}]"
        one = re.fullmatch(r"after\[(\d+)\](?:\.tool_calls\[(\d+)\](?:\.arguments(.*))?)?", chat_site)
        if one is None:
            return chat_site  # pin:..., not a message position
        index = int(one[1])
        if one[2] is None:
            start, stop = self.ranges[index]
            return f"after[{start}]" if stop - start == 1 else f"after[{start}:{stop}]"
        where = f"after[{self.anchor[index] + int(one[2])}]"
        return where if one[3] is None else f"{where}.arguments{one[3]}"


def _extras(message: Message) -> dict[str, Any]:
    return {key: value for key, value in message.items()
            if key not in _MODELLED and not (value is None and key in _NULL_OPTIONAL)}


def _thought(message: Message) -> dict[str, Any]:
    """A reasoning item that only this message gets (identical messages get identical ones)."""
    digest = hashlib.sha256(canonical(message)).hexdigest()[:12]
    return {"type": "reasoning", "id": f"rs_{digest}", "summary": [], "encrypted_content": digest}


def _says_something(message: Message) -> bool:
    refusal = message.get("refusal")
    return bool(message.get("tool_calls") or has_content(message.get("content"))
                or (isinstance(refusal, str) and refusal.strip()))


def to_items(messages: list[Message], *, typed: bool = True, reasoning: bool = False) -> Written:
    """Write a representable chat list as items; `typed=False` leaves `type` off the message
    items of non-assistant roles (the "easy input message" spelling); `reasoning` puts a
    reasoning item before every assistant turn that is not empty anyway (one that is empty
    would stop being so)."""
    items: list[dict[str, Any]] = []
    anchor: list[int] = []
    ranges: list[tuple[int, int]] = []
    for message in messages:
        start = len(items)
        role = message.get("role")
        if role == "tool":
            item: dict[str, Any] = {"type": "function_call_output"}
            if message.get("tool_call_id") is not None:
                item["call_id"] = message["tool_call_id"]
            item["output"] = message.get("content")
            items.append({**item, **_extras(message)})
            anchor.append(start)
            ranges.append((start, start + 1))
            continue
        calls = message.get("tool_calls") or []
        if reasoning and role == "assistant" and _says_something(message):
            items.append(_thought(message))
        content = message.get("content")
        refusal = message.get("refusal")
        if refusal is not None:
            parts = [{"type": "output_text", "text": content}] if isinstance(content, str) else content
            content = [*(parts or []), {"type": "refusal", "refusal": refusal}]
        said = len(items)  # where the message item goes, if there is one
        if not calls or content is not None:
            item = {"type": "message", "role": role, "content": content, **_extras(message)}
            if not typed and role != "assistant":
                del item["type"]
            items.append(item)
        for call in calls:
            function = call.get("function") or {}
            items.append({"type": "function_call", "call_id": call.get("id", ""),
                          "name": function.get("name", ""), "arguments": function.get("arguments", ""),
                          **{k: v for k, v in call.items() if k not in ("id", "type", "function")}})
        anchor.append(len(items) - len(calls) if calls else said)
        ranges.append((start, len(items)))
    return Written(items, anchor, ranges)
