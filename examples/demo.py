"""`make demo`: show the single-pair checks, the compactions in the agent logs bundled in
`examples/agent-logs/` audited with the contract of each agent, then a real audit of the bundled
corpus.

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
REPAIRED = OUT / "repaired"

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


QUERY = """
SELECT compactor, "check", code, count(DISTINCT pair_id) AS failing_pairs
FROM read_parquet('{out}/findings/**/*.parquet', hive_partitioning = true, union_by_name = true)
WHERE severity = 'error'
  AND run_id IN (SELECT run_id FROM read_parquet('{out}/runs/*.parquet'))
GROUP BY ALL ORDER BY failing_pairs DESC, compactor
""".strip()


def write_html_report(out: Path) -> None:
    """The HTML report of the audited corpus: one self-contained page (docs/report.md)."""
    print("== The HTML report ==\n")
    page = out / "report.html"
    run(["report", str(out), "-o", str(page), "--regression-points", "10"])  # as the trend gate
    print(f"HTML report: {ROOT / page} (open it in a browser; it loads nothing from the network)\n")


AGENTS = ("codex", "claude-code", "gemini-cli")


def agent_logs(out: Path) -> None:
    """The logs agents already write (examples/agent-logs/): the compaction in each, as a pair,
    then audited with the contract that fits that agent (examples/contracts/)."""
    print("== The logs your agents already write (examples/agent-logs/) ==\n")
    for agent in AGENTS:
        logs = f"examples/agent-logs/{agent}"
        run(["pairs", logs])
        run(["audit", logs, "--source", agent, "--contract", f"examples/contracts/{agent}.yaml",
             "--out", str(out / "agents"), "--run-id", agent, "-q"])


def main() -> int:
    print("== Single pairs ==\n")
    for arguments in SINGLE_PAIR:
        run(arguments)
    out = OUT.relative_to(ROOT)
    shutil.rmtree(OUT, ignore_errors=True)
    agent_logs(out)
    print("== Corpus audit of examples/corpus (eight nights, good and buggy compactors) ==\n")
    # Exit 1 is expected: the corpus holds buggy compactors on purpose.
    run(["audit", "examples/corpus", "--contract", "examples/audit_contract.yaml",
         "--out", str(out), "--run-id", "demo", "--repair-out", str(REPAIRED.relative_to(ROOT))])
    run(["stats", str(out)])
    run(["stats", str(out), "--by", "compactor"])
    duckdb_query(out)
    trend_chart(out)
    write_html_report(out)
    repair_one_pair()
    return 0


def duckdb_query(out: Path) -> None:
    print(f"The tables are under {OUT}/ (runs, pairs, findings, mutants), Hive-partitioned by")
    print("log_date. Any engine reads them; this is DuckDB:\n")
    query = QUERY.format(out=out)
    print(query + "\n")
    try:
        import duckdb
    except ImportError:
        print("(install duckdb to run it: pip install duckdb)\n")
        return
    import os

    os.chdir(ROOT)
    print(duckdb.sql(query))
    print()


def trend_chart(out: Path) -> None:
    """Night by night against a trailing baseline: the gate trips on the planted regression."""
    print("== Night by night: trends and the regression gate ==\n")
    chart = out / "trend.png"
    # Exit 1 is expected: the last night's release of summary_keep_last_n regressed on purpose.
    run(["trend", str(out), "--fail-on-regression", "10", "--png", str(chart)])
    print(f"Trend chart: {ROOT / chart}\n")


def repair_one_pair() -> None:
    """Repair one broken pair of the example corpus and show it is valid afterwards."""
    import json

    print("== Repair a broken pair from the corpus ==\n")
    print(f"The audit above ran with --repair-out {REPAIRED.relative_to(ROOT)}: the after snapshot of")
    print("every failing pair whose findings a transcript repair fixes, repaired.\n")
    records = [json.loads(line) for path in sorted(REPAIRED.glob("repaired-*.jsonl"))
               for line in path.read_text(encoding="utf-8").splitlines()]
    print(f"{len(records)} failing pairs are fully repairable; one of them:")
    record = next((r for r in records if any(c["action"] == "synthesize" for c in r["changes"])),
                  records[0])
    print(f"pair {record['pair_id']} ({record['format']}), fixes {', '.join(record['fixed'])}:")
    for change in record["changes"]:
        print(f"  {change['action']} {change['site']} ({change['defect']})")
    one = OUT / "repaired-pair.json"
    one.write_text(json.dumps(record["after"], ensure_ascii=False), encoding="utf-8")
    print()
    run(["inspect", str(one.relative_to(ROOT)), "--input-format", record["format"]])

if __name__ == "__main__":
    sys.exit(main())
