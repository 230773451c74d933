"""jsonschema's validator classes with every keyword bounded in time by the instance.

jsonschema's own keywords match patterns with Python's backtracking `re` (`pattern`,
`patternProperties`, and the pattern part of `additionalProperties` and
`unevaluatedProperties`), and compare `uniqueItems` items pairwise when they do not sort
(20,000 objects: minutes). `bounded(cls)` is `cls` with those keywords replaced, their results
and messages unchanged:

* patterns run under RE2 (`patterns`), or on a backtracking engine within the call's budget;
* `uniqueItems` hashes each item's canonical form, equal exactly when jsonschema's `equal`
  says so (`1 == 1.0`, `true != 1`, objects by members, arrays by position): linear time;
* `unevaluatedProperties` collects evaluated keys in a set (jsonschema's list made it
  quadratic in the number of keys);
* every applicator keyword (the ones that descend or apply subschemas) first asks
  `budget.check()`, so what stays super-linear in jsonschema (`unevaluated*` under nested
  in-place applicators) ends at the call's deadline as "not judged".

`meta_problem` checks a schema against its draft's meta-schema with the bounded class too (the
meta-schemas of drafts 3 and 4 ask `enum` to be unique), and reads the `regex` format as
`patterns` does, so a pattern is accepted exactly when it can be run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any
from urllib.parse import urldefrag

from jsonschema.exceptions import ValidationError

from frayproof_audit.toolargs import budget
from frayproof_audit.toolargs.patterns import Pattern, PatternError, compile_pattern
from frayproof_audit.toolargs.text import one_line

_APPLICATORS = frozenset({
    "$ref", "$dynamicRef", "$recursiveRef", "additionalItems", "additionalProperties", "allOf",
    "anyOf", "contains", "dependencies", "dependentSchemas", "extends", "if", "items", "not",
    "oneOf", "patternProperties", "prefixItems", "properties", "propertyNames", "unevaluatedItems",
    "unevaluatedProperties",
})
"""Keywords that apply subschemas: where recursion, and so unbounded work, happens (draft 3's
schemas inside `type` only recurse through a `$ref`, which is checked)."""

_TRUE, _FALSE = object(), object()
"""Canonical forms of `true` and `false`: equal to nothing else (jsonschema's `unbool`)."""


def _canonical(value: Any) -> Any:
    """A hashable form of a JSON value, equal to another's exactly when jsonschema's `equal`
    holds. Iterative: instances nest up to the JSON reader's limit."""
    done: list[Any] = []
    todo: list[tuple[int, Any]] = [(0, value)]
    while todo:
        step, item = todo.pop()
        if step == 1:  # an array's items are the last `item` results
            parts = done[len(done) - item:] if item else []
            del done[len(done) - item:]
            done.append(tuple(parts))
        elif step == 2:  # an object's values, in the order of its keys `item`
            parts = done[len(done) - len(item):] if item else []
            del done[len(done) - len(item):]
            done.append(frozenset(zip(item, parts, strict=True)))
        elif item is True:
            done.append(_TRUE)
        elif item is False:
            done.append(_FALSE)
        elif isinstance(item, str):
            done.append(item)
        elif isinstance(item, Sequence):
            todo.append((1, len(item)))
            todo.extend((0, each) for each in reversed(item))
        elif isinstance(item, Mapping):
            keys = list(item)
            todo.append((2, keys))
            todo.extend((0, item[key]) for key in reversed(keys))
        else:
            done.append(item)  # a number or null: Python's own equality, 1 == 1.0
    return done[0]


def all_unique(items: Sequence[Any]) -> bool:
    """No two of `items` are equal under jsonschema's `equal` (linear in their total size)."""
    forms = [_canonical(item) for item in items]
    try:
        return len(set(forms)) == len(forms)
    except TypeError:  # an unhashable value no JSON parser returns: compare pairwise
        return all(forms[i] != forms[j] for i in range(len(forms)) for j in range(i))


def _search_any(compiled: Sequence[Pattern], text: str) -> bool:
    return any(pattern.search(text) for pattern in compiled)


def _compiled(patterns: Any) -> tuple[Pattern, ...]:
    return tuple(compile_pattern(pattern) for pattern in patterns)


def _errors(message: str) -> Iterator[ValidationError]:
    yield ValidationError(message)


def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not compile_pattern(patrn).search(instance):
        yield from _errors(f"{instance!r} does not match {patrn!r}")


def pattern_properties(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for source, subschema in value.items():
        compiled = compile_pattern(source)
        for key, item in instance.items():
            if compiled.search(key):
                yield from validator.descend(item, subschema, path=key, schema_path=source)


def _extras_msg(extras: Sequence[Any]) -> tuple[str, str]:
    return ", ".join(repr(extra) for extra in extras), "was" if len(extras) == 1 else "were"


def _additional(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> Iterator[str]:
    properties = schema.get("properties", {})
    compiled = _compiled(schema.get("patternProperties", {}))
    for key in instance:
        if key not in properties and not (compiled and _search_any(compiled, key)):
            yield key


def additional_properties(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    extras = set(_additional(instance, schema))
    if validator.is_type(value, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], value, path=extra)
    elif not value and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            names = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield from _errors(f"{joined} {verb} not match any of the regexes: {names}")
        else:
            names, verb = _extras_msg(sorted(extras, key=str))
            yield from _errors(f"Additional properties are not allowed ({names} {verb} unexpected)")


def unique_items(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if value and validator.is_type(instance, "array") and not all_unique(instance):
        yield from _errors(f"{instance!r} has non-unique elements")


def _is_valid(errors: Iterator[Any]) -> bool:
    return next(errors, None) is None


def _evaluated_keys(validator: Any, instance: Mapping[str, Any], schema: Any, draft2019: bool) -> set[str]:
    """The keys of `instance` some keyword of `schema` evaluates (jsonschema's
    `find_evaluated_property_keys_by_schema` for 2020-12, or its 2019-09 form), as a set."""
    budget.check()
    if validator.is_type(schema, "boolean"):
        return set()
    keys: set[str] = set()

    def follow(resolved: Any) -> None:
        keys.update(_evaluated_keys(validator.evolve(schema=resolved.contents, _resolver=resolved.resolver),
                                    instance, resolved.contents, draft2019))

    if schema.get("$ref") is not None:
        follow(validator._resolver.lookup(schema["$ref"]))
    if draft2019 and "$recursiveRef" in schema:
        from referencing.jsonschema import lookup_recursive_ref

        follow(lookup_recursive_ref(validator._resolver))
    if not draft2019 and schema.get("$dynamicRef") is not None:
        follow(validator._resolver.lookup(schema["$dynamicRef"]))
    if draft2019:
        for keyword in ("properties", "additionalProperties", "unevaluatedProperties"):
            if keyword in schema:
                declared = schema[keyword]
                if validator.is_type(declared, "boolean") and declared:
                    keys.update(instance)
                elif validator.is_type(declared, "object"):
                    keys.update(key for key in declared if key in instance)
    else:
        properties = schema.get("properties")
        if validator.is_type(properties, "object"):
            keys.update(properties.keys() & instance.keys())
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            subschema = schema.get(keyword)
            if subschema is not None:
                keys.update(key for key, item in instance.items()
                            if _is_valid(validator.descend(item, subschema)))
    if "patternProperties" in schema:
        compiled = _compiled(schema["patternProperties"])
        keys.update(key for key in instance if _search_any(compiled, key))
    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            keys |= _evaluated_keys(validator, instance, subschema, draft2019)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if _is_valid(validator.descend(instance, subschema)):
                keys |= _evaluated_keys(validator, instance, subschema, draft2019)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated_keys(validator, instance, schema["if"], draft2019)
            if "then" in schema:
                keys |= _evaluated_keys(validator, instance, schema["then"], draft2019)
        elif "else" in schema:
            keys |= _evaluated_keys(validator, instance, schema["else"], draft2019)
    return keys


def _unevaluated_properties(draft2019: bool) -> Callable[..., Iterator[Any]]:
    def unevaluated_properties(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        evaluated = _evaluated_keys(validator, instance, schema, draft2019)
        unevaluated = []  # a key once per error, as jsonschema's message has it
        for key in instance:
            if key not in evaluated:
                unevaluated += [key for _ in validator.descend(instance[key], value, path=key,
                                                                schema_path=key)]
        if not unevaluated:
            return
        if value is False:
            names, verb = _extras_msg(sorted(unevaluated, key=str))
            yield from _errors(f"Unevaluated properties are not allowed ({names} {verb} unexpected)")
        else:
            names, verb = _extras_msg(unevaluated)
            yield from _errors(f"Unevaluated properties are not valid under the given schema "
                               f"({names} {verb} unevaluated and invalid)")

    return unevaluated_properties


def _checked(keyword: Callable[..., Any]) -> Callable[..., Any]:
    def checked(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        budget.check()
        return keyword(validator, value, instance, schema)

    return checked


@cache
def bounded(cls: Any) -> Any:
    """`cls` (a jsonschema validator class) with every keyword bounded; built once per draft."""
    from jsonschema.validators import Draft201909Validator, extend

    replaced: dict[str, Callable[..., Any]] = {
        "pattern": pattern, "patternProperties": pattern_properties,
        "additionalProperties": additional_properties, "uniqueItems": unique_items,
        "unevaluatedProperties": _unevaluated_properties(cls is Draft201909Validator),
    }
    keywords = {name: replaced.get(name, function) for name, function in cls.VALIDATORS.items()}
    checked = {name: _checked(function) if name in _APPLICATORS else function
               for name, function in keywords.items()}
    return extend(cls, checked)  # type: ignore[no-untyped-call]


def without_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` without its root `$schema`, so jsonschema, which re-picks a validator class
    by `$schema` whenever a reference reaches the root, keeps the bounded class there."""
    return {key: value for key, value in schema.items() if key != "$schema"}


def _is_regex(instance: object) -> bool:
    if isinstance(instance, str):
        compile_pattern(instance)
    return True


@cache
def _meta_validator(cls: Any) -> Any:
    """A bounded validator of `cls`'s meta-schema, over copies of the bundled meta-schemas
    without their `$schema` (which would hand validation back to the stock classes)."""
    from jsonschema import FormatChecker
    from jsonschema.validators import validator_for
    from jsonschema_specifications import REGISTRY
    from referencing import Registry
    from referencing.jsonschema import specification_with

    def stripped(uri: str) -> Any:
        contents = REGISTRY.contents(uri)
        return specification_with(contents["$schema"]).create_resource(without_schema(contents))

    registry = Registry().with_resources((uri, stripped(uri)) for uri in REGISTRY).crawl()
    meta_cls = validator_for(cls.META_SCHEMA, default=cls)
    uri = urldefrag(cls.ID_OF(cls.META_SCHEMA) or "")[0]
    checker = FormatChecker(())
    checker.checkers = {**meta_cls.FORMAT_CHECKER.checkers, "regex": (_is_regex, (PatternError,))}
    return bounded(meta_cls)(registry[uri].contents, format_checker=checker,
                             _resolver=registry.resolver(base_uri=uri))


def meta_problem(cls: Any, schema: Any) -> str | None:
    """Why `schema` is not valid against `cls`'s meta-schema (its first error), or None."""
    try:
        error = next(_meta_validator(cls).iter_errors(schema), None)
    except RecursionError:
        return "nested too deeply to check against its meta-schema"
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return one_line(f"not a valid JSON Schema{' at ' + where if where else ''}: {error.message}")
