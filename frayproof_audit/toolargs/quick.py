"""A quick proof that arguments are valid under a tool's schema, so jsonschema runs only on the rest.

jsonschema's `iter_errors` costs about a tenth of a millisecond per call even when the call is
valid, and nearly every logged call is: in a corpus audit it was most of what the
`tool_arguments` check cost. `prove_valid(schema)` turns a schema into a function that returns
True only when the instance is certainly valid; False means "not proven" (invalid, or beyond
what the proof covers), and the caller then asks jsonschema, whose errors are the findings. So
findings never depend on this module: a wrong True would hide a finding, a wrong False only
costs time, and the proof is built to err only towards False:

* only draft 2020-12 schemas (the default), whose keywords below mean what they say here;
* only the keywords listed in `_KEYWORDS` and the annotations in `_ANNOTATIONS`; a schema (or
  any subschema it reaches) using another keyword gets no proof at all (None), so a keyword
  jsonschema knows and this module does not can never be skipped;
* `$ref` only to `#/$defs/<name>` or `#/definitions/<name>` of the same schema, not
  recursive, and no `$id` anywhere (which would move the base of references);
* values are what a JSON parser returns (dict, list, str, int, float, bool, None);
* `pattern` only when RE2 runs it, read as the validator reads it (`patterns`: ECMA-262);
* `enum` and `const` are proven only by a member of the same type that compares equal, and
  `uniqueItems` only for arrays of strings, which sidesteps jsonschema's own equality rules
  (`1 == 1.0`, `True != 1`) instead of reimplementing them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from frayproof_audit.toolargs.patterns import RE2, PatternError, compile_pattern

Proof = Callable[[Any], bool]

_ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "$comment", "deprecated", "readOnly",
    "writeOnly", "format", "$defs", "definitions",
})
"""Keywords that never make an instance invalid here (`format` is an annotation: the
validators are built without a format checker; `$defs` only matter through `$ref`)."""
_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "pattern", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "$ref",
})
_REF = re.compile(r"#/(\$defs|definitions)/([A-Za-z0-9_.-]+)")
_SCALARS = (str, int, float, bool, type(None))
_MAX_DEPTH = 32


class _Unsupported(Exception):
    """The schema uses something the proof does not cover: no proof for this tool."""


def prove_valid(schema: Mapping[str, Any], draft_2020_12: bool) -> Proof | None:
    """A proof for `schema` (already checked against its meta-schema), or None when the schema
    goes beyond what proofs cover. `draft_2020_12`: the schema is validated under that draft."""
    if not draft_2020_12:
        return None
    try:
        return _Builder(schema).build(schema, 0)
    except _Unsupported:
        return None


def _is_number(value: Any) -> bool:
    kind = type(value)
    return kind is int or kind is float


def _type_test(name: str) -> Callable[[Any], bool]:
    """JSON Schema 2020-12 type membership for parsed JSON values (a boolean is no number, an
    integer is any whole number, `3.0` included)."""
    if name == "string":
        return lambda value: type(value) is str
    if name == "integer":
        return lambda value: type(value) is int or (type(value) is float and value.is_integer())
    if name == "number":
        return _is_number
    if name == "boolean":
        return lambda value: type(value) is bool
    if name == "object":
        return lambda value: type(value) is dict
    if name == "array":
        return lambda value: type(value) is list
    if name == "null":
        return lambda value: value is None
    raise _Unsupported(f"type {name!r}")


def _member(options: list[Any]) -> Callable[[Any], bool]:
    """Proven membership: a scalar option of the instance's own type that equals it."""
    scalars = [option for option in options if type(option) in _SCALARS]

    def test(value: Any) -> bool:
        kind = type(value)
        return any(type(option) is kind and option == value for option in scalars)

    return test


