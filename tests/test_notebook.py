"""notebooks/audit_analysis.ipynb runs top to bottom on a real dataset and draws its charts.

Executed with nbclient in a real Jupyter kernel (ipykernel), as a user would run it, against a
small audited dataset of three nights; any cell error fails the test. The notebook needs only
the `plot` extra (matplotlib) beyond the package itself.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.helpers import REPO
from tests.report_support import build_dataset

NOTEBOOK = REPO / "notebooks" / "audit_analysis.ipynb"


def test_the_notebook_is_stored_without_outputs() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)


def test_the_notebook_runs_top_to_bottom_and_draws_its_charts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = build_dataset(tmp_path)
    monkeypatch.setenv("FRAYPROOF_AUDIT_OUT", str(out))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 3  # failure grid, survival intervals, trend with its baseline band
    text = "".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "drop_recent_exchange" in text and "survival_rate" in text
