"""The contract a record is judged by when it carries its own `tools`.

A corpus record may list the tools the agent actually had; they replace the contract's tool
schemas for that record. Parsing and compiling schemas is far dearer than checking a call, and
a night of logs repeats the same few tool lists thousands of times, so each worker keeps the
contract built for each distinct list (keyed by its canonical JSON; the same `ToolSchema` tuple
also keeps its compiled validators cached) in a small bounded map.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from frayproof_audit.contract import Contract
from frayproof_audit.jsonio import JSONProblem, canonical
from frayproof_audit.toolargs.schemas import tool_schemas

MAX_TOOL_SETS = 64
"""Distinct tool lists remembered per worker (the oldest is forgotten first)."""


class RecordTools:
    """Per-worker cache: a record's tool list → the contract with those tools."""

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
            return replace(contract, tools=tool_schemas(tools, "the record's tools"))
        found = self._contracts.get(key)
        if found is None or found.checks is not contract.checks:
            if len(self._contracts) >= MAX_TOOL_SETS:
                del self._contracts[next(iter(self._contracts))]
            found = replace(contract, tools=tool_schemas(tools, "the record's tools"))
            self._contracts[key] = found
        return found
