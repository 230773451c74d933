"""`make demo`: show the single-pair checks, then a real audit of the bundled corpus.

Everything runs through the installed `frayproof-audit` command, exactly as a user would type
it; each command is echoed before its output.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "frayproof_audit"]
OUT = ROOT / "demo-out"

SINGLE_PAIR = [
    ["validate", "--snapshot", "fixtures/clean_session.json"],
    ["validate", "--snapshot", "fixtures/orphaned_result.json"],
    ["check", "--before", "fixtures/clean_session.json", "--after",
     "fixtures/legitimate_compaction.json", "--contract", "examples/contract.yaml"],
    ["check", "--before", "fixtures/clean_session.json", "--after",
     "fixtures/dropped_constraint.json", "--contract", "examples/contract.yaml"],
]


def run(arguments: list[str]) -> int:
    print(f"$ frayproof-audit {shlex.join(arguments)}")
    completed = subprocess.run([*CLI, *arguments], cwd=ROOT, check=False)
    print(f"(exit {completed.returncode})\n")
    return completed.returncode


def main() -> int:
    print("== Single pairs ==\n")
    for arguments in SINGLE_PAIR:
        run(arguments)
    corpus = ROOT / "examples" / "corpus"
    if not corpus.is_dir():
        return 0
    print("== Corpus audit of examples/corpus ==\n")
    shutil.rmtree(OUT, ignore_errors=True)
    run(["audit", "examples/corpus", "--contract", "examples/audit_contract.yaml",
         "--out", str(OUT.relative_to(ROOT)), "--fail-on", "none"])
    run(["stats", str(OUT.relative_to(ROOT))])
    run(["stats", str(OUT.relative_to(ROOT)), "--by", "compactor"])
    print(f"Tables written under {OUT}/ (runs, pairs, findings, mutants). Query them with DuckDB:")
    print(
        "  duckdb -c \"SELECT compactor, check, count(*) AS findings "
        f"FROM read_parquet('{OUT.relative_to(ROOT)}/findings/**/*.parquet', hive_partitioning = true) "
        "GROUP BY ALL ORDER BY findings DESC\""
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
