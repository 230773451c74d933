"""Contract loading: YAML 1.1 scalars, the strict schema, defaults and errors."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit import Contract, InputError, check, load_contract, validate
from frayproof_audit.contract import CheckSettings, Pin, Retain, default_checks
from tests.helpers import CHECK_KEYS, EXAMPLE_CONTRACT, call, conditions, result, session, user

Writer = Callable[..., Path]


def load(text: str | bytes, write_contract: Writer) -> Contract:
    return load_contract(write_contract(text))


def expected(checks: dict[str, dict[str, Any]] | None = None, **fields: Any) -> Contract:
    """The default contract with some check blocks changed: `enabled`/`severity` keys, any
    other key is one of the check's options."""
    settings = default_checks()
    for key, changes in (checks or {}).items():
        current = settings[key]
        options = {**current.options, **{k: v for k, v in changes.items()
                                         if k not in ("enabled", "severity")}}
        settings[key] = CheckSettings(changes.get("enabled", current.enabled),
                                      changes.get("severity", current.severity), options)
    return Contract(checks=settings, **fields)


def test_defaults() -> None:
    contract = load_contract(None)
    assert contract == Contract()
    frayproofs = ("tool_pairs", "unique_tool_ids", "structure", "pinned_content", "retention")
    assert tuple(contract.checks) == CHECK_KEYS == (
        *frayproofs, "tool_arguments", "tool_call_integrity", "format_notes", "provider_validity")
    for key in CHECK_KEYS:
        # tool_arguments is on but inert without tool schemas; tool_call_integrity is opt-in;
        # format_notes is a warning, inert for openai; provider_validity is opt-in: either way
        # frayproof's verdicts hold for contracts that don't ask for them.
        on = key not in ("tool_call_integrity", "provider_validity")
        severity = "warning" if key == "format_notes" else "error"
        assert (contract.settings(key).enabled, contract.settings(key).severity) == (on, severity)
    assert contract.option("tool_pairs", "allow_trailing_pending_call") is False
    assert contract.option("structure", "system_messages") == "leading_only"
    assert contract.pins == ()
    assert contract.retain == Retain(None, 0, None)
    assert not contract.retain.active


@pytest.mark.parametrize("text", ["{}", "version: 1\n", '{"version": 1, "format": "openai"}'])
def test_empty_mapping_and_json_text_mean_defaults(text: str, write_contract: Writer) -> None:
    assert load(text, write_contract) == Contract()


def test_example_contract(write_contract: Writer) -> None:
    contract = load_contract(EXAMPLE_CONTRACT)
    assert contract.option("tool_pairs", "allow_trailing_pending_call") is True
    assert contract.option("structure", "system_messages") == "leading_only"
    assert contract.pins == (
        Pin(name="system-prompt", role="system", match="exact"),
        Pin(name="no-prod-writes", contains="Never write to production"),
    )


def test_a_contract_object_passes_through_unchanged() -> None:
    contract = expected({"structure": {"system_messages": "anywhere"}})
    assert load_contract(contract) is contract


def test_contracts_are_immutable() -> None:
    contract = load_contract(EXAMPLE_CONTRACT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        contract.pins = ()  # type: ignore[misc]


@pytest.mark.parametrize("source", [{"version": 1}, 3, ["contract.yaml"], b"{}"],
                         ids=["dict", "int", "list", "bytes"])
def test_other_contract_arguments_are_input_errors(source: Any) -> None:
    with pytest.raises(InputError):
        load_contract(source)
    with pytest.raises(InputError):
        validate([user()], source)


def test_missing_contract_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"contract '.*missing\.yaml'"):
        load_contract(tmp_path / "missing.yaml")


def test_bom_contract_disables_only_tool_pairs(write_contract: Writer) -> None:
    contract = load(b"\xef\xbb\xbfchecks:\n  tool_pairs: false\n", write_contract)
    assert contract.settings("tool_pairs").enabled is False
    assert contract.settings("unique_tool_ids").enabled and contract.settings("structure").enabled
    report = validate([user(), call("a"), call("a")], contract)
    assert [v.check for v in report.violations] == ["unique_tool_ids"]


