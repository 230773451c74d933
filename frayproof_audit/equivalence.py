"""Equivalent messages: the same message, serialized by another library.

Real trimmers and SDKs re-serialize every message they keep (LangChain's `trim_messages`
turns string content into a list of text parts, tool-call arguments come back re-spaced,
`annotations: []` is dropped), so exact identity fails a pair on bytes no model reads. Under
`match: equivalent` / `retain.compare: equivalent` two messages are the same when their
**neutral forms** are equal (canonical JSON, as exact identity compares):

* `role`, as written (a changed role is never forgiven);
* `content` as a list of items: each maximal run of consecutive *plain text blocks* (type
  `text`, `input_text` or `output_text`, a string `text`, no other key with a value) becomes
  one string, their texts concatenated with nothing in between, and string content is one such
  run; runs with no characters are left out, so `"x"`, `[{"type": "text", "text": "x"}]` and
  `[{"type": "output_text", "text": "x", "annotations": []}]` are equal, and `null`, `""` and
  `[]` are; every other block is kept in its place, pruned (below);
* each tool call: `id`, `type`, function `name` exactly (absent is `""`), and `arguments`
  parsed as strict JSON and compared as that value (spacing and key order forgiven, `1` still
  differs from `1.0`), or compared as raw text when it is not strict JSON; the call's and its
  function's other keys pruned;
* `tool_call_id` exactly (absent is `null`; `""` is an id);
* `refusal` as text: absent, `null` and `""` are equal;
* every other key (metadata), pruned.

*Pruned* means that an object member whose value is `null`, `""`, `[]` or `{}` (after pruning
its own members) is as if absent, at any depth; array items are never dropped. Never pruned:
call arguments. So the form forgives no changed, added or removed character of text, no
dropped non-text block, no different call id, name or argument value, no reordered calls or
blocks, no changed role and no changed metadata value: it forgives only the spelling.

Messages with the same exact identity always have the same neutral form (equivalence is
coarser than identity), which the tests check.
"""

from __future__ import annotations

from typing import Any

from frayproof_audit.jsonio import JSONProblem, canonical, loads_strict
from frayproof_audit.model import MODELLED_FIELDS, TEXT_BLOCK_TYPES

EXACT = "exact"
EQUIVALENT = "equivalent"
COMPARISONS = (EXACT, EQUIVALENT)
"""How pins and retention rules compare messages (`match`, `retain.compare`)."""

_CALL_KEYS = frozenset({"id", "type", "function"})
_FUNCTION_KEYS = frozenset({"name", "arguments"})


def equivalence_key(message: dict[str, Any]) -> bytes:
    """Canonical JSON of the message's neutral form: equal bytes ⇔ equivalent messages."""
    return canonical(neutral_form(message))


def neutral_form(message: dict[str, Any]) -> dict[str, Any]:
    """The message as equivalence compares it (module docstring)."""
    form: dict[str, Any] = _pruned_members(
        {key: value for key, value in message.items() if key not in MODELLED_FIELDS})
    form["role"] = message.get("role") or ""
    form["content"] = content_form(message.get("content"))
    calls = message.get("tool_calls")
    if calls:
        form["tool_calls"] = [_call_form(call) for call in calls]
    tool_call_id = message.get("tool_call_id")
    if tool_call_id is not None:
        form["tool_call_id"] = tool_call_id
    refusal = message.get("refusal")
    if refusal:
        form["refusal"] = refusal
    return form


def content_form(content: Any) -> list[Any]:
    """Content as a list: merged text runs as strings, other blocks pruned, in order."""
    if content is None:
        return []
    if type(content) is str:
        return [content] if content else []
    if type(content) is not list:
        return [_pruned(content)]
    items: list[Any] = []
    run: list[str] = []
    for block in content:
        text = _plain_text(block)
        if text is not None:
            run.append(text)
            continue
        if run:
            _close(run, items)
        items.append(_pruned(block))
    _close(run, items)
    return items


def content_key(content: Any) -> bytes:
    """Canonical JSON of `content_form`: equal for equivalent contents (`tool_results`)."""
    return canonical(content_form(content))


def text_runs(content: Any) -> list[str]:
    """The text a message shows, as equivalence reads it: each run of plain text blocks
    joined (what a contains pin searches under `match: equivalent`)."""
    return [item for item in content_form(content) if type(item) is str]


def _close(run: list[str], items: list[Any]) -> None:
    text = "".join(run)
    if text:
        items.append(text)
    run.clear()


def _plain_text(block: Any) -> str | None:
    """A text block's text when the block is nothing else (other members empty), else None."""
    if type(block) is not dict:
        return None
    kind, text = block.get("type"), block.get("text")
    if type(kind) is not str or kind not in TEXT_BLOCK_TYPES or type(text) is not str:
        return None
    for key, value in block.items():
        if key not in ("type", "text") and not _is_empty(_pruned(value)):
            return None
    return text


def _call_form(call: Any) -> Any:
    if type(call) is not dict:
        return _pruned(call)
    function = call.get("function")
    if type(function) is not dict:
        function = {}
    form = _pruned_members({key: value for key, value in call.items() if key not in _CALL_KEYS})
    form["id"] = call.get("id") or ""
    form["type"] = call.get("type") or ""
    function_form = _pruned_members(
        {key: value for key, value in function.items() if key not in _FUNCTION_KEYS})
    function_form["name"] = function.get("name") or ""
    function_form["arguments"] = arguments_form(function.get("arguments", ""))
    form["function"] = function_form
    return form


def arguments_form(arguments: Any) -> dict[str, Any]:
    """`{"json": value}` for strict-JSON arguments text, else `{"text": raw}` (the two never
    meet: the text `x` and the JSON string `"x"` differ)."""
    if type(arguments) is not str:
        return {"text": arguments}
    try:
        return {"json": loads_strict(arguments.encode("utf-8"))}
    except (JSONProblem, UnicodeEncodeError):
        return {"text": arguments}


def _pruned(value: Any) -> Any:
    if type(value) is dict:
        return _pruned_members(value)
    if type(value) is list:
        return [_pruned(item) for item in value]
    return value


def _pruned_members(mapping: dict[Any, Any]) -> dict[Any, Any]:
    kept: dict[Any, Any] = {}
    for key, value in mapping.items():
        value = _pruned(value)
        if not _is_empty(value):
            kept[key] = value
    return kept


def _is_empty(value: Any) -> bool:
    return value is None or (type(value) in (str, list, dict) and not value)
