"""`corpus/` reads as rooms: no import cycle among its modules (imports inside functions counted,
so none can hide one), no module named like another of the package, room packages that import
nothing (a worker pays only for the modules it uses)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import REPO

PACKAGE = REPO / "frayproof_audit"
CORPUS = PACKAGE / "corpus"


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(path): path for path in sorted(CORPUS.rglob("*.py"))}


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _imports(path: Path) -> set[str]:
    """The corpus modules `path` imports at run time, wherever the import statement is."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        found.update(name for name in names if name in MODULES and MODULES[name].name != "__init__.py")
    return found - {_module(path)}


def test_no_import_cycle_among_the_corpus_modules() -> None:
    graph = {module: _imports(path) for module, path in MODULES.items()}
    done: set[str] = set()

    def visit(module: str, trail: list[str]) -> None:
        if module in trail:
            cycle = [*trail[trail.index(module):], module]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        for imported in sorted(graph[module]):
            visit(imported, [*trail, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert len(done) > 30


def test_no_corpus_module_is_named_like_another_module_of_the_package() -> None:
    names: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name not in ("__init__.py", "__main__.py"):
            names.setdefault(path.name, []).append(str(path.relative_to(PACKAGE)))
    clashes = {name: paths for name, paths in names.items()
               if len(paths) > 1 and any(path.startswith("corpus/") for path in paths)}
    assert not clashes, clashes


def test_the_rooms_import_nothing_of_their_own() -> None:
    rooms = sorted(path for path in CORPUS.iterdir() if (path / "__init__.py").is_file())
    assert [room.name for room in rooms] == ["dataset", "inputs", "run", "store"]
    assert not [path.name for path in CORPUS.glob("*.py") if path.name != "__init__.py"]
    for room in rooms:
        tree = ast.parse((room / "__init__.py").read_text(encoding="utf-8"))
        assert not [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)], room