def test_non_utf8_contract(write_contract: Writer) -> None:
    with pytest.raises(InputError, match="UTF-8"):
        load(b"version: 1 # \xff\n", write_contract)


# --- YAML 1.1 scalars ---------------------------------------------------------------------

BOOLEANS = {"yes": True, "Yes": True, "YES": True, "on": True, "On": True, "ON": True,
            "true": True, "True": True, "TRUE": True, "no": False, "No": False, "NO": False,
            "off": False, "Off": False, "OFF": False, "false": False, "False": False}


@pytest.mark.parametrize("spelling, value", BOOLEANS.items(), ids=BOOLEANS.keys())
def test_yaml_11_booleans(spelling: str, value: bool, write_contract: Writer) -> None:
    contract = load(f"checks:\n  structure: {spelling}\n  tool_pairs:\n"
                    f"    allow_trailing_pending_call: {spelling}\n", write_contract)
    assert contract.settings("structure").enabled is value
    assert contract.option("tool_pairs", "allow_trailing_pending_call") is value


@pytest.mark.parametrize("spelling", ["y", "n", "Y", "yesplease", '"true"', "1", "0", "~"])
def test_things_that_are_not_yaml_booleans(spelling: str, write_contract: Writer) -> None:
    with pytest.raises(InputError, match=r"checks\.structure"):
        load(f"checks:\n  structure: {spelling}\n", write_contract)


INTEGERS = {"+2": 2, "0b10": 2, "0x2": 2, "010": 8, "1_0": 10, "1:30": 90, "0": 0}


@pytest.mark.parametrize("spelling, value", INTEGERS.items(), ids=INTEGERS.keys())
def test_yaml_11_integers(spelling: str, value: int, write_contract: Writer) -> None:
    contract = load(f"retain:\n  recent_exchanges: {spelling}\n", write_contract)
    assert contract.retain.recent_exchanges == value


@pytest.mark.parametrize("spelling", ["0o7", "1.0", "2.5", '"2"', "true", "null", "~", "", "-1",
                                      "[2]", "{n: 2}"])
def test_recent_exchanges_must_be_an_integer_at_least_zero(spelling: str,
                                                            write_contract: Writer) -> None:
    with pytest.raises(InputError, match=r"retain\.recent_exchanges"):
        load(f"retain:\n  recent_exchanges: {spelling}\n", write_contract)


@pytest.mark.parametrize("spelling", ["~", "null", "Null", "NULL", ""])
def test_yaml_nulls(spelling: str, write_contract: Writer) -> None:
    contract = load(f"retain:\n  latest_user_message: {spelling}\n  tool_results: {spelling}\n",
                    write_contract)
    assert contract.retain == Retain()


def test_an_unquoted_date_is_not_a_string(write_contract: Writer) -> None:
    with pytest.raises(InputError, match=r"pins\[0\]\.contains"):
        load("pins:\n  - name: day\n    contains: 2024-01-01\n", write_contract)
    contract = load('pins:\n  - name: day\n    contains: "2024-01-01"\n', write_contract)
    assert contract.pins[0].contains == "2024-01-01"


def test_anchors_and_aliases_work(write_contract: Writer) -> None:
    contract = load("checks:\n  tool_pairs: &off {enabled: false}\n  structure: *off\n",
                    write_contract)
    assert not contract.settings("tool_pairs").enabled
    assert not contract.settings("structure").enabled


# --- the schema, key by key ---------------------------------------------------------------

