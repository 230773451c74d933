"""The contract a record is judged by when it carries its own `tools`.

A corpus record may list the tools the agent actually had; they replace the contract's tool
schemas for that record. Parsing schemas (each is checked against its draft's meta-schema) and
compiling them is far dearer than checking a call, and a night of logs repeats the same few tool
lists thousands of times. So each worker process parses each distinct list once (keyed by its
canonical JSON, in a small bounded map shared by every shard the process runs; the same
`ToolSchema` tuple also keeps its compiled validators cached in `toolargs.compiled`), and each
`RecordTools` (one per shard) keeps the contract built for each list.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from frayproof_audit.contract import Contract
from frayproof_audit.jsonio import JSONProblem, canonical
from frayproof_audit.toolargs.schemas import ToolSchema, tool_schemas

ORIGIN = "the record's tools"
"""Where a bad tool list is said to be in its input error."""

MAX_TOOL_SETS = 64
"""Distinct tool lists remembered per worker (the oldest is forgotten first)."""

_PARSED: dict[bytes, tuple[ToolSchema, ...]] = {}
"""Canonical JSON of a tool list → its `ToolSchema`s, for the whole process: shards come and go,
the tool lists stay the same, and the tuple's identity is what keeps its validators compiled."""


def parsed_tools(key: bytes, tools: list[Any]) -> tuple[ToolSchema, ...]:
    """The `ToolSchema`s of `tools` (whose canonical JSON is `key`), parsed once per process.
    Raises `ToolSchemaError` (never cached: the record is an input error each time)."""
    found = _PARSED.get(key)
    if found is None:
        found = tool_schemas(tools, ORIGIN)
        if len(_PARSED) >= MAX_TOOL_SETS:
            _PARSED.pop(next(iter(_PARSED)), None)
        _PARSED[key] = found
    return found


class RecordTools:
    """Per-shard cache: a record's tool list → the contract with those tools (the tools
    themselves are parsed once per process, `parsed_tools`)."""

    __slots__ = ("_contracts",)

    def __init__(self) -> None:
        self._contracts: dict[bytes, Contract] = {}

    def contract_for(self, contract: Contract, tools: list[Any] | None) -> Contract:
        """`contract` itself for a record without tools; else the contract with the record's
        tools. Raises `ToolSchemaError` (an `InputError`) when they are not tool definitions."""
        if not tools:
            return contract
        try:
            key = canonical(tools)
        except JSONProblem:  # not canonicalizable: parse every time (it errors or is rare)
            return replace(contract, tools=tool_schemas(tools, ORIGIN))
        found = self._contracts.get(key)
        if found is None or found.checks is not contract.checks:
            if len(self._contracts) >= MAX_TOOL_SETS:
                del self._contracts[next(iter(self._contracts))]
            found = replace(contract, tools=parsed_tools(key, tools))
            self._contracts[key] = found
        return found
