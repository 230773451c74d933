"""Rebuild the tables-schema-1 fixtures: datasets written by frayproof-audit before `findings.code`.

    git archive 9e06d2f | tar -x -C /tmp/v1tree      # the last commit with tables schema 1
    python tests/data/v1/build.py /tmp/v1tree

Writes, relative to the repository root (the audits run there, so `source` columns are
relative paths that a test can reproduce):

    tests/data/v1/generated-corpus/     every input format and every kind of bad record
                                        (`tests.corpus_support.mixed_corpus`, deterministic)
    tests/data/v1/generated-dataset/    its audit, run id `v1-generated`
    tests/data/v1/example-dataset/      the audit of examples/corpus/, run id `v1-example`

The audits run in a subprocess with the code of the given tree (which must write schema 1),
`--jobs 1`. Bad records have no `logged_at`, so they are filed under the date of the build.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent.relative_to(REPO)
GENERATED_CORPUS = HERE / "generated-corpus"
AUDITS = {
    # folder: (run id, inputs, contract, extra options)
    "example-dataset": ("v1-example", "examples/corpus", "examples/audit_contract.yaml", ()),
    "generated-dataset": ("v1-generated", str(GENERATED_CORPUS), str(GENERATED_CORPUS / "contract.yaml"),
                          ("--max-record-bytes", "5000", "--shard-bytes", "12000")),
}


_ENTRY = """
import sys
tree = sys.argv.pop(1)
sys.path.insert(0, tree)  # ahead of the working directory and of any installed copy
import frayproof_audit
assert frayproof_audit.__file__.startswith(tree), frayproof_audit.__file__
from frayproof_audit.cli import main
main(prog_name="frayproof-audit")
"""


def write_generated_corpus() -> None:
    sys.path.insert(0, str(REPO))
    from tests.corpus_support import CONTRACT_TEXT, mixed_corpus

    target = REPO / GENERATED_CORPUS
    shutil.rmtree(target, ignore_errors=True)
    mixed_corpus(target)
    (target / "contract.yaml").write_text(CONTRACT_TEXT, encoding="utf-8")


def audit_with(tree: Path, folder: str) -> None:
    run_id, inputs, contract, extra = AUDITS[folder]
    out = REPO / HERE / folder
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(
        [sys.executable, "-c", _ENTRY, str(tree), "audit", inputs, "--contract", contract,
         "--out", str(HERE / folder), "--run-id", run_id, "--jobs", "1", "--fail-on", "none", "-q",
         *extra],
        cwd=REPO, check=True, stdout=subprocess.DEVNULL,
    )
    (out / ".frayproof-audit.lock").unlink()
    shutil.rmtree(out / "_staging")
    key = b"frayproof_audit.schema_version"
    versions = {pq.read_schema(path).metadata[key] for path in out.rglob("*.parquet")}
    if versions != {b"1"}:
        raise SystemExit(f"{tree} wrote tables schema {versions}, not 1: use the pre-code commit")


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    tree = Path(sys.argv[1]).resolve()
    write_generated_corpus()
    for folder in AUDITS:
        audit_with(tree, folder)


if __name__ == "__main__":
    main()
