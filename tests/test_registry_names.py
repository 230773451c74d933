"""Measured, not claimed: no code outside a registered member's own module keys on its name.

"Keys on" is read from the code: a check's key or finding name, a format's, an operator's or a
source's name written as a string that is compared (`==`, `in (...)`), used as a subscript,
looked up (`.get`, `.settings`, `.option`, `.pop`) or matched (`case "..."`). Anywhere else
(its own module, its registry) it is the member's own declaration. The few places that do key
on a name are listed below, each with its reason; a new one fails this test until it is
either moved into the member or listed here with a reason, so the architecture page's
where-to-add table (one module and one registry line) stays true.

Output names are left out: `text` and `json` are also ordinary words of every wire format.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from frayproof_audit.checks import CHECKS
from frayproof_audit.formats import FORMATS
from frayproof_audit.mutate.operators import OPERATOR_TABLE
from frayproof_audit.sources import SOURCES
from tests.helpers import REPO

PACKAGE = REPO / "frayproof_audit"

NAMES: dict[str, str] = {}
"""Every registered name → what it names."""
OWNERS: dict[str, set[str]] = {}
"""Every registered name → the modules that declare it: the member's own module and its
registry (read from the registered values, not from file names)."""


def _declare(name: str, kind: str, *modules: str) -> None:
    NAMES[name] = kind
    OWNERS.setdefault(name, set()).update(
        module.removeprefix("frayproof_audit.").replace(".", "/") + ".py" for module in modules)


for check in CHECKS:
    for name in (check.key, check.name):
        _declare(name, "check", check.find.__module__, "frayproof_audit.checks.__init__")
for name, fmt in FORMATS.items():
    _declare(name, "format", type(fmt).__module__, "frayproof_audit.formats.__init__")
for operator in OPERATOR_TABLE:
    _declare(operator.name, "operator", "frayproof_audit.mutate.operators")
for name, source in SOURCES.items():
    _declare(name, "source", source.derive.__module__, "frayproof_audit.sources.__init__")

KEYED: dict[tuple[str, str], str] = {
    # (module, name): why this module keys on a name that is not its own
    ("sources/gemini_cli.py", "gemini"): "a Gemini CLI record's `type` is `gemini` (not the format)",
    ("sources/claude_code.py", "auto"): "Claude Code's compaction trigger is `auto` (not the format)",
    ("sources/base.py", "auto"): "the compaction trigger `auto` (not the format)",
    ("suggest/families.py", "auto"): "`auto` is no format to propose a provider profile for",
    ("sources/requests.py", "otel-genai"): "request logs are parsed in the wire shape they were "
                                           "logged in, which only a source knows",
    ("sources/requests.py", "langchain"): "as above: LangChain-serialized requests",
    ("sources/langsmith.py", "langchain"): "as above: LangSmith runs hold LangChain messages",
    ("suggest/run.py", "retention"): "`suggest` writes contracts: it proposes only the rules it "
                                     "was taught, and says so (docs/suggest.md)",
    ("suggest/settings.py", "retention"): "as above",
    ("suggest/settings.py", "pinned_content"): "as above",
}


def _strings(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for element in node.elts:
            yield from _strings(element)


def _keyed(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        found: list[str] = []
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                found += _strings(side)
        elif isinstance(node, ast.Subscript):
            found += _strings(node.slice)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("get", "settings", "option", "pop") and node.args):
            found += _strings(node.args[0])
        elif isinstance(node, ast.MatchValue):
            found += _strings(node.value)
        yield from ((node.lineno, value) for value in found if value in NAMES)


def test_no_module_keys_on_another_member_s_name() -> None:
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = str(path.relative_to(PACKAGE))
        for line, name in _keyed(ast.parse(path.read_text(encoding="utf-8"))):
            if module not in OWNERS[name]:
                found.setdefault((module, name), []).append(line)
    unexplained = {f"{module}:{lines} keys on the {NAMES[name]} {name!r}": None
                   for (module, name), lines in found.items() if (module, name) not in KEYED}
    assert not unexplained, list(unexplained)
    stale = set(KEYED) - set(found)
    assert not stale, f"listed but no longer keyed (remove them): {sorted(stale)}"


def test_the_reading_finds_a_dispatch_on_a_check_name(tmp_path: Path) -> None:
    code = ("def f(check, settings, table):\n"
            "    if check.key == 'retention':\n        pass\n"
            "    table['structure']\n    settings.option('tool_pairs', 'x')\n"
            "    match check.key:\n        case 'unique_tool_ids':\n            pass\n"
            "    name = 'retention'  # a declaration, not keying\n")
    assert sorted(name for _, name in _keyed(ast.parse(code))) == [
        "retention", "structure", "tool_pairs", "unique_tool_ids"]
