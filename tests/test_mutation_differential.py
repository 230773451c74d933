"""Differential tests against frayproof 0.1.0 itself, run by its own Python 3.12 interpreter.

`make peer` installs frayproof into `.peer/`; without it these tests skip (or fail, under
FRAYPROOF_AUDIT_REQUIRE_PEER=1: see the `peer_python_path` fixture in conftest.py). Verdict data is
compared, not wording: per mutant the operator, status, message index, sites and every
finding's (check, severity, snapshot, index, tool_call_id, pin, rule), plus counts and score.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.peer import peer_python
from frayproof_audit.contract import parse_contract
from frayproof_audit.mutate import MutationReport, build_mutants, run_mutations
from frayproof_audit.mutate.operators import get_operator
from frayproof_audit.snapshot import load_list
from sessiongen.small import mutation_cases
from tests.helpers import REPO, expand

pytestmark = pytest.mark.usefixtures("peer_python_path")

# Runs inside the peer: reads [[before, after, contract_yaml, sharing], ...] on stdin. `sharing`
# lists (kind, i, j) aliasing steps applied to the output so it shares objects between positions.
PEER_RUNNER = r'''
import json, os, sys, tempfile
from frayproof.mutate import run_mutations

def alias(after, steps):
    for kind, i, j in steps:
        if kind == "dup":
            after.insert(j, after[i])
        elif kind == "block" and isinstance(after[i].get("content"), list) and after[i]["content"]:
            after[i]["content"].append(after[i]["content"][0])
    return after

def verdict(report):
    return [[v.check, v.severity, v.snapshot, v.message_index, v.tool_call_id, v.pin, v.rule]
            for v in report.violations]

folder = tempfile.mkdtemp()
out = []
for index, (before, after, contract, steps) in enumerate(json.load(sys.stdin)):
    path = os.path.join(folder, f"{index}.yaml")
    with open(path, "w") as handle:
        handle.write(contract)
    output = alias(after, steps)
    try:
        report = run_mutations(before, lambda _m, output=output: output, path)
    except Exception as exc:
        out.append({"error": type(exc).__name__})
        continue
    out.append({"baseline": verdict(report.baseline), "score": report.score,
                "counts": [report.caught, report.survived, report.skipped],
                "mutants": [[m.name, m.status, m.message_index, list(m.sites),
                             None if m.report is None else verdict(m.report)]
                            for m in report.mutants]})
print(json.dumps(out))
'''


def alias(after: list[Any], steps: list[list[Any]]) -> list[Any]:
    """The same aliasing as the peer runner, for our side."""
    for kind, i, j in steps:
        if kind == "dup":
            after.insert(j, after[i])
        elif kind == "block" and isinstance(after[i].get("content"), list) and after[i]["content"]:
            after[i]["content"].append(after[i]["content"][0])
    return after


def verdict(report: Any) -> list[list[Any]]:
    return [[v.check, v.severity, v.snapshot, v.message_index, v.tool_call_id, v.pin, v.rule]
            for v in report.violations]


def ours(before: list[Any], after: list[Any], contract: str, steps: list[Any]) -> Any:
    output = alias(copy.deepcopy(after), steps)
    try:
        report: MutationReport = run_mutations(before, lambda _m: output, parse_contract(contract))
    except Exception as exc:
        return {"error": type(exc).__name__}
    return {"baseline": verdict(report.baseline), "score": report.score_percent,
            "counts": [report.caught, report.survived, report.skipped],
            "mutants": [[m.operator, m.status, m.message_index, list(m.sites),
                         None if m.report is None else verdict(m.report)]
                        for m in report.mutants]}


def run_peer(code: str, payload: Any) -> Any:
    python = peer_python()
    assert python is not None  # the module's `peer_python_path` fixture saw to that
    done = subprocess.run([python, "-I", "-c", code], input=json.dumps(payload), text=True,
                          capture_output=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def compare(cases: list[list[Any]]) -> None:
    theirs = run_peer(PEER_RUNNER, cases)
    mismatches = [
        (index, mine, expected)
        for index, (case, expected) in enumerate(zip(cases, theirs, strict=True))
        if (mine := ours(*case)) != expected
    ]
    assert not mismatches, json.dumps(mismatches[0])[:3000]


RANDOM_CASES = 250
SHARED_CASES = 120


def test_random_sessions_match_frayproof() -> None:
    cases = [[*case, []] for case in mutation_cases(seed=0, count=RANDOM_CASES)]
    compare(cases)


def test_outputs_with_shared_objects_match_frayproof() -> None:
    cases = []
    for seed, (before, after, contract) in enumerate(mutation_cases(seed=1, count=SHARED_CASES)):
        n = len(after)
        if not n:
            continue
        steps = [["dup", seed % n, (seed * 7) % (n + 1)], ["block", (seed * 3) % n, 0]]
        cases.append([before, after, contract, steps])
    compare(cases)


def test_demo_fixture_matches_frayproof() -> None:
    from examples.mutation_compactor import compact
    before = json.loads((REPO / "fixtures" / "mutation_session.json").read_text())
    cases = [[before, compact(copy.deepcopy(before)),
              (REPO / "examples" / name).read_text(), []]
             for name in ("weak_contract.yaml", "mutation_contract.yaml")]
    compare(cases)


# Runs frayproof's mutant generator alone on the operator cases: the mutant lists themselves.
PEER_GENERATOR = r'''
import copy, json, os, sys, tempfile
from frayproof.contract import resolve_contract
from frayproof.loaders import load_snapshot
from frayproof.mutate.mutators import generate_mutations
folder = tempfile.mkdtemp()
out = []
for index, case in enumerate(json.load(sys.stdin)):
    path = os.path.join(folder, f"{index}.yaml")
    with open(path, "w") as handle:
        handle.write(case["contract"])
    mutations = generate_mutations(copy.deepcopy(case["after"]), load_snapshot(case["before"]),
                                   load_snapshot(case["after"]), resolve_contract(path))
    out.append([[m.name, list(m.sites), m.message_index, m.messages]
                for m in mutations if m.name == case["operator"] and m.messages is not None])
print(json.dumps(out))
'''


def test_operator_cases_build_frayproofs_mutants() -> None:
    cases = []
    for path in sorted(Path(REPO / "tests" / "cases" / "mutation").glob("*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        operator = get_operator(document["operator"])
        if operator.applies is not None or operator.quiet:
            continue  # an operator beyond frayproof's nine: the peer has nothing to compare
        for case in document["cases"]:
            after = [expand(copy.deepcopy(m)) for m in case["after"]]
            before = [expand(copy.deepcopy(m)) for m in case.get("before", case["after"])]
            cases.append({"operator": document["operator"], "before": before, "after": after,
                          "contract": yaml.safe_dump(case.get("contract") or {"version": 1})})
    theirs = run_peer(PEER_GENERATOR, cases)
    for case, expected in zip(cases, theirs, strict=True):
        mutants = build_mutants(load_list(case["before"]), load_list(case["after"]),
                                parse_contract(case["contract"]), [case["operator"]])
        assert [[m.operator, list(m.sites), m.message_index, m.messages]
                for m in mutants] == expected, case
