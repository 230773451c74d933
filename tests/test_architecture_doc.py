"""docs/architecture.md names real files and registries, so the "where to add" table stays true."""

from __future__ import annotations

import re

from frayproof_audit.checks import CHECKS
from frayproof_audit.formats import FORMATS
from frayproof_audit.mutate.operators import OPERATOR_TABLE
from frayproof_audit.render import OUTPUTS
from frayproof_audit.sources import SOURCES
from tests.helpers import REPO

DOC = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_every_module_path_in_the_architecture_doc_exists() -> None:
    named = set(re.findall(r"`((?:frayproof_audit/)?[a-z_/]+\.py)`", DOC))
    assert len(named) > 30
    files = [str(path.relative_to(REPO)) for path in REPO.glob("**/*.py") if ".venv" not in path.parts]
    for name in named:
        assert any(path == name or path.endswith(f"/{name}") for path in files), name


def _seams() -> str:
    return DOC.split("## Seams: one module and one registry line each", 1)[1].split(
        "### The neutral model", 1)[0]


def test_the_where_to_add_table_names_each_registry() -> None:
    table = _seams()
    for registry, values in (("CHECKS", CHECKS), ("FORMATS", FORMATS), ("SOURCES", SOURCES),
                             ("OPERATOR_TABLE", OPERATOR_TABLE), ("OUTPUTS", OUTPUTS)):
        assert f"`{registry}`" in table and values
    rows = [row for row in table.splitlines() if row.startswith("| a")]
    assert len(rows) == 5
    for row in rows:
        write, register = row.split(" | ")[1:3]
        files = set(re.findall(r"`(?:frayproof_audit/)?([a-z_/<>]+\.py)`", write + register))
        assert 1 <= len(files) <= 3, row


def test_each_seam_has_the_test_that_adds_a_member_with_one_line() -> None:
    """The table's claim is measured by these tests, each adding a throwaway member."""
    named = re.findall(r"`(tests/test_[a-z_]+\.py)`", _seams())
    assert len(named) >= 6
    for path in named:
        assert (REPO / path).is_file(), path
