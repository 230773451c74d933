"""Tool schemas compiled once: a jsonschema validator and the top-level facts of each tool.

Compiling (choosing the draft, checking the schema, building the validator) costs far more than
validating one call, and a contract's tools are the same for every pair and every mutant, so a
`ToolSet` is built once per tools tuple and kept (`tool_set`). The tuple is the cache key by
identity: `ToolSchema.parameters` is a dict and cannot be hashed, and callers that build tools
per record (the corpus worker) reuse one tuple per distinct tools list.

jsonschema is imported on first use, so contracts without tools never pay for it.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from frayproof_audit.toolargs.quick import Proof, prove_valid
from frayproof_audit.toolargs.text import one_line

if TYPE_CHECKING:
    from frayproof_audit.toolargs.schemas import ToolSchema

ALLOWED, FORBIDDEN, UNSET = "allowed", "forbidden", "unset"
_CACHE_SIZE = 64
_CACHE: OrderedDict[int, tuple[tuple[ToolSchema, ...], ToolSet]] = OrderedDict()


def _validator_class(schema: Mapping[str, Any]) -> Any:
    """The draft the schema names in `$schema`, else 2020-12; None for an unknown `$schema`."""
    from jsonschema.validators import Draft202012Validator, validator_for

    if "$schema" not in schema:
        return Draft202012Validator
    return validator_for(schema, default=None)  # type: ignore[arg-type]


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Why `schema` cannot be used to validate arguments, or None.

    The schema must be valid against its draft's meta-schema, and every local `$ref` must
    resolve: a broken schema is an input error when it is loaded, not a finding on every call.
    """
    from jsonschema.exceptions import SchemaError

    cls = _validator_class(schema)
    if cls is None:
        return "unknown $schema (use a JSON Schema draft jsonschema knows, or leave it out)"
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path)
        return one_line(f"not a valid JSON Schema{' at ' + where if where else ''}: {exc.message}")
    try:
        _patterns(schema)
    except re.error as exc:
        return one_line(f"patternProperties: not a valid pattern: {exc}")
    return _ref_problem(schema)


def _ref_problem(schema: Mapping[str, Any]) -> str | None:
    """Resolve every `$ref` against the schema itself (no network: remote references fail).

    Skipped when a nested `$id` changes the base URI, where a relative reference resolves
    against that subschema; validation still reports an unresolvable reference then.
    """
    refs: list[str] = []
    nested_id = False
    stack: list[tuple[Any, bool]] = [(schema, True)]
    while stack:
        item, root = stack.pop()
        if isinstance(item, Mapping):
            if not root and isinstance(item.get("$id", item.get("id")), str):
                nested_id = True
            ref = item.get("$ref")
            if isinstance(ref, str):
                refs.append(ref)
            stack.extend((value, False) for value in item.values())
        elif isinstance(item, list):
            stack.extend((value, False) for value in item)
    if not refs or nested_id:
        return None
    from referencing import Registry
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import specification_with

    cls = _validator_class(schema)
    resource = specification_with(cls.ID_OF(cls.META_SCHEMA)).create_resource(schema)
    base = resource.id() or ""
    resolver = Registry().with_resource(base, resource).resolver(base_uri=base)
    for ref in refs:
        try:
            resolver.lookup(ref)
        except Unresolvable:
            return one_line(f"$ref {ref!r} does not resolve inside the schema")
    return None


def _patterns(schema: Mapping[str, Any]) -> tuple[re.Pattern[str], ...]:
    patterns = schema.get("patternProperties")
    if not isinstance(patterns, Mapping):
        return ()
    return tuple(re.compile(pattern) for pattern in patterns)


def _types(schema: Any) -> tuple[str, ...]:
    """A property's declared `type`, as a tuple of names (`["string", "null"]` is a union)."""
    if not isinstance(schema, Mapping):
        return ()
    declared = schema.get("type")
    if isinstance(declared, str):
        return (declared,)
    if isinstance(declared, list) and all(isinstance(name, str) for name in declared):
        return tuple(declared)
    return ()


@dataclass(frozen=True, slots=True)
class CompiledTool:
    """One tool's validator and the facts the top-level rules read."""

    name: str
    validator: Any
    properties: frozenset[str]
    patterns: tuple[re.Pattern[str], ...]
    additional: str
    """`allowed` (additionalProperties true or a schema), `forbidden` (false) or `unset`."""
    required: tuple[str, ...]
    types: Mapping[str, tuple[str, ...]]
    proof: Proof | None = None
    """Proves a valid instance valid without jsonschema (`quick.prove_valid`); None when the
    schema goes beyond what proofs cover, and then every call is validated by jsonschema."""

    def declares(self, key: str) -> bool:
        return key in self.properties or any(pattern.search(key) for pattern in self.patterns)


def compile_tool(tool: ToolSchema) -> CompiledTool:
    from jsonschema.validators import Draft202012Validator

    schema = tool.parameters
    cls = _validator_class(schema)
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    additional = schema.get("additionalProperties", None)
    required = schema.get("required")
    return CompiledTool(
        name=tool.name,
        validator=cls(schema),
        properties=frozenset(properties),
        patterns=_patterns(schema),
        additional=UNSET if additional is None else FORBIDDEN if additional is False else ALLOWED,
        required=tuple(name for name in required if isinstance(name, str))
        if isinstance(required, list) else (),
        types={key: types for key, value in properties.items() if (types := _types(value))},
        proof=prove_valid(schema, cls is Draft202012Validator),
    )


@dataclass(slots=True, eq=False)
class ToolSet:
    """Compiled tools by name, and the verdicts already reached (see `rules.judge`)."""

    tools: dict[str, CompiledTool]
    verdicts: dict[Any, Any] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.tools)


def tool_set(tools: tuple[ToolSchema, ...]) -> ToolSet:
    """The compiled `ToolSet` of `tools`, built once per tuple and kept (LRU of 64 tuples)."""
    key = id(tools)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is tools:
        _CACHE.move_to_end(key)
        return hit[1]
    built = ToolSet({tool.name: compile_tool(tool) for tool in tools})
    _CACHE[key] = (tools, built)  # holding `tools` keeps its id from being reused
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return built
