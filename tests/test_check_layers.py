"""The check seam's imports run one way, and nothing hides a cycle behind an import in a function.

`recheck/` (what checks and mutation share) imports neither `checks/` nor `mutate/`; `prepared.py`
(the before facts' container) imports no check; checks never import `mutate/`; and the mutation
evaluator knows no check module, only the registry and the `Check` record. Imports under
`if TYPE_CHECKING:` are annotations only and do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "frayproof_audit"


def _imports(path: Path) -> tuple[set[str], list[int]]:
    """The modules `path` imports when it runs, and the lines of imports inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    nested: list[int] = []

    def names(node: ast.Import | ast.ImportFrom) -> set[str]:
        if isinstance(node, ast.Import):
            return {alias.name for alias in node.names}
        assert node.level == 0 and node.module, "relative imports are not used here"
        return {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}

    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= names(node)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nested += [inner.lineno for inner in ast.walk(node)
                       if isinstance(inner, (ast.Import, ast.ImportFrom))]
    return found, nested


def _files(*parts: str) -> list[Path]:
    found: list[Path] = []
    for part in parts:
        path = PACKAGE / part
        found += sorted(path.glob("*.py")) if path.is_dir() else [path]
    return found


SEAM = _files("recheck", "prepared.py", "checks", "engine.py", "contract.py", "mutate/incremental.py",
              "mutate/fastpath.py", "mutate/shape.py", "mutate/edits.py")


@pytest.mark.parametrize("path", SEAM, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_import_inside_a_function(path: Path) -> None:
    assert _imports(path)[1] == [], f"{path.relative_to(ROOT)}: an import inside a function"


@pytest.mark.parametrize("path", _files("recheck", "prepared.py"), ids=lambda path: path.name)
def test_the_shared_layer_imports_neither_checks_nor_mutation(path: Path) -> None:
    wrong = {name for name in _imports(path)[0]
             if name.startswith(("frayproof_audit.checks", "frayproof_audit.mutate"))}
    assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}"


@pytest.mark.parametrize("path", _files("checks"), ids=lambda path: path.name)
def test_checks_never_import_mutation(path: Path) -> None:
    wrong = {name for name in _imports(path)[0] if name.startswith("frayproof_audit.mutate")}
    assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}"


@pytest.mark.parametrize("path", _files("mutate/incremental.py", "mutate/fastpath.py",
                                        "mutate/shape.py", "mutate/edits.py"), ids=lambda path: path.name)
def test_the_evaluator_knows_no_check(path: Path) -> None:
    allowed = {"frayproof_audit.checks", "frayproof_audit.checks.base",
               "frayproof_audit.checks.base.Check", "frayproof_audit.checks.base.CheckSettings"}
    wrong = {name for name in _imports(path)[0]
             if name.startswith("frayproof_audit.checks") and name not in allowed}
    assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}"
