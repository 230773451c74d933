"""The YAML context contract: safe, strict loading into a frozen `Contract`.

YAML 1.1 scalars are kept exactly as PyYAML's safe loader reads them (so `yes` is a boolean),
because frayproof users' contracts must mean the same thing here. Every error names the file and
the path of the offending key; values are never echoed.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import sys
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import yaml

import frayproof_audit.checks as registry
from frayproof_audit.bounds import MAX_COUNT
from frayproof_audit.checks.base import SEVERITIES, Check, CheckSettings, OptionProblem
from frayproof_audit.equivalence import COMPARISONS, EXACT
from frayproof_audit.errors import InputError
from frayproof_audit.files import UnreadableFile, read_regular_file
from frayproof_audit.formats import FORMATS
from frayproof_audit.jsonio import canonical, is_unicode_text
from frayproof_audit.model import ROLES
from frayproof_audit.toolargs.schemas import (
    ToolSchema,
    ToolSchemaError,
    parse_tools,
    read_tools_file,
    resolve_tools_path,
)


@dataclass(frozen=True, slots=True)
class Pin:
    """Content that must survive: every message of `role`, or the literal text `contains`.
    `match` is how kept content is recognised: `exact` (frayproof's identity) or `equivalent`
    (the same message re-serialized, see `equivalence`)."""

    name: str
    role: str | None = None
    contains: str | None = None
    match: str = "exact"
    severity: str | None = None


@dataclass(frozen=True, slots=True)
class Retain:
    """The retention rules. `latest_user_message` is the comparison of that rule (`exact` or
    `equivalent`) or None when off; `compare` is the comparison of `recent_exchanges` and
    `tool_results`."""

    latest_user_message: str | None = None
    recent_exchanges: int = 0
    tool_results: str | None = None
    compare: str = EXACT

    @property
    def active(self) -> bool:
        return (
            self.latest_user_message is not None
            or self.recent_exchanges > 0
            or self.tool_results is not None
        )


def default_checks() -> dict[str, CheckSettings]:
    """Every registered check with its defaults (on or off, its severity, its options' defaults)."""
    return {check.key: check.defaults() for check in registry.CHECKS}


@dataclass(frozen=True, slots=True)
class Contract:
    """A parsed context contract. Build one with `load_contract` / `parse_contract`.

    `checks` maps every registered check's contract key to its settings, defaults filled in,
    so `contract.settings(key)` never misses.
    """

    version: int = 1
    format: str = "openai"
    checks: dict[str, CheckSettings] = field(default_factory=default_checks)
    pins: tuple[Pin, ...] = ()
    retain: Retain = Retain()
    tools: tuple[ToolSchema, ...] = ()
    """Tool schemas for the tool-argument checks and operators (none: they stay inactive)."""
    source_text: str = field(default="", compare=False, repr=False)

    def settings(self, key: str) -> CheckSettings:
        """The settings of the check registered under contract key `key`."""
        return self.checks[key]

    def option(self, key: str, name: str) -> Any:
        return self.checks[key].options[name]

    @property
    def sha256(self) -> str:
        """Hash of the contract's source text ("" hashed for the built-in defaults)."""
        return hashlib.sha256(self.source_text.encode("utf-8")).hexdigest()

    @property
    def fingerprint(self) -> str:
        """Hash of what the contract *means*: its normalised form, defaults filled in.

        Two contracts that differ only in comments, key order, spacing or spelled-out defaults
        share a fingerprint, so runs made with them may be compared; any change of meaning (a
        check toggled, a severity, a pin, a retention rule, a tool schema) gives a new one.
        Disabled checks are left out, so a later release adding an opt-in check keeps every
        existing fingerprint. A tool schema's integer beyond 64 bits is hashed exactly
        (`canonical`: orjson's bytes for every other contract, as before).
        """
        return hashlib.sha256(canonical(self.normalised())).hexdigest()

    def normalised(self) -> dict[str, Any]:
        """The contract as plain JSON values, every default explicit (what `fingerprint` hashes)."""
        return {
            "version": self.version,
            "format": self.format,
            "checks": {
                key: {"severity": settings.severity, "options": dict(settings.options)}
                for key, settings in sorted(self.checks.items())
                if settings.enabled
            },
            "pins": [asdict(pin) for pin in self.pins],
            "retain": _retain_normalised(self.retain),
            "tools": [{"name": tool.name, "parameters": tool.parameters} for tool in self.tools],
        }


def _retain_normalised(retain: Retain) -> dict[str, Any]:
    """`compare` is left out at its default, so contracts written before it existed keep
    their fingerprints."""
    form = asdict(retain)
    if retain.compare == EXACT:
        del form["compare"]
    return form


class ContractError(InputError):
    """The contract file is unreadable or does not follow the schema."""


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader; `_check_keys` vets the composed node tree before construction."""


_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _check_keys(root: yaml.Node) -> None:
    """Refuse merge keys, non-string keys and duplicate keys at any depth, naming the key path.

    Done on nodes, not on built values, so the error can say where the key is. Aliased nodes
    are visited once, which also keeps alias-heavy documents linear.
    """
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    visited: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            where = f"{path}: " if path else ""
            seen: set[str] = set()
            for key_node, value_node in node.value:
                line = key_node.start_mark.line + 1
                if key_node.tag == _MERGE_TAG:
                    raise _Schema(f"{where}merge keys (<<) are not allowed (line {line})")
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR_TAG:
                    raise _Schema(f"{where}mapping keys must be strings (line {line})")
                key = str(key_node.value)
                if key in seen:
                    raise _Schema(f"{where}duplicate key {key!r} (line {line})")
                seen.add(key)
                stack.append((value_node, f"{path}.{key}" if path else key))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, f"{path}[{index}]") for index, item in enumerate(node.value))


def _parse_yaml(text: str) -> Any:
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_keys(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


class YamlProblem(ValueError):
    """Strict YAML text that cannot be read; the message is the reason, without the file."""


def parse_strict_yaml(text: str) -> Any:
    """The document of strict YAML text (the contract's rules: safe loader, no merge keys, no
    duplicate or non-string keys), or `YamlProblem` saying why not. Shared by the contract and
    the audit `--config` file, so both refuse the same things with the same words."""
    try:
        return _parse_yaml(text)
    except _Schema as exc:
        raise YamlProblem(str(exc)) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(f"YAML error: {_yaml_reason(exc)}") from None
    except RecursionError:
        raise YamlProblem("nested too deeply") from None
    except ValueError as exc:  # int() refuses literals over sys.get_int_max_str_digits()
        if "integer string conversion" in str(exc):
            limit = sys.get_int_max_str_digits()
            raise YamlProblem(f"an integer has more than {limit} digits") from None
        raise YamlProblem(f"unreadable value: {exc}") from None


def _yaml_reason(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"{exc.problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


class _Schema(Exception):
    """A schema problem; the message starts with the key path where there is one."""


def load_contract(source: Any = None) -> Contract:
    """Resolve a contract argument: None → defaults, a `Contract`, or a YAML file path."""
    if source is None:
        return Contract()
    if isinstance(source, Contract):
        return source
    if isinstance(source, str | os.PathLike):
        return _load_file(os.fspath(source))
    raise ContractError("A contract must be None, a Contract, or a path to a YAML file")


MAX_CONTRACT_BYTES = 1024 * 1024
"""A contract is a few lines of YAML; anything larger is a mistake (`--contract /dev/zero`)."""


def _load_file(path: str) -> Contract:
    try:
        data = read_regular_file(path, MAX_CONTRACT_BYTES)
    except UnreadableFile as exc:
        raise ContractError(f"Cannot read contract '{path}': {exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ContractError(f"Invalid contract '{path}': not valid UTF-8") from None
    return parse_contract(text, path, base_dir=os.path.dirname(os.path.abspath(path)))


def parse_contract(text: str, origin: str = "<string>", *, base_dir: str | None = None) -> Contract:
    """Parse contract YAML text; `origin` names it in error messages. A relative `tools:` path
    is read from `base_dir` (the contract file's folder), else from the working directory."""
    try:
        document = parse_strict_yaml(text)
    except YamlProblem as exc:
        raise ContractError(f"Invalid contract '{origin}': {exc}") from None
    problems = _Problems()
    contract = _build(document, text, problems, base_dir)
    if problems:
        raise ContractError(f"Invalid contract '{origin}': {problems}")
    return contract


class _Problems:
    """Every schema problem of one contract, reported together (`loc: reason; …`)."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, message: str) -> None:
        self.items.append(message)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __str__(self) -> str:
        return "; ".join(self.items)


def _build(document: Any, text: str, problems: _Problems, base_dir: str | None = None) -> Contract:
    if type(document) is not dict:
        problems.add("the document must be a mapping of contract keys")
        return Contract()
    _no_unknown(document, ("version", "format", "checks", "pins", "retain", "tools"), "", problems)
    version = document.get("version", 1)
    if type(version) is not int or version != 1:
        problems.add("version: must be the integer 1")
    fmt = document.get("format", "openai")
    if type(fmt) is not str or fmt not in FORMATS:
        problems.add(f"format: must be {_one_of(tuple(FORMATS))}")
        fmt = "openai"
    checks = document.get("checks", {})
    if type(checks) is not dict:
        problems.add("checks: must be a mapping")
        checks = {}
    registered = registry.CHECKS
    _no_unknown(checks, tuple(check.key for check in registered), "checks", problems)
    return Contract(
        version=1,
        format=fmt,
        checks={check.key: _check(check, checks, problems) for check in registered},
        pins=_pins(document.get("pins", []), problems),
        retain=_retain(document.get("retain", {}), problems),
        tools=_tools(document.get("tools", []), base_dir, problems),
        source_text=text,
    )


def _one_of(names: tuple[str, ...]) -> str:
    quoted = [f"'{name}'" for name in names]
    return quoted[0] if len(quoted) == 1 else f"one of {', '.join(quoted)}"


def _did_you_mean(value: Any, allowed: tuple[str, ...]) -> str:
    """`; did you mean 'equivalent'?` for a string close to an allowed one, else ""."""
    if type(value) is not str:
        return ""
    hint = difflib.get_close_matches(value, allowed, n=1, cutoff=0.6)
    return f"; did you mean {hint[0]!r}?" if hint else ""


def _no_unknown(mapping: dict[str, Any], allowed: tuple[str, ...], where: str,
                problems: _Problems) -> None:
    for key in mapping:
        if key not in allowed:
            path = f"{where}.{key}" if where else key
            hint = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
            suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
            problems.add(f"{path}: unknown key (allowed: {', '.join(allowed)}){suggestion}")


def _check(check: Check, checks: dict[str, Any], problems: _Problems) -> CheckSettings:
    """One `checks.<key>` block: a boolean shorthand, or enabled, severity and the check's options."""
    where = f"checks.{check.key}"
    defaults = check.defaults()
    if check.key not in checks:
        return defaults
    block = checks[check.key]
    if type(block) is bool:
        return replace(defaults, enabled=block)
    if type(block) is not dict:
        problems.add(f"{where}: must be a boolean or a mapping")
        return defaults
    _no_unknown(block, ("enabled", "severity", *(option.name for option in check.options)), where,
                problems)
    enabled = block.get("enabled", True)
    if type(enabled) is not bool:
        problems.add(f"{where}.enabled: must be a boolean")
        enabled = True
    severity = block.get("severity", defaults.severity)
    if severity not in SEVERITIES or type(severity) is not str:
        problems.add(f"{where}.severity: must be one of error, warning")
        severity = defaults.severity
    options = dict(defaults.options)
    for option in check.options:
        if option.name in block:
            try:
                options[option.name] = option.parse(block[option.name])
            except OptionProblem as exc:
                problems.add(f"{where}.{option.name}: {exc}")
    return CheckSettings(enabled=enabled, severity=severity, options=options)


def _pins(raw: Any, problems: _Problems) -> tuple[Pin, ...]:
    if type(raw) is not list:
        problems.add("pins: must be a list of pins")
        return ()
    pins: list[Pin] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        pin = _pin(item, f"pins[{index}]", seen, problems)
        if pin is not None:
            pins.append(pin)
    return tuple(pins)


def _pin(item: Any, where: str, seen: set[str], problems: _Problems) -> Pin | None:
    if type(item) is not dict:
        problems.add(f"{where}: must be a mapping")
        return None
    before = len(problems.items)
    _no_unknown(item, ("name", "role", "contains", "match", "severity"), where, problems)
    name = item.get("name")
    if type(name) is not str or not name:
        problems.add(f"{where}.name: must be a non-empty string")
    elif not is_unicode_text(name):
        problems.add(f"{where}.name: must be valid Unicode text (it holds a lone surrogate)")
    elif name in seen:
        problems.add(f"{where}.name: duplicate pin name")
    else:
        seen.add(name)
    role, contains = item.get("role"), item.get("contains")
    if (role is None) == (contains is None):
        problems.add(f"{where}: set exactly one of role or contains")
    if role is not None and (type(role) is not str or role not in ROLES):
        problems.add(f"{where}.role: must be one of {', '.join(sorted(ROLES))}")
    if contains is not None and (type(contains) is not str or not contains):
        problems.add(f"{where}.contains: must be a non-empty string")
    elif contains is not None and not is_unicode_text(contains):
        problems.add(f"{where}.contains: must be valid Unicode text (it holds a lone surrogate)")
    match = item.get("match", EXACT)
    if type(match) is not str or match not in COMPARISONS:
        problems.add(f"{where}.match: must be {_one_of(COMPARISONS)}{_did_you_mean(match, COMPARISONS)}")
    severity = item.get("severity")
    if severity is not None and (type(severity) is not str or severity not in SEVERITIES):
        problems.add(f"{where}.severity: must be error, warning or null")
    if len(problems.items) > before:
        return None
    return Pin(name=str(name), role=role, contains=contains, match=match, severity=severity)



def _tools(raw: Any, base_dir: str | None, problems: _Problems) -> tuple[ToolSchema, ...]:
    """`tools:`: inline tool definitions, or the path of a JSON file holding them (a list, or
    `{"tools": [...]}`). The file is read now, so a broken schema fails the contract."""
    where = "tools"
    if type(raw) is str:
        path = resolve_tools_path(raw, base_dir)
        where = f"tools ({raw})"
        try:
            raw = read_tools_file(path)
        except ToolSchemaError as exc:
            problems.add(f"tools: {exc}")
            return ()
    elif type(raw) is not list:
        problems.add("tools: must be a list of tool definitions or the path of a JSON file")
        return ()
    tools, found = parse_tools(raw)
    for problem in found:
        problems.add(f"{where}{'' if problem.startswith('[') else ': '}{problem}")
    return tools if not found else ()


def _retain(raw: Any, problems: _Problems) -> Retain:
    if type(raw) is not dict:
        problems.add("retain: must be a mapping")
        return Retain()
    _no_unknown(raw, ("latest_user_message", "recent_exchanges", "tool_results", "compare"),
                "retain", problems)
    compare = raw.get("compare", EXACT)
    compare_given = "compare" in raw
    if type(compare) is not str or compare not in COMPARISONS:
        problems.add(f"retain.compare: must be {_one_of(COMPARISONS)}"
                     f"{_did_you_mean(compare, COMPARISONS)}")
        compare, compare_given = EXACT, False
    latest = raw.get("latest_user_message")
    if latest is not None and (type(latest) is not str or latest not in COMPARISONS):
        problems.add(f"retain.latest_user_message: must be {_one_of(COMPARISONS)} or null"
                     f"{_did_you_mean(latest, COMPARISONS)}")
        latest = None
    elif latest is not None and compare_given and latest != compare:
        problems.add(f"retain.latest_user_message: {latest!r} contradicts retain.compare: "
                     f"{compare!r} (write latest_user_message: {compare}, or leave compare out "
                     "to compare only the latest user message this way)")
    window = raw.get("recent_exchanges", 0)
    if type(window) is not int or not 0 <= window <= MAX_COUNT:
        problems.add(f"retain.recent_exchanges: must be an integer from 0 to {MAX_COUNT}")
        window = 0
    results = raw.get("tool_results")
    if results is not None and (type(results) is not str or results != "complete"):
        problems.add("retain.tool_results: must be 'complete' or null")
        results = None
    return Retain(latest_user_message=latest, recent_exchanges=window, tool_results=results,
                  compare=compare)
