"""The bundled examples stay true: the corpus is what its script makes, the README's audit and
stats output is what the tools print on it, and `make demo`'s script runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from frayproof_audit.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_block(command: str) -> list[str]:
    """The lines printed under `$ <command>` in a README ```text block."""
    match = re.search(r"```text\n\$ " + re.escape(command) + r"\n(.*?)```", README, re.DOTALL)
    assert match, f"README has no text block for {command!r}"
    return match.group(1).rstrip("\n").splitlines()


def test_example_corpus_is_what_its_script_makes() -> None:
    completed = subprocess.run([sys.executable, "examples/make_corpus.py", "--check"], cwd=ROOT,
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    out = tmp_path_factory.mktemp("readme") / "demo-out"
    result = CliRunner().invoke(main, [
        "audit", str(ROOT / "examples/corpus"), "--contract",
        str(ROOT / "examples/audit_contract.yaml"), "--out", str(out), "--run-id", "demo",
        "--jobs", "1", "-q",
    ])
    assert result.exit_code == 1, result.output
    return out, result.stdout.rstrip("\n").splitlines()


def test_readme_audit_summary_is_real(audited: tuple[Path, list[str]],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _, printed = audited
    documented = readme_block("frayproof-audit audit examples/corpus --contract "
                              "examples/audit_contract.yaml --out demo-out --run-id demo")
    assert documented[-1] == "[exit 1]"
    # The first line carries the wall time and the output folder; the rest must match exactly.
    assert re.fullmatch(r"Run demo: 328 pairs audited in [0-9.]+s \(\d+ shard\(s\)\) → .*",
                        printed[0]), printed[0]
    corpus = str(ROOT / "examples/corpus")
    assert [line.replace(corpus, "examples/corpus") for line in printed[1:]] == documented[1:-1]


def test_readme_stats_are_real(audited: tuple[Path, list[str]]) -> None:
    out, _ = audited
    result = CliRunner().invoke(main, ["stats", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip("\n").splitlines() == readme_block("frayproof-audit stats demo-out")


def test_demo_script_runs(tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, "examples/demo.py"], cwd=ROOT,
                               capture_output=True, text=True, check=False, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert "Run demo: 328 pairs audited" in completed.stdout
    assert "failing_pairs" in completed.stdout


def test_notebook_runs_on_a_real_dataset(audited: tuple[Path, list[str]],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import polars as pl

    out, _ = audited
    monkeypatch.setenv("FRAYPROOF_AUDIT_OUT", str(out))
    notebook = json.loads((ROOT / "notebooks/audit_analysis.ipynb").read_text(encoding="utf-8"))
    namespace: dict[str, object] = {}
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            exec("".join(cell["source"]), namespace)  # our own notebook, run as written
    by_compactor = namespace["by_compactor"]
    survival = namespace["survival"]
    assert isinstance(by_compactor, pl.DataFrame) and isinstance(survival, pl.DataFrame)
    rates = dict(zip(by_compactor["compactor"], by_compactor["failure_rate"], strict=True))
    assert rates["drop_system_prompt"] == 1.0 and rates["summary_keep_last_n"] == 0.0
    assert survival["applicable"].sum() > 0