VALID: dict[str, tuple[str, dict[str, Any]]] = {
    "version-binary-one": ("version: 0b1", {}),
    "check-mapping-defaults": ("checks: {tool_pairs: {}}", {}),
    "severity-warning": ("checks: {unique_tool_ids: {severity: warning}}",
                         {"checks": {"unique_tool_ids": {"severity": "warning"}}}),
    "enabled-false-keeps-severity": ("checks: {retention: {enabled: false, severity: warning}}",
                                     {"checks": {"retention": {"enabled": False,
                                                               "severity": "warning"}}}),
    "pending-allowance": ("checks: {tool_pairs: {allow_trailing_pending_call: true}}",
                          {"checks": {"tool_pairs": {"allow_trailing_pending_call": True}}}),
    "system-messages-anywhere": ("checks: {structure: {system_messages: anywhere}}",
                                 {"checks": {"structure": {"system_messages": "anywhere"}}}),
    "system-messages-forbidden": ("checks: {structure: {system_messages: forbidden}}",
                                  {"checks": {"structure": {"system_messages": "forbidden"}}}),
    "all-checks-off": ("checks: {tool_pairs: false, unique_tool_ids: false, structure: false, "
                       "pinned_content: false, retention: false, tool_arguments: false, "
                       "format_notes: false}",
                       {"checks": {key: {"enabled": False} for key in CHECK_KEYS}}),
    "pins-empty": ("pins: []", {"pins": ()}),
    "role-pin": ("pins: [{name: s, role: developer}]",
                 {"pins": (Pin("s", role="developer"),)}),
    "contains-pin-with-match": ("pins: [{name: ' ', contains: ' ', match: exact}]",
                                {"pins": (Pin(" ", contains=" "),)}),
    "pin-null-selector": ("pins: [{name: s, role: null, contains: x, severity: null}]",
                          {"pins": (Pin("s", contains="x"),)}),
    "pin-severity": ("pins: [{name: s, role: tool, severity: warning}]",
                     {"pins": (Pin("s", role="tool", severity="warning"),)}),
    "pin-names-case-sensitive": ("pins: [{name: a, role: user}, {name: A, role: user}]",
                                 {"pins": (Pin("a", role="user"), Pin("A", role="user"))}),
    "pin-order-kept": ("pins: [{name: z, contains: x}, {name: a, role: system}]",
                       {"pins": (Pin("z", contains="x"), Pin("a", role="system"))}),
    "retain-all": ("retain: {latest_user_message: exact, recent_exchanges: 2, tool_results: complete}",
                   {"retain": Retain("exact", 2, "complete")}),
    "retain-empty": ("retain: {}", {"retain": Retain()}),
}


@pytest.mark.parametrize("text, fields", VALID.values(), ids=VALID.keys())
def test_valid_contracts(text: str, fields: dict[str, Any], write_contract: Writer) -> None:
    contract = load(text, write_contract)
    assert contract == expected(**fields)


