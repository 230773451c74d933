"""Mutation cases whose calls carry arguments under tool schemas (the argument operators).

`sessiongen.small`'s sessions call `read`/`write` with `{}`; here every call of a case gets an
arguments text drawn per call id (the same text wherever the id recurs, so after keeps before's
calls), sometimes changed in after (so `tool_call_integrity` has findings on the original too),
sometimes not JSON or not an object; two results of after sometimes trade ids; the contract gets
schemas for both tools and, mostly, `tool_call_integrity`. Builders take a `Source`, as in
`small`, so hypothesis can shrink them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import yaml

from frayproof_audit.contract import Contract, parse_contract
from frayproof_audit.toolargs.schemas import ToolSchema
from sessiongen import small
from sessiongen.source import Source

PROPERTIES: dict[str, Any] = {
    "path": {"type": "string"},
    "limit": {"type": "integer"},
    "scale": {"type": "number"},
    "recursive": {"type": "boolean"},
    "tags": {"type": "array"},
    "options": {"type": "object"},
    "mode": {"type": ["string", "null"]},
    "note": {},
}
TOOLS = (
    ToolSchema("read", {"type": "object", "properties": PROPERTIES, "required": ["path", "limit"]}),
    ToolSchema("write", {"type": "object", "properties": {"path": {"type": "string"}},
                         "required": ["path", "mode"]}),
)
VALUES: tuple[Any, ...] = ("a.txt", "", 0, 3, 1.5, True, False, None, [1, "x"], [], {"k": 1}, {},
                           "0")
"""Values of any type, so some are already wrong (and some already are a replacement)."""


def arguments_text(src: Source) -> str:
    roll = src.fraction()
    if roll < 0.08:
        return src.pick(('{"path": "a.t', "[1]", '"a.txt"', ""))  # not a JSON object
    keys = [key for key in (*PROPERTIES, "extra") if src.chance(0.5)]
    value = {key: src.pick(VALUES) for key in keys}
    if roll < 0.2:
        return json.dumps(value, indent=1)  # spacing that is no change
    return json.dumps(value, separators=(",", ":"))


def _calls(messages: list[Any]) -> list[dict[str, Any]]:
    return [
        call for message in messages if type(message) is dict
        and type(message.get("tool_calls")) is list for call in message["tool_calls"]
        if type(call) is dict and type(call.get("function")) is dict
    ]


def with_arguments(src: Source, case: small.MutationCase) -> tuple[list[Any], list[Any], Contract]:
    """`case` with drawn arguments and a contract that has the tool schemas."""
    before, after, contract_yaml = case
    texts: dict[Any, str] = {}
    for call in _calls(before):
        call["function"]["arguments"] = texts.setdefault(call.get("id"), arguments_text(src))
    for call in _calls(after):
        known = texts.get(call.get("id"))
        changed = known is None or src.chance(0.15)
        call["function"]["arguments"] = arguments_text(src) if changed else known
        if src.chance(0.05):
            call["function"]["name"] = src.pick(("read", "write", "other"))
    results = [m for m in after if type(m) is dict and m.get("role") == "tool"]
    if len(results) > 1 and src.chance(0.15):  # two results trade ids (TC-RESULT-ID)
        first, second = results[0], results[-1]
        first["tool_call_id"], second["tool_call_id"] = (
            second.get("tool_call_id"), first.get("tool_call_id"))
    document = yaml.safe_load(contract_yaml) or {}
    if src.chance(0.75):
        checks = document.setdefault("checks", {})
        checks["tool_call_integrity"] = True if src.chance(0.8) else {"severity": "warning"}
    return before, after, replace(parse_contract(small.to_yaml(document)), tools=TOOLS)


def argument_case(src: Source) -> tuple[list[Any], list[Any], Contract]:
    """A small mutation case (noisy or clean) with arguments and tool schemas."""
    base = small.clean_mutation_case(src) if src.chance(0.5) else small.mutation_case(src)
    return with_arguments(src, base)
