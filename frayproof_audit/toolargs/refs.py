"""What a tool schema reaches, checked before anything is validated: itself, and nothing else.

A tool schema can come from a log record, so it is data: it must never make us fetch a URL or
open a file. `structure_problem` walks every subschema (in the keyword positions jsonschema
applies, so a `$ref` inside a `default` or an argument named `$ref` is no reference), follows
each `$id` the way jsonschema does (through `referencing`), and resolves each `$ref`,
`$dynamicRef` and `$recursiveRef` against a registry that holds only the schema itself and
never retrieves. A reference that leaves the schema (an `http:` URL, a `file:` path, the
bundled meta-schemas) is an input error naming it, whatever `$id` moved the base URI.

The same walk bounds what validation can do. jsonschema validates by recursion, so:

* a cycle of references and in-place applicators (`allOf`, `anyOf`, `oneOf`, `not`, `if`,
  `dependentSchemas`, ...) that never moves into the arguments recurses forever: an input
  error naming the cycle. Recursion through `properties` or `items` (a tree schema) moves one
  level into the arguments each time and is fine;
* subschemas nest at most `MAX_SCHEMA_DEPTH` deep, and a chain of in-place references is at
  most `MAX_REFERENCE_CHAIN` long;
* `$schema` may only be at the root (jsonschema would validate a subschema naming a draft with
  its stock validator, outside every bound of `keywords`);
* every `pattern` and `patternProperties` key must compile (`patterns`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin

from frayproof_audit.toolargs.patterns import pattern_problem
from frayproof_audit.toolargs.text import one_line

MAX_SCHEMA_DEPTH = 32
"""Subschemas inside subschemas, from the root (`properties/x/items` is two levels)."""
MAX_REFERENCE_CHAIN = 32
"""References and in-place applicators followed in a row without moving into the arguments."""

REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
_IN_PLACE_ONE = ("not", "if", "then", "else", "extends")
_IN_PLACE_LIST = ("allOf", "anyOf", "oneOf", "extends", "type", "disallow")
_IN_PLACE_MAP = ("dependentSchemas", "dependencies")
_DESCEND_ONE = ("additionalProperties", "additionalItems", "items", "contains", "propertyNames",
                "unevaluatedItems", "unevaluatedProperties")
_DESCEND_LIST = ("prefixItems", "items")
_DESCEND_MAP = ("properties", "patternProperties")
_CONTAINERS = ("$defs", "definitions")
"""Never applied themselves: their subschemas count only through references."""

IN_PLACE, DESCEND, CONTAINED = "in-place", "descend", "contained"


class StructureProblem(Exception):
    """A schema that refers outside itself, cycles in place, or nests too deep."""


def _pointer(parent: str, *parts: str | int) -> str:
    escaped = (str(part).replace("~", "~0").replace("/", "~1") for part in parts)
    return "/".join((parent, *escaped))


def children(node: Mapping[str, Any], legacy: bool) -> Iterator[tuple[Any, str, str]]:
    """(subschema, pointer suffix, kind) of every subschema `node` holds in a keyword position.

    In drafts 3 to 7 a `$ref` makes jsonschema ignore its siblings, so they are no subschemas.
    """
    if legacy and "$ref" in node:
        return
    for keyword, value in node.items():
        if isinstance(value, Mapping) or type(value) is bool:
            if keyword in _IN_PLACE_ONE:
                yield value, keyword, IN_PLACE
            elif keyword in _DESCEND_ONE:
                yield value, keyword, DESCEND
        if type(value) is list:
            kind = IN_PLACE if keyword in _IN_PLACE_LIST else DESCEND if keyword in _DESCEND_LIST else None
            if kind is not None:
                for index, item in enumerate(value):
                    if isinstance(item, Mapping) or type(item) is bool:
                        yield item, f"{keyword}/{index}", kind
        elif isinstance(value, Mapping):
            kind = (IN_PLACE if keyword in _IN_PLACE_MAP else DESCEND if keyword in _DESCEND_MAP
                    else CONTAINED if keyword in _CONTAINERS else None)
            if kind is not None:
                for name, item in value.items():
                    if isinstance(item, Mapping) or type(item) is bool:
                        yield item, _pointer(keyword, name), kind


@dataclass(slots=True)
class _Walk:
    spec: Any
    legacy: bool
    references_applied: tuple[str, ...]
    meta_problem: Callable[[Any], str | None]
    pointers: dict[int, str] = field(default_factory=dict)
    """Every subschema seen (by identity) → its JSON pointer, in document order."""
    edges: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    pending: deque[tuple[int, str, str, str, str]] = field(default_factory=deque)
    """References to resolve: (node id, keyword, ref, pointer, base URI there)."""
    resources: set[str] = field(default_factory=set)
    """The URIs of the schema's own resources (the root and each nested `$id`)."""

    def structure(self, root: Any, pointer: str, base: str, depth: int) -> None:
        """Record `root` and every subschema under it (iteratively: depth is data here)."""
        stack = [(root, pointer, base, depth)]
        while stack:
            node, here, uri, level = stack.pop()
            if not isinstance(node, Mapping) or id(node) in self.pointers:
                continue
            if level > MAX_SCHEMA_DEPTH:
                raise StructureProblem(f"nested deeper than {MAX_SCHEMA_DEPTH} subschemas "
                                       f"(at {one_line(here, 60)})")
            self.pointers[id(node)] = here
            moved = self.spec.create_resource(node).id()
            if type(moved) is str:
                uri = urljoin(uri, moved)
                self.resources.add(urldefrag(uri)[0])
            if level and "$schema" in node:
                raise StructureProblem(f"$schema inside the schema (at {here}): only the root may name "
                                       "a draft")
            self._patterns(node, here)
            edges = self.edges.setdefault(id(node), [])
            for keyword in self.references_applied:
                ref = node.get(keyword)
                if type(ref) is str:
                    self.pending.append((id(node), keyword, ref, here, uri))
            found = list(children(node, self.legacy))
            edges.extend((id(child), kind) for child, _, kind in found if isinstance(child, Mapping))
            for child, suffix, _ in reversed(found):
                stack.append((child, f"{here}/{suffix}", uri, level + 1))

    def _patterns(self, node: Mapping[str, Any], here: str) -> None:
        problem = pattern_problem(node.get("pattern"))
        if problem is None and isinstance(node.get("patternProperties"), Mapping):
            problem = next(filter(None, map(pattern_problem, node["patternProperties"])), None)
        if problem is not None:
            raise StructureProblem(f"{problem} (at {here})")

    def references(self, registry: Any) -> None:
        """Resolve every pending reference inside the schema; walk what they reach."""
        from referencing.exceptions import Unresolvable

        while self.pending:
            source, keyword, ref, here, base = self.pending.popleft()
            try:
                uri = urljoin(base, ref)
                resolved = registry.resolver(base_uri=base).lookup(ref)
            except ValueError as exc:  # not a URI reference at all (`http://[x`)
                raise StructureProblem(f"{keyword} {ref!r} at {here} is not a URI reference: {exc}") from None
            except Unresolvable:
                if urldefrag(uri)[0] in self.resources:
                    raise StructureProblem(f"{keyword} {ref!r} at {here} does not resolve inside the "
                                           "schema") from None
                raise StructureProblem(f"{keyword} {ref!r} at {here} is {uri}, outside the schema "
                                       "(references are never fetched or opened)") from None
            target = resolved.contents
            if type(target) is bool:
                continue
            if not isinstance(target, Mapping):
                raise StructureProblem(f"{keyword} {ref!r} at {here} points at a value that is no schema "
                                       "(an object or a boolean)")
            if id(target) not in self.pointers:
                # A reference into a value that is no subschema (`#/x-defs/a`): check it as one.
                problem = self.meta_problem(target)
                if problem is not None:
                    raise StructureProblem(f"{keyword} {ref!r} at {here}: {problem}")
                self.structure(target, one_line(uri, 80), urldefrag(uri)[0], 1)
            self.edges[source].append((id(target), IN_PLACE))