INVALID: dict[str, tuple[str, str]] = {
    # document
    "empty-file": ("", "mapping"),
    "comment-only": ("# nothing\n", "mapping"),
    "list": ("[]", "mapping"),
    "scalar": ("openai", "mapping"),
    "two-documents": ("--- {}\n--- {}\n", "YAML"),
    "syntax-error": ("checks: [\n", "YAML"),
    "python-tag": ("!!python/object:os.system {}", "YAML"),
    "python-tag-nested": ("checks: !!python/name:os.getcwd ''", "YAML"),
    "unknown-top-key": ("frobnicate: 1", "frobnicate"),
    # version / format
    "version-2": ("version: 2", "version"),
    "version-true": ("version: true", "version"),
    "version-float": ("version: 1.0", "version"),
    "version-string": ('version: "1"', "version"),
    "version-null": ("version: null", "version"),
    "format-unknown": ("format: palm", "format"),
    "format-null": ("format: null", "format"),
    "format-uppercase": ("format: OpenAI", "format"),
    # checks
    "checks-null": ("checks: null", "checks"),
    "checks-list": ("checks: [tool_pairs]", "checks"),
    "unknown-check": ("checks: {toolpairs: true}", "checks.toolpairs"),
    "check-null": ("checks: {structure: null}", "checks.structure"),
    "check-string": ("checks: {structure: 'on'}", "checks.structure"),
    "unknown-check-key": ("checks: {structure: {mode: strict}}", "checks.structure.mode"),
    "enabled-null": ("checks: {tool_pairs: {enabled: null}}", "checks.tool_pairs.enabled"),
    "enabled-int": ("checks: {tool_pairs: {enabled: 1}}", "checks.tool_pairs.enabled"),
    "severity-info": ("checks: {tool_pairs: {severity: info}}", "checks.tool_pairs.severity"),
    "severity-capitalized": ("checks: {tool_pairs: {severity: Error}}", "checks.tool_pairs.severity"),
    "severity-null": ("checks: {tool_pairs: {severity: null}}", "checks.tool_pairs.severity"),
    "allowance-string": ("checks: {tool_pairs: {allow_trailing_pending_call: 'true'}}",
                         "allow_trailing_pending_call"),
    "allowance-null": ("checks: {tool_pairs: {allow_trailing_pending_call: null}}",
                       "allow_trailing_pending_call"),
    "allowance-on-another-check": ("checks: {structure: {allow_trailing_pending_call: true}}",
                                   "checks.structure.allow_trailing_pending_call"),
    "system-messages-bad": ("checks: {structure: {system_messages: late}}",
                            "checks.structure.system_messages"),
    "system-messages-case": ("checks: {structure: {system_messages: Anywhere}}",
                             "checks.structure.system_messages"),
    "system-messages-null": ("checks: {structure: {system_messages: null}}",
                             "checks.structure.system_messages"),
    "system-messages-on-another-check": ("checks: {retention: {system_messages: anywhere}}",
                                         "checks.retention.system_messages"),
    # pins
    "pins-null": ("pins: null", "pins"),
    "pins-mapping": ("pins: {name: a}", "pins"),
    "pin-string": ("pins: [system]", r"pins\[0\]"),
    "pin-null": ("pins: [null]", r"pins\[0\]"),
    "pin-no-selector": ("pins: [{name: a}]", r"pins\[0\]"),
    "pin-both-selectors": ("pins: [{name: a, role: system, contains: x}]", r"pins\[0\]"),
    "pin-null-selectors": ("pins: [{name: a, role: null, contains: null}]", r"pins\[0\]"),
    "pin-no-name": ("pins: [{role: system}]", r"pins\[0\]\.name"),
    "pin-empty-name": ("pins: [{name: '', role: system}]", r"pins\[0\]\.name"),
    "pin-int-name": ("pins: [{name: 1, role: system}]", r"pins\[0\]\.name"),
    "pin-duplicate-names": ("pins: [{name: a, role: system}, {name: a, role: user}]",
                            r"pins\[1\]\.name"),
    "pin-bad-role": ("pins: [{name: a, role: narrator}]", r"pins\[0\]\.role"),
    "pin-role-case": ("pins: [{name: a, role: System}]", r"pins\[0\]\.role"),
    "pin-empty-role": ("pins: [{name: a, role: ''}]", r"pins\[0\]\.role"),
    "pin-empty-contains": ("pins: [{name: a, contains: ''}]", r"pins\[0\]\.contains"),
    "pin-int-contains": ("pins: [{name: a, contains: 42}]", r"pins\[0\]\.contains"),
    "pin-match-regex": ("pins: [{name: a, role: system, match: regex}]", r"pins\[0\]\.match"),
    "pin-match-null": ("pins: [{name: a, role: system, match: null}]", r"pins\[0\]\.match"),
    "pin-match-on-contains": ("pins: [{name: a, contains: x, match: prefix}]", r"pins\[0\]\.match"),
    "pin-severity-info": ("pins: [{name: a, role: system, severity: info}]", r"pins\[0\]\.severity"),
    "pin-unknown-key": ("pins: [{name: a, role: system, regex: x}]", r"pins\[0\]\.regex"),
    # retain
    "retain-null": ("retain: null", "retain"),
    "retain-list": ("retain: [latest_user_message]", "retain"),
    "retain-unknown-key": ("retain: {oldest_user_message: exact}", "retain.oldest_user_message"),
    "latest-true": ("retain: {latest_user_message: true}", "retain.latest_user_message"),
    "latest-contains": ("retain: {latest_user_message: contains}", "retain.latest_user_message"),
    "results-true": ("retain: {tool_results: true}", "retain.tool_results"),
    "results-shortened": ("retain: {tool_results: shortened}", "retain.tool_results"),
    # keys
    "duplicate-top-key": ("version: 1\nversion: 1\n", "duplicate key 'version'"),
    "duplicate-nested-key": ("checks:\n  tool_pairs: true\n  tool_pairs: false\n",
                             "checks: duplicate key 'tool_pairs'"),
    "duplicate-key-in-pin": ("pins:\n  - name: a\n    role: user\n    name: b\n",
                             r"pins\[0\]: duplicate key 'name'"),
    "integer-key": ("1: x", "keys must be strings"),
    "boolean-key": ("true: x", "keys must be strings"),
    "null-key": ("null: x", "keys must be strings"),
    "nested-integer-key": ("checks:\n  tool_pairs:\n    1: x\n", "checks.tool_pairs: mapping keys"),
    "list-key": ("? [a]\n: b\n", "keys must be strings"),
    "merge-key": ("base: &b {enabled: false}\nchecks:\n  tool_pairs:\n    <<: *b\n", "merge keys"),
    "inline-merge-key": ("checks: {tool_pairs: {<<: {enabled: false}}}", "merge keys"),
}


