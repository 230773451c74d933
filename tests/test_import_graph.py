"""No import cycle anywhere in the package, at run time: the graph is read from the code with
every import counted, those inside functions included (so none can hide a cycle), and a fresh
interpreter then imports every module in dependency order and shows that each loads exactly
what the graph says it may, so the graph read from the code is the one Python follows.

An edge is what an import statement names: a module, or the package whose attribute
`from package import name` takes. A module's own parent packages are not edges: Python starts
them before the module, so they can never be waiting on it. Imports under
`if TYPE_CHECKING:` are annotations only and do not count.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

from tests.helpers import REPO

PACKAGE = REPO / "frayproof_audit"


def _name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _under_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _in_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return True
    return False


def imports(path: Path, *, in_functions: bool) -> set[str]:
    """The package modules `path` names in its import statements (those run when the module is
    imported; with `in_functions`, those inside functions too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or _under_type_checking(node, parents):
            continue
        if not in_functions and _in_function(node, parents):
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            assert node.level == 0, f"{path}: relative imports are not used in the package"
            base = node.module or ""
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                     for alias in node.names]
        found.update(name for name in names if name in MODULES)
    if path.is_relative_to(REPO):
        found.discard(_name(path))
    return found


def graph(*, in_functions: bool) -> dict[str, set[str]]:
    return {name: imports(path, in_functions=in_functions) for name, path in MODULES.items()}


def test_the_package_has_no_import_cycle_even_behind_imports_in_functions() -> None:
    try:
        order = list(TopologicalSorter(graph(in_functions=True)).static_order())
    except CycleError as exc:
        # graphlib lists each module before the ones that import it: reversed, each imports the next
        raise AssertionError(f"import cycle: {' imports '.join(reversed(exc.args[1]))}") from None
    assert set(order) == set(MODULES) and len(MODULES) > 150


def test_the_graph_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    """The reading itself: two modules that import each other, one of them inside a function."""
    first = tmp_path / "first.py"
    first.write_text("from frayproof_audit.engine import check\n", encoding="utf-8")
    assert "frayproof_audit.engine" in imports(first, in_functions=False)
    hidden = tmp_path / "hidden.py"
    hidden.write_text("def f():\n    from frayproof_audit import report\n", encoding="utf-8")
    assert imports(hidden, in_functions=False) == set()
    assert imports(hidden, in_functions=True) == {"frayproof_audit.report"}
    typed = tmp_path / "typed.py"
    typed.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                     "    from frayproof_audit import report\n", encoding="utf-8")
    assert imports(typed, in_functions=True) == set()


_IMPORT_IN_ORDER = """
import importlib, json, sys
order = json.loads(sys.stdin.read())
loaded = {}
for name in order:
    before = set(sys.modules)
    importlib.import_module(name)
    loaded[name] = sorted(m for m in set(sys.modules) - before if m.startswith("frayproof_audit"))
print(json.dumps(loaded))
"""


def test_a_fresh_interpreter_imports_every_module_in_dependency_order_as_the_graph_says() -> None:
    """Leaves first, each module loads nothing of the package beyond what the graph reaches
    from it (its parent packages and what its module-level imports name, transitively): the
    graph above is the one Python follows, so, being acyclic, any module imports on its own."""
    top_level = graph(in_functions=False)
    # `__main__` runs the command line when imported: it is the entry point, not a module to load.
    order = [name for name in TopologicalSorter(top_level).static_order()
             if name != "frayproof_audit.__main__"]
    done = subprocess.run([sys.executable, "-c", _IMPORT_IN_ORDER], input=json.dumps(order),
                          capture_output=True, text=True, timeout=300, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded: dict[str, list[str]] = json.loads(done.stdout)
    for name in order:
        surprise = set(loaded[name]) - _reached(name, top_level)
        assert not surprise, f"importing {name} also loaded {sorted(surprise)}"


def _reached(name: str, edges: dict[str, set[str]]) -> set[str]:
    """What importing `name` may load: itself, its parent packages (started first) and, from
    each, what its imports name, transitively."""
    reached: set[str] = set()
    pending = [name]
    while pending:
        module = pending.pop()
        if module in reached:
            continue
        reached.add(module)
        parents = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        pending += [*parents, *edges[module]]
    return reached
