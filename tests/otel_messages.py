"""Chat Completions sessions as OpenTelemetry GenAI `ChatMessage` lists, for the `otel-genai` tests.

`to_otel` writes each message as one ChatMessage (text parts, tool_call parts, one
tool_call_response part per tool message); with `group_results`, consecutive plain tool
results share one `tool` message, as instrumentations of parallel calls write them, so neutral
and wire indices differ. Some Chat Completions details have no OTel spelling (a refusal, a call
type other than function, a tool_call_id on a non-tool message, string vs one-text-block
content, block-array tool results); `twin` is the session with exactly those details settled as
the OTel reading settles them, the conversation both formats must judge alike.
"""

from __future__ import annotations

from typing import Any

from frayproof_audit.jsonio import canonical

Message = dict[str, Any]
_PLAIN_RESULT_KEYS = frozenset({"role", "tool_call_id", "content"})


def to_otel(messages: list[Message], group_results: bool = False) -> list[Message]:
    otel: list[Message] = []
    for message in messages:
        converted = _message(message)
        if (group_results and message.get("role") == "tool" and message.keys() <= _PLAIN_RESULT_KEYS
                and otel and otel[-1].get("grouped")):
            otel[-1]["parts"] += converted["parts"]
            continue
        if group_results and message.get("role") == "tool" and message.keys() <= _PLAIN_RESULT_KEYS:
            converted["grouped"] = True
        otel.append(converted)
    for message in otel:
        message.pop("grouped", None)
    return otel


def wire_index(messages: list[Message], group_results: bool = False) -> list[int]:
    """For each Chat Completions message, the index of the ChatMessage `to_otel` puts it in."""
    found: list[int] = []
    grouping = False
    for message in messages:
        plain_result = message.get("role") == "tool" and message.keys() <= _PLAIN_RESULT_KEYS
        if group_results and plain_result and grouping:
            found.append(found[-1])
            continue
        found.append(found[-1] + 1 if found else 0)
        grouping = group_results and plain_result
    return found


def _message(message: Message) -> Message:
    meta = {key: value for key, value in message.items()
            if key not in ("role", "content", "tool_calls", "tool_call_id", "refusal")}
    wire: Message = {**meta}
    if "role" in message:
        wire["role"] = message["role"]
    if message.get("role") == "tool":
        part: Message = {"type": "tool_call_response", "response": message.get("content")}
        if message.get("tool_call_id") is not None:
            part["id"] = message["tool_call_id"]
        wire["parts"] = [part]
        return wire
    wire["parts"] = [*_content_parts(message.get("content")),
                     *(_call_part(call) for call in message.get("tool_calls") or ())]
    return wire


def _content_parts(content: Any) -> list[Message]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts = []
    for block in content:
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            rest = {key: value for key, value in block.items() if key not in ("type", "text")}
            parts.append({"type": "text", "content": block["text"], **rest})
        else:
            parts.append(block)
    return parts


def _call_part(call: Message) -> Message:
    function = call.get("function") or {}
    part: Message = {"type": "tool_call", "name": function.get("name", "")}
    if "id" in call:
        part["id"] = call["id"]
    if "arguments" in function:
        part["arguments"] = function["arguments"]
    return part


def twin(messages: list[Message]) -> list[Message]:
    """The session as the OTel reading sees it (see the module docstring)."""
    return [_twin(message) for message in messages]


def _twin(message: Message) -> Message:
    twin = {key: value for key, value in message.items()
            if key != "refusal" and not (key == "name" and value is None)}
    content = message.get("content")
    if message.get("role") == "tool":
        if isinstance(content, list):
            twin["content"] = canonical(content).decode("utf-8")
        return twin
    twin.pop("tool_call_id", None)
    if content == []:
        twin["content"] = None
    elif isinstance(content, list) and len(content) == 1 and content[0].keys() == {"type", "text"} \
            and content[0]["type"] == "text" and isinstance(content[0]["text"], str):
        twin["content"] = content[0]["text"]
    if message.get("tool_calls"):
        twin["tool_calls"] = [
            {"id": call.get("id", ""), "type": "function",
             "function": {key: value for key, value in (call.get("function") or {}).items()
                          if key in ("name", "arguments")}}
            for call in message["tool_calls"]]
    elif "tool_calls" in twin:
        del twin["tool_calls"]
    return twin