@pytest.mark.parametrize("text, where", INVALID.values(), ids=INVALID.keys())
def test_invalid_contracts(text: str, where: str, write_contract: Writer) -> None:
    path = write_contract(text)
    with pytest.raises(InputError, match=where) as raised:
        load_contract(path)
    # Every contract error names the file (frayproof's B2 leaves some without it).
    assert str(raised.value).startswith(f"Invalid contract '{path}': ")


def test_errors_never_echo_values(write_contract: Writer) -> None:
    for text in ("format: s3cr3t-value\n", "pins: [{name: a, role: s3cr3t-value}]\n",
                 "checks: {structure: {system_messages: s3cr3t-value}}\n"):
        with pytest.raises(InputError) as raised:
            load(text, write_contract)
        assert "s3cr3t-value" not in str(raised.value)


def test_deeply_nested_yaml_is_an_input_error(write_contract: Writer) -> None:
    with pytest.raises(InputError, match="Invalid contract"):
        load("pins: " + "[" * 1200 + "]" * 1200, write_contract)


def test_recursive_alias_is_an_input_error(write_contract: Writer) -> None:
    with pytest.raises(InputError, match="pins"):
        load("pins: &p [*p]\n", write_contract)


# --- how the contract meets validate and check ---------------------------------------------

def test_validate_with_an_enabled_pin_needs_a_before_snapshot(write_contract: Writer) -> None:
    contract = load("pins: [{name: s, role: system}]", write_contract)
    with pytest.raises(InputError, match="before snapshot"):
        validate(session(), contract)


def test_validate_with_disabled_pins_runs(write_contract: Writer) -> None:
    contract = load("checks: {pinned_content: false}\npins: [{name: s, role: system}]",
                    write_contract)
    assert validate(session(), contract).passed


RULES = {
    "latest": "retain: {latest_user_message: exact}",
    "exchanges": "retain: {recent_exchanges: 1}",
    "results": "retain: {tool_results: complete}",
}


@pytest.mark.parametrize("text", RULES.values(), ids=RULES.keys())
def test_validate_with_an_active_retention_rule_needs_a_before_snapshot(
    text: str, write_contract: Writer
) -> None:
    with pytest.raises(InputError, match="before snapshot"):
        validate(session(), load(text, write_contract))
    disabled = load(text + "\nchecks: {retention: false}", write_contract)
    assert validate(session(), disabled).passed


def test_inactive_retention_rules_validate(write_contract: Writer) -> None:
    text = "retain: {latest_user_message: null, recent_exchanges: 0, tool_results: null}"
    assert validate(session(), load(text, write_contract)).passed


def test_validate_checks_the_contract_before_reading_the_snapshot(write_contract: Writer) -> None:
    contract = load("pins: [{name: s, role: system}]", write_contract)
    with pytest.raises(InputError, match="before snapshot"):
        validate("no-such-file.json", contract)


def test_all_rules_on_empty_snapshots(write_contract: Writer) -> None:
    text = ("retain: {latest_user_message: exact, recent_exchanges: 2, tool_results: complete}\n"
            "pins: [{name: s, role: system}, {name: t, contains: x}]\n")
    assert check([], [], load(text, write_contract)).passed


def test_severity_shapes_the_verdict(write_contract: Writer) -> None:
    text = ("checks:\n  tool_pairs: {severity: warning}\n  structure: {severity: warning}\n")
    report = validate([user(), result("z"), user(), {"role": "system", "content": "late"}],
                      load(text, write_contract))
    assert report.passed
    assert (report.errors, report.warnings) == (0, 2)
    assert conditions(report) == ["TP-ORPHAN", "ST-INSTR-LATE"]
