"""Tool schemas compiled once: a jsonschema validator and the top-level facts of each tool.

Compiling (choosing the draft, checking the schema, building the validator) costs far more than
validating one call, and a contract's tools are the same for every pair and every mutant, so a
`ToolSet` is built once per tools tuple and kept (`tool_set`). The tuple is the cache key by
identity: `ToolSchema.parameters` is a dict and cannot be hashed, and callers that build tools
per record (the corpus worker) reuse one tuple per distinct tools list.

The validator is jsonschema's class for the schema's draft with every keyword bounded
(`keywords.bounded`), built over an explicit registry that holds nothing and retrieves nothing:
every reference was resolved inside the schema when it was loaded (`refs`), and without a
registry jsonschema would still try `urlopen` on anything it could not resolve.

jsonschema is imported on first use, so contracts without tools never pay for it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from frayproof_audit.toolargs.patterns import Pattern, compile_pattern
from frayproof_audit.toolargs.quick import Proof, prove_valid

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

    The schema must be valid against its draft's meta-schema, resolve every reference inside
    itself, hold no `$ref` cycle that never moves into the arguments, nest within the limits
    and have patterns that compile (`refs.structure_problem`): a broken schema is an input
    error when it is loaded, not a finding on every call, and never a reason to fetch.
    """
    from frayproof_audit.toolargs.keywords import meta_problem
    from frayproof_audit.toolargs.refs import structure_problem

    cls = _validator_class(schema)
    if cls is None:
        return "unknown $schema (use a JSON Schema draft jsonschema knows, or leave it out)"
    return structure_problem(schema, cls, partial(meta_problem, cls))


def _patterns(schema: Mapping[str, Any]) -> tuple[Pattern, ...]:
    patterns = schema.get("patternProperties")
    if not isinstance(patterns, Mapping):
        return ()
    return tuple(compile_pattern(pattern) for pattern in patterns)


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
    patterns: tuple[Pattern, ...]
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
    from referencing import Registry

    from frayproof_audit.toolargs.keywords import bounded, without_schema

    schema = tool.parameters
    cls = _validator_class(schema)
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    additional = schema.get("additionalProperties", None)
    required = schema.get("required")
    return CompiledTool(
        name=tool.name,
        validator=bounded(cls)(without_schema(schema), registry=Registry()),
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
