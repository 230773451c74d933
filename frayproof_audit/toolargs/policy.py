"""The tool-argument rules, their stable condition codes, and the policy a run applies.

Shared by the `tool_arguments` check and the `tool-args` command, so both judge a call the same
way and report the same codes. Codes are a compatibility promise (never renamed or reused);
rule names are the contract's and the table's vocabulary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

VALID_JSON = "valid_json"
UNKNOWN_TOOL = "unknown_tool"
REQUIRED_FIELDS = "required_fields"
ARG_TYPES = "arg_types"
NO_SCHEMA_DRIFT = "no_schema_drift"
SCHEMA = "schema"

RULES = (VALID_JSON, UNKNOWN_TOOL, REQUIRED_FIELDS, ARG_TYPES, NO_SCHEMA_DRIFT, SCHEMA)
"""Every rule, in the order a call's findings are reported."""

LEVELS = ("error", "warning", "off")

CODE_JSON = "TA-JSON"
CODE_NOT_OBJECT = "TA-NOT-OBJECT"
CODE_EMPTY = "TA-EMPTY"
CODE_MISSING = "TA-MISSING"
CODE_NOT_STRING = "TA-NOT-STRING"
CODE_UNKNOWN_TOOL = "TA-UNKNOWN-TOOL"
CODE_REQUIRED = "TA-REQUIRED"
CODE_TYPE = "TA-TYPE"
CODE_DRIFT = "TA-DRIFT"
CODE_SCHEMA = "TA-SCHEMA"
CODE_NOT_JUDGED = "TA-NOT-JUDGED"
"""The call could not be judged within bounds (`budget`): never a pass."""

AS_EMPTY_OBJECT = "as_empty_object"
ERROR = "error"
ARGUMENT_POLICIES = (AS_EMPTY_OBJECT, ERROR)
DEFAULT_EMPTY_ARGUMENTS = AS_EMPTY_OBJECT
"""`""` means "no arguments": OpenAI-compatible servers emit it for zero-parameter tools, and a
tool with required fields still fails `required_fields`, so nothing real is excused."""
DEFAULT_MISSING_ARGUMENTS = ERROR
"""No `arguments` at all (absent, or `null`) is never what a provider sends: it is what a lossy
serializer or a compactor that dropped the field leaves behind, which is what an audit is for."""


class LevelProblem(ValueError):
    """A rule level or rule name is not one of the allowed ones."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one call: the rule, its code and one line of evidence."""

    rule: str
    code: str
    evidence: str = ""


@dataclass(frozen=True, slots=True)
class Policy:
    """How calls are judged: every rule's level and the two argument policies.

    Hashable, so verdicts can be cached per (call, policy).
    """

    levels: tuple[tuple[str, str], ...]
    empty_arguments: str = DEFAULT_EMPTY_ARGUMENTS
    missing_arguments: str = DEFAULT_MISSING_ARGUMENTS
    enabled: frozenset[str] = field(init=False, compare=False, repr=False)
    """The rules not `off` (derived from `levels`): asked several times for every call judged."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "enabled", frozenset(name for name, level in self.levels if level != "off"))

    def level(self, rule: str) -> str:
        for name, level in self.levels:
            if name == rule:
                return level
        raise KeyError(rule)

    def on(self, rule: str) -> bool:
        if rule not in self.enabled:
            self.level(rule)  # an unknown rule is a KeyError, as ever
            return False
        return True


def default_level(rule: str, severity: str = "error") -> str:
    """A rule's level when not set: drift is a warning (an extra field is often harmless),
    every other rule takes the check's `severity`."""
    return "warning" if rule == NO_SCHEMA_DRIFT else severity


def parse_level(rule: str, value: Any) -> str | None:
    """One `rules:` value: error, warning, off; YAML 1.1 reads an unquoted `off` as false, so
    false means off and true means the rule's default (returned as None)."""
    if value is True:
        return None
    if value is False:
        return "off"
    if type(value) is not str or value not in LEVELS:
        raise LevelProblem(f"{rule}: must be one of error, warning, off")
    return value


def parse_levels(value: Any) -> tuple[tuple[str, str], ...]:
    """The `rules:` mapping as (rule, level) pairs in rule order; unknown rules are refused."""
    if not isinstance(value, Mapping):
        raise LevelProblem("must be a mapping of rule to error, warning or off")
    unknown = [str(key) for key in value if key not in RULES]
    if unknown:
        raise LevelProblem(f"unknown rule {unknown[0]!r} (rules: {', '.join(RULES)})")
    pairs = []
    for rule in RULES:
        if rule in value:
            level = parse_level(rule, value[rule])
            if level is not None:
                pairs.append((rule, level))
    return tuple(pairs)


def make_policy(
    given: tuple[tuple[str, str], ...] = (),
    *,
    severity: str = "error",
    empty_arguments: str = DEFAULT_EMPTY_ARGUMENTS,
    missing_arguments: str = DEFAULT_MISSING_ARGUMENTS,
) -> Policy:
    """A complete policy: the given levels, every other rule at its default."""
    chosen = dict(given)
    return Policy(
        levels=tuple((rule, chosen.get(rule, default_level(rule, severity))) for rule in RULES),
        empty_arguments=empty_arguments,
        missing_arguments=missing_arguments,
    )


DEFAULT_POLICY = make_policy()
