"""Checking the calls of one saved trace against tool schemas: what `tool-args` runs.

`check_tool_args` returns a `ToolArgsResult` that owns its verdict and exit code (0 pass, 1 a
failed rule of error severity, or of any severity with `strict`); anything that keeps the check
from running (an unreadable file, a broken schema, an unrecognized trace) raises an `InputError`
(exit 2), so "the call is bad" and "nothing was checked" are never the same code (invary Q2).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from frayproof_audit.report import EXIT_FAIL, EXIT_PASS, SCHEMA_VERSION
from frayproof_audit.toolargs import policy as P
from frayproof_audit.toolargs.compiled import ToolSet, tool_set
from frayproof_audit.toolargs.policy import DEFAULT_POLICY, Policy, Problem
from frayproof_audit.toolargs.rules import SchemaFailure, arguments_object, judge
from frayproof_audit.toolargs.schemas import ToolSchemaError, load_tools_file
from frayproof_audit.toolargs.text import one_line
from frayproof_audit.toolargs.trace import TraceCall, read_trace

PASS, FAIL, SKIP, OFF = "pass", "FAIL", "skip", "off"
_NEEDS_OBJECT = (P.REQUIRED_FIELDS, P.ARG_TYPES, P.NO_SCHEMA_DRIFT, P.SCHEMA)


@dataclass(frozen=True, slots=True)
class RuleResult:
    """One rule on one call: its level, its state (pass, FAIL, skip: could not apply, off)
    and the problems behind a FAIL."""

    rule: str
    severity: str
    state: str
    problems: tuple[Problem, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "invariant": self.rule,
            "severity": self.severity,
            "state": self.state.lower(),
            "findings": [{"code": p.code, "evidence": p.evidence} for p in self.problems],
        }


@dataclass(frozen=True, slots=True)
class CallResult:
    number: int
    call: TraceCall
    tool: str | None
    """The tool whose schema judged the call (its own name, or the only tool for a nameless call)."""
    rules: tuple[RuleResult, ...]

    @property
    def label(self) -> str:
        return f"{self.number} {one_line(self.call.name or self.tool or '(no name)', 24)}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "call": self.number,
            "where": self.call.where,
            "id": self.call.id,
            "name": self.call.name,
            "tool": self.tool,
            "results": [rule.to_dict() for rule in self.rules],
        }


@dataclass(frozen=True, slots=True)
class ToolArgsResult:
    """Every call of a trace judged by every rule; owns the verdict and the exit code."""

    trace: str
    schema: str
    calls: tuple[CallResult, ...]
    strict: bool = False

    def _failed(self, severity: str) -> int:
        return sum(1 for call in self.calls for rule in call.rules
                   if rule.state == FAIL and rule.severity == severity)

    @property
    def errors(self) -> int:
        return self._failed("error")

    @property
    def warnings(self) -> int:
        return self._failed("warning")

    @property
    def passed(self) -> bool:
        return self.errors == 0 and not (self.strict and self.warnings)

    @property
    def exit_code(self) -> int:
        return EXIT_PASS if self.passed else EXIT_FAIL

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "trace": self.trace,
            "schema": self.schema,
            "passed": self.passed,
            "strict": self.strict,
            "errors": self.errors,
            "warnings": self.warnings,
            "calls": [call.to_dict() for call in self.calls],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_text(self) -> str:
        from frayproof_audit.toolargs.table import render_table

        return render_table(self)


def check_tool_args(
    trace: str | os.PathLike[str],
    schema: str | os.PathLike[str],
    *,
    policy: Policy = DEFAULT_POLICY,
    strict: bool = False,
) -> ToolArgsResult:
    """Judge every call in the trace file against the tool definitions in the schema file.

    Raises `InputError` (`TraceError`, `ToolSchemaError`) when the check cannot run.
    """
    tools = load_tools_file(os.fspath(schema))
    if not tools:
        raise ToolSchemaError(f"Invalid tools '{os.fspath(schema)}': no tool definitions")
    calls = read_trace(trace)
    return judge_calls(calls, tool_set(tools), policy=policy, strict=strict,
                       trace=os.fspath(trace), schema=os.fspath(schema))


def judge_calls(calls: tuple[TraceCall, ...], tools: ToolSet, *, policy: Policy = DEFAULT_POLICY,
                strict: bool = False, trace: str = "", schema: str = "") -> ToolArgsResult:
    """The result for calls already read. A nameless call is judged against the only tool
    when there is exactly one (invary's bare `{arguments}` traces), else it is an unknown tool."""
    only = tools.names[0] if len(tools.names) == 1 else None
    results = []
    for number, call in enumerate(calls, start=1):
        tool = call.name if call.name else only
        try:
            problems = judge(tools, tool or "", call.arguments, call.present, policy)
        except SchemaFailure as exc:
            raise ToolSchemaError(f"Invalid tools '{schema}': {exc}") from None
        usable = arguments_object(call.arguments, call.present, policy) is not None
        known = tool in tools.tools
        rules = tuple(_rule(rule, policy, problems, usable, known) for rule in P.RULES)
        results.append(CallResult(number, call, tool if known else None, rules))
    return ToolArgsResult(trace, schema, tuple(results), strict)


def _rule(rule: str, policy: Policy, problems: tuple[Problem, ...], usable: bool, known: bool) -> RuleResult:
    level = policy.level(rule)
    if level == "off":
        return RuleResult(rule, level, OFF)
    mine = tuple(problem for problem in problems if problem.rule == rule)
    if mine:
        return RuleResult(rule, level, FAIL, mine)
    if rule in _NEEDS_OBJECT and not (usable and known):
        return RuleResult(rule, level, SKIP)
    return RuleResult(rule, level, PASS)
