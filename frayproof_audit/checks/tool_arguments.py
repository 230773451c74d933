"""tool_arguments: every tool call's arguments against the schema of the tool it names.

Bad:  tools [get_weather(location: string, required)] and a call get_weather('{"city": 1}')
      → TA-REQUIRED (location), TA-DRIFT (city; a warning)
Bad:  a call to a tool the schemas do not define → TA-UNKNOWN-TOOL
Good: get_weather('{"location": "Tokyo"}')

Inert without tool schemas (no contract `tools:` and no record `tools`): it then reports
nothing, so frayproof's verdicts on existing contracts never change. It runs after frayproof's
five checks.

Which calls (`scope`): `changed`, the default, judges only the calls of after the compactor
changed or created, those whose (id, name, arguments) no call of before has: a call kept
verbatim carries the model's own arguments, which are no fault of the compaction. Without a
before (`validate`) every call is one. `all` (also spelt `after`, its former name) judges every
call of after; `both` every call of after and of before. What is taken from before (its calls'
keys, and its findings under `both`) is prepared once per pair (`prepared.prepare_before`),
since every mutant shares one before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from frayproof_audit.checks.base import Check, CheckSettings, Condition, OneOf, OptionProblem
from frayproof_audit.jsonio import canonical
from frayproof_audit.recheck.local import new_messages_only
from frayproof_audit.report import Violation
from frayproof_audit.toolargs import policy as P
from frayproof_audit.toolargs.calls import call_arguments, message_calls
from frayproof_audit.toolargs.compiled import tool_set
from frayproof_audit.toolargs.policy import LevelProblem, Policy, make_policy, parse_levels
from frayproof_audit.toolargs.rules import SchemaFailure, judge
from frayproof_audit.toolargs.schemas import ToolSchemaError
from frayproof_audit.toolargs.text import one_line

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.loaded import CallView, Loaded
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.recheck.base import PairContext
    from frayproof_audit.recheck.mutant import Effects, Mutant

NAME = "tool_arguments"
KEY = "tool_arguments"
RULES_OPTION = "rules"
SCOPE = "scope"
CHANGED, ALL, AFTER, BOTH = "changed", "all", "after", "both"
SCOPES = (CHANGED, ALL, AFTER, BOTH)
"""`after` is the former name of `all`: contracts that say it keep their meaning."""
EMPTY_ARGUMENTS = "empty_arguments"
MISSING_ARGUMENTS = "missing_arguments"

JSON = Condition(P.CODE_JSON, "Tool call arguments are not valid JSON ({call}): {evidence}")
NOT_OBJECT = Condition(P.CODE_NOT_OBJECT, "Tool call arguments are not a JSON object ({call}): {evidence}")
EMPTY = Condition(P.CODE_EMPTY, "Tool call arguments are an empty string ({call}).")
MISSING = Condition(P.CODE_MISSING, "Tool call has no arguments ({call}): {evidence}")
UNKNOWN_TOOL = Condition(P.CODE_UNKNOWN_TOOL,
                         "Tool call names a tool the schemas do not define ({call}): {evidence}")
REQUIRED = Condition(P.CODE_REQUIRED, "Tool call is missing a required argument ({call}): {evidence}")
TYPE = Condition(P.CODE_TYPE, "Tool call argument has the wrong type ({call}): {evidence}")
DRIFT = Condition(P.CODE_DRIFT,
                  "Tool call passes an argument its schema does not declare ({call}): {evidence}")
SCHEMA = Condition(P.CODE_SCHEMA, "Tool call arguments break their schema ({call}): {evidence}")
NOT_JUDGED = Condition(P.CODE_NOT_JUDGED,
                       "Tool call arguments could not be judged within bounds ({call}): {evidence}")
NOT_STRING = Condition(P.CODE_NOT_STRING,
                       "Tool call arguments are raw JSON, not a JSON-encoded string ({call}): {evidence}")
"""Only `tool-args` meets this: the openai format rejects non-string arguments as input errors."""

_CONDITIONS = {c.code: c for c in (JSON, NOT_OBJECT, EMPTY, MISSING, NOT_STRING, UNKNOWN_TOOL, REQUIRED,
                                   TYPE, DRIFT, SCHEMA, NOT_JUDGED)}


@dataclass(frozen=True, slots=True)
class RuleLevels:
    """The `rules:` option: a mapping of rule → `error`, `warning` or `off` (YAML's unquoted
    `off` is false and means off; `true` keeps the rule's default). Unnamed rules keep theirs."""

    name: str = RULES_OPTION
    default: tuple[tuple[str, str], ...] = ()

    def parse(self, value: Any) -> Any:
        if type(value) is not dict:
            raise OptionProblem("must be a mapping of rule to error, warning or off")
        try:
            return parse_levels(value)
        except LevelProblem as exc:
            raise OptionProblem(str(exc)) from None


def policy_of(settings: CheckSettings) -> Policy:
    return make_policy(
        settings.option(RULES_OPTION),
        severity=settings.severity,
        empty_arguments=settings.option(EMPTY_ARGUMENTS),
        missing_arguments=settings.option(MISSING_ARGUMENTS),
    )


@dataclass(frozen=True, slots=True)
class BeforeCalls:
    """The check's before facts: the key of every call of before (`call_key`), which `changed`
    leaves unjudged in after, and before's own findings under `scope: both`."""

    kept: frozenset[tuple[Any, ...]] = field(default_factory=frozenset)
    findings: tuple[Violation, ...] = ()


def call_key(view: CallView, arguments: Any, present: bool) -> tuple[Any, ...]:
    """What makes a call of after the one of before it was kept from: id, name and arguments
    (a string as is, anything else as canonical JSON; absent arguments differ from `null`)."""
    kind = type(arguments)
    return (view.id, view.name, present, kind is str, arguments if kind is str else canonical(arguments))


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    if not contract.tools:
        return []
    facts = cast("BeforeCalls", before.of(KEY)) if before is not None else None
    kept = facts.kept if facts is not None and settings.option(SCOPE) == CHANGED else None
    found = judge_snapshot(after, "after", contract, settings, kept)
    if facts is not None:
        found += facts.findings
    return found


def before_calls(before: Loaded, contract: Contract) -> BeforeCalls:
    """The check's before facts, computed once per pair: the keys of before's calls under
    `scope: changed`, before's findings under `scope: both` (else nothing)."""
    settings = contract.settings(KEY)
    if not contract.tools or not settings.enabled:
        return BeforeCalls()
    scope = settings.option(SCOPE)
    if scope == BOTH:
        return BeforeCalls(findings=tuple(judge_snapshot(before, "before", contract, settings)))
    if scope != CHANGED:
        return BeforeCalls()
    wire = before.wire
    return BeforeCalls(frozenset(
        call_key(call_view, *call_arguments(call))
        for index, view in enumerate(before.views) if view.calls
        for call_view, call in zip(view.calls, message_calls(wire[index]), strict=False)))


def judge_snapshot(loaded: Loaded, snapshot: str, contract: Contract,
                   settings: CheckSettings, kept: frozenset[tuple[Any, ...]] | None = None,
                   ) -> list[Violation]:
    """Every call of every message, in message order and call order, but those whose key is
    in `kept` (calls before already had, under `scope: changed`)."""
    tools = tool_set(contract.tools)
    policy = policy_of(settings)
    wire = loaded.wire
    found: list[Violation] = []
    for index, view in enumerate(loaded.views):
        if not view.calls:
            continue
        for position, (call_view, call) in enumerate(zip(view.calls, message_calls(wire[index]),
                                                         strict=False)):
            arguments, present = call_arguments(call)
            if kept and call_key(call_view, arguments, present) in kept:
                continue
            try:
                problems = judge(tools, call_view.name, arguments, present, policy)
            except SchemaFailure as exc:
                raise ToolSchemaError(f"Invalid tools: {exc}") from None
            if not problems:
                continue
            label = f"{one_line(call_view.name, 60) or '(no name)'}, {loaded.site(snapshot, index, position)}"
            for problem in problems:
                found.append(_CONDITIONS[problem.code].violation(
                    NAME, policy.level(problem.rule), snapshot, index,
                    tool_call_id=call_view.id or None, rule=problem.rule,
                    call=label, evidence=problem.evidence,
                ))
    return found


class _PerMessage:
    """Mutation's re-check: the check's findings are those of each call on its own, labelled by
    the call's position, plus before's findings (its before facts). On a clean original (no
    finding at all) every message kept from it has none, so a mutant's findings are its new
    messages', judged by `find` on a snapshot of just those, each labelled and indexed by its
    mutant position (`recheck.local.new_messages_only`). Under `scope: changed` whether a call is
    judged depends only on the call and before's calls (`BeforeCalls.kept`), not on the other
    messages, so the window decides each new call as the whole mutant would."""

    __slots__ = ("check", "pair", "settings")

    def __init__(self, pair: PairContext, check: Check, settings: CheckSettings) -> None:
        self.pair, self.check, self.settings = pair, check, settings

    def findings(self, effects: Effects, mutant: Mutant) -> list[Violation] | None:
        pair = self.pair
        return new_messages_only(self.check.find, mutant, pair.contract, pair.facts, self.settings)


class _Inert:
    """Mutation's re-check without tool schemas: the check finds nothing on any snapshot."""

    __slots__ = ()

    def findings(self, effects: Effects, mutant: Mutant) -> list[Violation] | None:
        return []


def _recheck(pair: PairContext, check: Check, settings: CheckSettings,
             found: list[Violation]) -> _PerMessage | _Inert | None:
    if not pair.contract.tools:
        return _Inert()
    return None if found else _PerMessage(pair, check, settings)


CHECK = Check(
    name=NAME,
    key=KEY,
    conditions=(JSON, NOT_OBJECT, EMPTY, MISSING, UNKNOWN_TOOL, REQUIRED, TYPE, DRIFT, SCHEMA, NOT_JUDGED),
    find=find,
    summary="Every tool call's arguments against its tool's JSON Schema (inert without tool schemas).",
    options=(
        RuleLevels(),
        OneOf(SCOPE, SCOPES, CHANGED),
        OneOf(EMPTY_ARGUMENTS, P.ARGUMENT_POLICIES, P.DEFAULT_EMPTY_ARGUMENTS),
        OneOf(MISSING_ARGUMENTS, P.ARGUMENT_POLICIES, P.DEFAULT_MISSING_ARGUMENTS),
    ),
    prepare=before_calls,
    recheck=_recheck,
)