def structure_problem(schema: Mapping[str, Any], cls: Any,
                      meta_problem: Callable[[Any], str | None]) -> str | None:
    """Why `schema` (validated by `cls`) cannot be validated within bounds, or None.

    `meta_problem(value)` checks a value against the draft's meta-schema: the schema itself
    (once its depth is known to be bounded), and any value a reference reaches that the walk
    did not see as a subschema (`#/x-defs/a`).
    """
    from referencing import Registry
    from referencing.jsonschema import specification_with

    spec = specification_with(cls.ID_OF(cls.META_SCHEMA))
    root = spec.create_resource(schema)
    found = root.id()
    base: str = found if isinstance(found, str) else ""
    walk = _Walk(spec, _is_legacy(cls), tuple(k for k in REFERENCES if k in cls.VALIDATORS), meta_problem)
    walk.resources.add(urldefrag(base)[0])
    try:
        walk.structure(schema, "#", base, 0)  # first: the meta-schema check recurses on depth
        problem = meta_problem(schema)
        if problem is not None:
            return problem
        walk.references(Registry().with_resource(base, root).crawl())  # retrieves nothing, ever
        _cycles_and_chains(walk)
    except StructureProblem as exc:
        return one_line(str(exc))
    return None


def _is_legacy(cls: Any) -> bool:
    """Drafts 3 to 7, where jsonschema ignores the siblings of a `$ref`."""
    from jsonschema.validators import Draft3Validator, Draft4Validator, Draft6Validator, Draft7Validator

    return cls in (Draft3Validator, Draft4Validator, Draft6Validator, Draft7Validator)


def _cycles_and_chains(walk: _Walk) -> None:
    """An in-place cycle is an error; so is an in-place chain longer than the limit."""
    in_place = {node: [target for target, kind in edges if kind == IN_PLACE]
                for node, edges in walk.edges.items()}
    longest: dict[int, int] = {}
    for start in walk.pointers:
        if start in longest:
            continue
        path: list[int] = [start]
        on_path = {start}
        branches = [iter(in_place.get(start, ()))]
        while branches:
            step = next(branches[-1], None)
            if step is None:
                node = path.pop()
                on_path.discard(node)
                branches.pop()
                longest[node] = 1 + max((longest[t] for t in in_place.get(node, ())), default=0)
                if longest[node] > MAX_REFERENCE_CHAIN + 1:
                    raise StructureProblem(f"a chain of more than {MAX_REFERENCE_CHAIN} references and "
                                           f"in-place subschemas (from {walk.pointers[node]})")
                continue
            if step in on_path:
                cycle = [*path[path.index(step):], step]
                names = " → ".join(walk.pointers.get(node, "?") for node in cycle)
                raise StructureProblem(f"a $ref cycle that never moves into the arguments: {names}")
            if step not in longest and step in walk.pointers:
                path.append(step)
                on_path.add(step)
                branches.append(iter(in_place.get(step, ())))
