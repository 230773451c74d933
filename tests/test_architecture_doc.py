"""docs/architecture.md names real files and registries, so the "where to add" table stays true."""

from __future__ import annotations

import re

from frayproof_audit.checks import CHECKS
from frayproof_audit.formats import FORMATS
from frayproof_audit.mutate.operators import OPERATOR_TABLE
from frayproof_audit.render import OUTPUTS
from tests.helpers import REPO

DOC = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_every_module_path_in_the_architecture_doc_exists() -> None:
    named = set(re.findall(r"`((?:frayproof_audit/)?[a-z_/]+\.py)`", DOC))
    assert len(named) > 30
    files = [str(path.relative_to(REPO)) for path in REPO.glob("**/*.py") if ".venv" not in path.parts]
    for name in named:
        assert any(path == name or path.endswith(f"/{name}") for path in files), name


def test_the_where_to_add_table_names_each_registry() -> None:
    table = DOC.split("## Four seams, four tables", 1)[1].split("### The neutral model", 1)[0]
    for registry, values in (("CHECKS", CHECKS), ("FORMATS", FORMATS),
                             ("OPERATOR_TABLE", OPERATOR_TABLE), ("OUTPUTS", OUTPUTS)):
        assert f"`{registry}`" in table and values
    for row in table.splitlines()[7:11]:
        files = set(re.findall(r"`(?:frayproof_audit/)?([a-z_/<>]+\.py)`", row))
        assert 1 <= len(files) <= 3, row
