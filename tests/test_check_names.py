"""One name per thing: a check's names come from its registry record, and are written down once.

- docs/contract.md's table of check names is the registry's (`scripts/gen_check_table.py`).
- A check's module is named by its contract key, and its findings' name is the key too, but
  for frayproof's one alias (`tool_pair_integrity`, key `tool_pairs`), which the table shows.
- Which codes a transcript repair fixes is declared on the conditions (`Condition.repairable`,
  the provider rules' `Rule.repairable`): the same codes the lists they replace named.
- `Loaded` and the views are imported from `frayproof_audit.loaded` only.
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType

from frayproof_audit import snapshot
from frayproof_audit.checks import CHECKS, repairable_codes
from frayproof_audit.transcript.defects import PAIRING_CODES
from tests.helpers import load_module

ROOT = Path(__file__).resolve().parent.parent
CONTRACT_DOC = ROOT / "docs" / "contract.md"


def _generator() -> ModuleType:
    return load_module(ROOT / "scripts" / "gen_check_table.py")


GENERATOR = _generator()


def test_the_check_names_table_is_the_registry() -> None:
    current = CONTRACT_DOC.read_text(encoding="utf-8")
    assert GENERATOR.render(current) == current, (
        "docs/contract.md's check names no longer match the registry (a check was registered, "
        "renamed or given new codes): run `make docs` (python scripts/gen_check_table.py)")
    for check in CHECKS:
        assert f"| `{check.name}` | `{check.key}` | `checks/{check.key}.py` |" in current


def test_a_check_module_is_named_by_its_contract_key() -> None:
    for check in CHECKS:
        assert check.find.__module__ == f"frayproof_audit.checks.{check.key}", check.name
        assert (ROOT / "tests" / "cases" / f"{check.name}.yaml").is_file(), check.name


def test_the_only_alias_is_frayproofs() -> None:
    """Findings and contract keys are promises to users and equal frayproof's: the one check
    whose finding name differs from its key is frayproof's own; a new check uses one word."""
    assert [(check.name, check.key) for check in CHECKS if check.name != check.key] == [
        ("tool_pair_integrity", "tool_pairs")]


def test_the_repairable_codes_are_those_the_lists_named() -> None:
    """What the code lists of `corpus/repair_out.py` and `transcript/defects.py` said before the
    conditions declared it (behaviour unchanged)."""
    pairing = {"PV-CHAT-TOOL-ORPHAN", "PV-CHAT-TOOL-UNKNOWN-ID", "PV-CHAT-CALL-UNANSWERED",
               "PV-ANTH-RESULT-ORPHAN", "PV-ANTH-USE-UNANSWERED", "PV-RESP-CALL-UNANSWERED",
               "PV-RESP-OUTPUT-ORPHAN", "PV-GEM-RESPONSE-COUNT"}
    assert pairing == PAIRING_CODES
    assert repairable_codes(CHECKS) == {"TP-ORPHAN", "TP-UNANSWERED", "UID-MULTI", "ST-TOOL-OUTSIDE",
                                        "ST-TOOL-NOID", "ST-EMPTY-ASSISTANT"} | pairing


LOADED_NAMES = {"Loaded", "MessageView", "CallView", "KeySpan"}


def test_loaded_is_imported_from_one_place() -> None:
    assert not LOADED_NAMES & set(snapshot.__all__)
    wrong: list[str] = []
    for folder in ("frayproof_audit", "tests", "benchmarks", "sessiongen", "scripts", "examples"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if _elsewhere(node):
                    wrong.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}")
    assert not wrong, f"import Loaded and its views from frayproof_audit.loaded: {wrong}"


def _elsewhere(node: ast.AST) -> bool:
    """An import of a `loaded` name from another module, or `snapshot.Loaded`."""
    if isinstance(node, ast.ImportFrom):
        return (bool(node.module) and str(node.module).startswith("frayproof_audit")
                and node.module != "frayproof_audit.loaded"
                and bool(LOADED_NAMES & {alias.name for alias in node.names}))
    return (isinstance(node, ast.Attribute) and node.attr in LOADED_NAMES
            and isinstance(node.value, ast.Name) and node.value.id == "snapshot")
