"""Tool schemas: what the agent's tools accept, from a contract's `tools:` or a record's `tools`.

A `ToolSchema` is one tool's name and the JSON Schema of its arguments (`parameters` in
OpenAI function definitions, `input_schema` in Anthropic tool definitions), in a neutral form
the checks and the argument mutation operators read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolSchema:
    """One tool: its name and the JSON Schema (an object schema) of its arguments."""

    name: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