class _Builder:
    """Builds the proof of one schema; `$ref`s resolve against its root."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.resolving: list[str] = []

    def build(self, schema: Any, depth: int) -> Proof:
        if depth > _MAX_DEPTH:
            raise _Unsupported("too deep")
        if schema is True:
            return lambda value: True
        if not isinstance(schema, Mapping):
            raise _Unsupported("a false or non-object schema")
        unknown = [key for key in schema if key not in _KEYWORDS and key not in _ANNOTATIONS]
        if unknown and not (depth == 0 and unknown == ["$schema"]):
            raise _Unsupported(f"keyword {unknown[0]!r}")
        tests: list[Proof] = []
        if "$ref" in schema:
            tests.append(self._ref(schema["$ref"], depth))
        if "type" in schema:
            tests.append(self._type(schema["type"]))
        tests += self._object(schema, depth)
        tests += self._array(schema, depth)
        tests += self._scalar(schema)
        if not tests:
            return lambda value: True
        return _every(tests)

    def _ref(self, ref: Any, depth: int) -> Proof:
        match = _REF.fullmatch(ref) if type(ref) is str else None
        if match is None or ref in self.resolving:
            raise _Unsupported(f"$ref {ref!r}")
        container = self.root.get(match.group(1))
        if not isinstance(container, Mapping) or match.group(2) not in container:
            raise _Unsupported(f"$ref {ref!r}")
        self.resolving.append(ref)
        try:
            return self.build(container[match.group(2)], depth + 1)
        finally:
            self.resolving.pop()

    def _type(self, declared: Any) -> Proof:
        names = [declared] if type(declared) is str else declared
        if type(names) is not list or not names or any(type(name) is not str for name in names):
            raise _Unsupported("type")
        tests = [_type_test(name) for name in names]
        if len(tests) == 1:
            return tests[0]
        return lambda value: any(test(value) for test in tests)

    def _object(self, schema: Mapping[str, Any], depth: int) -> list[Proof]:
        tests: list[Proof] = []
        properties = schema.get("properties", {})
        if not isinstance(properties, Mapping):
            raise _Unsupported("properties")
        subschemas = {key: self.build(sub, depth + 1) for key, sub in properties.items()}
        additional = schema.get("additionalProperties", True)
        extra: Proof | None = None
        if additional is False:
            def extra(value: Any) -> bool:
                return False
        elif additional is not True:
            extra = self.build(additional, depth + 1)
        if subschemas or extra is not None:
            def members(value: Any) -> bool:
                if type(value) is not dict:
                    return True
                for key, item in value.items():
                    test = subschemas.get(key, extra)
                    if test is not None and not test(item):
                        return False
                return True
            tests.append(members)
        required = schema.get("required", [])
        if type(required) is not list or any(type(name) is not str for name in required):
            raise _Unsupported("required")
        if required:
            needed = frozenset(required)
            tests.append(lambda value: type(value) is not dict or value.keys() >= needed)
        low, high = schema.get("minProperties"), schema.get("maxProperties")
        if low is not None or high is not None:
            tests.append(_sized(dict, low, high))
        return tests

    def _array(self, schema: Mapping[str, Any], depth: int) -> list[Proof]:
        tests: list[Proof] = []
        if "items" in schema:
            item = self.build(schema["items"], depth + 1)
            tests.append(lambda value: type(value) is not list or all(item(each) for each in value))
        low, high = schema.get("minItems"), schema.get("maxItems")
        if low is not None or high is not None:
            tests.append(_sized(list, low, high))
        unique = schema.get("uniqueItems", False)
        if unique is True:
            tests.append(lambda value: type(value) is not list or (
                all(type(each) is str for each in value) and len(set(value)) == len(value)))
        elif unique is not False:
            raise _Unsupported("uniqueItems")
        return tests

    def _scalar(self, schema: Mapping[str, Any]) -> list[Proof]:
        tests: list[Proof] = []
        if "enum" in schema:
            if type(schema["enum"]) is not list:
                raise _Unsupported("enum")
            tests.append(_member(schema["enum"]))
        if "const" in schema:
            tests.append(_member([schema["const"]]))
        for keyword, holds in (("minimum", lambda v, b: v >= b), ("maximum", lambda v, b: v <= b),
                               ("exclusiveMinimum", lambda v, b: v > b),
                               ("exclusiveMaximum", lambda v, b: v < b)):
            if keyword in schema:
                tests.append(_bound(schema[keyword], holds))
        low, high = schema.get("minLength"), schema.get("maxLength")
        if low is not None or high is not None:
            tests.append(_sized(str, low, high))
        if "pattern" in schema:
            pattern = schema["pattern"]
            if type(pattern) is not str:
                raise _Unsupported("pattern")
            try:
                compiled = compile_pattern(pattern)
            except PatternError:
                raise _Unsupported("pattern") from None
            if compiled.engine != RE2:
                raise _Unsupported("a pattern only the backtracking engine runs (it has a budget)")
            search = compiled.search
            tests.append(lambda value: type(value) is not str or search(value))
        return tests


def _bound(limit: Any, holds: Callable[[Any, Any], bool]) -> Proof:
    if not _is_number(limit):
        raise _Unsupported("a bound that is not a number")
    return lambda value: not _is_number(value) or holds(value, limit)


def _sized(kind: type[str] | type[list[Any]] | type[dict[str, Any]], low: Any, high: Any) -> Proof:
    """`min*`/`max*` of strings (code points), arrays (items) or objects (members)."""
    for bound in (low, high):
        if bound is not None and not (type(bound) is int or (type(bound) is float and bound.is_integer())):
            raise _Unsupported("a size that is not a whole number")
    lowest = 0 if low is None else low
    highest = float("inf") if high is None else high
    def test(value: Any) -> bool:
        return type(value) is not kind or lowest <= len(value) <= highest

    return test


def _every(tests: list[Proof]) -> Proof:
    """One proof that holds when all of `tests` hold, tried in order: chained `and`s, which
    cost less per call than `all()` over a generator for the two to four tests a node has."""
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda value: first(value) and second(value)
    if len(tests) == 3:
        first, second, third = tests
        return lambda value: first(value) and second(value) and third(value)
    return lambda value: all(test(value) for test in tests)
