"""Judging one call's arguments against a compiled tool set: the six rules.

`judge` returns the call's problems in rule order (`policy.RULES`), each with its condition code
and one line of evidence. It knows nothing of messages, reports or files, so the check and the
`tool-args` command share it. Verdicts are cached per (tool, arguments text, policy): mutation
testing re-checks the same calls in dozens of mutants, and a corpus repeats calls often.

Each problem is reported once, by the most specific enabled rule: a missing top-level required
field is `required_fields`, a wrong top-level `type` is `arg_types`, and `schema` reports only
what those two do not (nested values, enum, formats of numbers, references, combinators).

Each call is judged within its time budget (`budget`): a call whose schema validation cannot
finish in it is `TA-NOT-JUDGED` under `schema` (at that rule's severity), never a pass.
"""

from __future__ import annotations

from typing import Any

from frayproof_audit.jsonio import JSONProblem, loads_strict
from frayproof_audit.toolargs import budget
from frayproof_audit.toolargs import policy as P
from frayproof_audit.toolargs.compiled import FORBIDDEN, UNSET, CompiledTool, ToolSet
from frayproof_audit.toolargs.policy import Policy, Problem
from frayproof_audit.toolargs.text import kind, one_line, preview

MAX_SCHEMA_ERRORS = 10
"""Schema errors reported per call; the rest are counted in one more problem."""
_CACHED_ARGUMENTS = 64 * 1024
_CACHE_LIMIT = 8192


class SchemaFailure(Exception):
    """A schema reference could not be resolved while validating (an input error upstream)."""


def judge(tools: ToolSet, name: str, arguments: Any, present: bool, policy: Policy) -> tuple[Problem, ...]:
    """The problems of one call to `name` with raw `arguments` (`present`: the key exists)."""
    cacheable = type(arguments) is str and len(arguments) <= _CACHED_ARGUMENTS
    if cacheable:
        key = (name, arguments, present, policy)
        hit = tools.verdicts.get(key)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
    previous = budget.start(len(arguments) if type(arguments) is str else 0)
    try:
        found = tuple(_judge(tools, name, arguments, present, policy))
    finally:
        budget.stop(previous)
    if cacheable:
        if len(tools.verdicts) >= _CACHE_LIMIT:
            tools.verdicts.clear()
        tools.verdicts[key] = found
    return found


def _judge(tools: ToolSet, name: str, arguments: Any, present: bool, policy: Policy) -> list[Problem]:
    found: list[Problem] = []
    value = _arguments(arguments, present, policy, found)
    tool = tools.tools.get(name)
    if tool is None:
        if policy.on(P.UNKNOWN_TOOL):
            known = ", ".join(tools.names)
            what = "the call has no name" if not name else f"no tool named {one_line(name, 60)}"
            found.append(Problem(P.UNKNOWN_TOOL, P.CODE_UNKNOWN_TOOL,
                                 one_line(f"{what} (tools: {known})")))
        return found
    if value is None:
        return found  # the arguments are not an object: the structural rules have nothing to read
    if tool.proof is not None and tool.proof(value):
        # Proven valid against the whole schema, so no required field is missing, no declared
        # top-level type is wrong (the proof reads the same `required` and `type` as those two
        # rules) and jsonschema would report nothing. Drift is not a schema error: still asked.
        if policy.on(P.NO_SCHEMA_DRIFT):
            found += _drift(tool, value, policy)
        return found
    if policy.on(P.REQUIRED_FIELDS):
        found += [Problem(P.REQUIRED_FIELDS, P.CODE_REQUIRED, one_line(field, 80))
                  for field in tool.required if field not in value]
    typed: set[str] = set()
    if policy.on(P.ARG_TYPES):
        types = tool.types
        wrong = [key for key, item in value.items()
                 if key in types and not any(matches(name, item) for name in types[key])]
        for key in sorted(wrong):  # sorted only when there is something to report
            typed.add(key)
            found.append(Problem(P.ARG_TYPES, P.CODE_TYPE, one_line(
                f"{key}: expected {' or '.join(types[key])}, got {kind(value[key])} "
                f"{preview(value[key])}")))
    if policy.on(P.NO_SCHEMA_DRIFT):
        found += _drift(tool, value, policy)
    if policy.on(P.SCHEMA):
        found += _schema(tool, value, policy, typed)
    return found


def _arguments(arguments: Any, present: bool, policy: Policy, found: list[Problem]) -> dict[str, Any] | None:
    """valid_json: the arguments as an object, or None (with a problem when the rule is on)."""
    report = policy.on(P.VALID_JSON)

    def fail(code: str, evidence: str = "") -> None:
        if report:
            found.append(Problem(P.VALID_JSON, code, evidence))

    if not present or arguments is None:
        if policy.missing_arguments == P.AS_EMPTY_OBJECT:
            return {}
        fail(P.CODE_MISSING, "arguments absent" if not present else "arguments null")
        return None
    if type(arguments) is not str:
        # Raw JSON where the wire format requires a JSON-encoded string (invary accepted it).
        fail(P.CODE_NOT_STRING, f"a raw {kind(arguments)} {preview(arguments)}")
        return arguments if type(arguments) is dict else None
    if arguments == "":
        if policy.empty_arguments == P.AS_EMPTY_OBJECT:
            return {}
        fail(P.CODE_EMPTY, 'arguments ""')
        return None
    try:
        value = loads_strict(arguments.encode("utf-8"))
    except UnicodeEncodeError:
        fail(P.CODE_JSON, "not valid Unicode text (a lone surrogate)")
        return None
    except JSONProblem as exc:
        fail(P.CODE_JSON, one_line(f"{exc} in {one_line(arguments, 60)}"))
        return None
    if type(value) is not dict:
        fail(P.CODE_NOT_OBJECT, f"parsed to {kind(value)} {preview(value)}")
        return None
    return value


def arguments_object(arguments: Any, present: bool, policy: Policy) -> dict[str, Any] | None:
    """The arguments as the structural rules read them (an object), or None when they cannot."""
    return _arguments(arguments, present, policy, [])


def matches(declared: str, value: Any) -> bool:
    """Whether `value` has JSON Schema type `declared`. A boolean is never a number, and an
    integer is any whole number, including `3.0` and integers beyond 64 bits (exact)."""
    kind_of = type(value)
    if declared == "string":
        return kind_of is str
    if declared == "integer":
        return kind_of is int or (kind_of is float and value.is_integer())
    if declared == "number":
        return kind_of is int or kind_of is float
    if declared == "boolean":
        return kind_of is bool
    if declared == "object":
        return kind_of is dict
    if declared == "array":
        return kind_of is list
    if declared == "null":
        return value is None
    return True  # draft 3's `any`, or a name check_schema let through


def _drift(tool: CompiledTool, value: dict[str, Any], policy: Policy) -> list[Problem]:
    """Undeclared top-level fields, unless the schema explicitly allows them; when it forbids
    them and `schema` is on, `schema` reports them (as its own severity) instead."""
    if tool.additional not in (UNSET, FORBIDDEN):
        return []
    if tool.additional == FORBIDDEN and policy.on(P.SCHEMA):
        return []
    try:
        undeclared = [key for key in value if not tool.declares(key)]
    except budget.NotJudged as exc:  # a patternProperties key only backtracking can match
        return [Problem(P.NO_SCHEMA_DRIFT, P.CODE_NOT_JUDGED, one_line(str(exc)))]
    return [Problem(P.NO_SCHEMA_DRIFT, P.CODE_DRIFT, one_line(key, 80)) for key in sorted(undeclared)]


def _schema(tool: CompiledTool, value: dict[str, Any], policy: Policy, typed: set[str]) -> list[Problem]:
    from referencing.exceptions import Unresolvable

    required_on = policy.on(P.REQUIRED_FIELDS)
    found: list[Problem] = []
    extra = 0
    try:
        errors = list(tool.validator.iter_errors(value))
    except Unresolvable as exc:
        raise SchemaFailure(f"tool {tool.name!r}: a $ref does not resolve: {exc}") from None
    except budget.NotJudged as exc:
        return [Problem(P.SCHEMA, P.CODE_NOT_JUDGED, one_line(str(exc)))]
    except RecursionError:  # hundreds of levels under a recursive schema, or in an error's repr
        return [Problem(P.SCHEMA, P.CODE_NOT_JUDGED, "not judged: the arguments nest too deeply to be "
                        "validated (Python's recursion limit)")]
    for error in sorted(errors, key=lambda e: (e.json_path, e.validator)):
        path = list(error.absolute_path)
        schema_path = list(error.relative_schema_path)
        if required_on and not path and schema_path == ["required"]:
            continue  # required_fields names each field
        if len(path) == 1 and path[0] in typed and schema_path[-1:] == ["type"] and len(schema_path) == 3:
            continue  # arg_types reported this field's type
        if len(found) >= MAX_SCHEMA_ERRORS:
            extra += 1
            continue
        found.append(Problem(P.SCHEMA, P.CODE_SCHEMA, one_line(f"{error.json_path}: {error.message}")))
    if extra:
        found.append(Problem(P.SCHEMA, P.CODE_SCHEMA, f"{extra} more schema error(s) not shown"))
    return found
