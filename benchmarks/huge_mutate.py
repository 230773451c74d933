"""Mutation cost on one huge record: does it stay linear in the record's length?

`bench_mutate --huge N,N,...` generates, per size, one pair of N messages of tool-call exchanges
(user, assistant with 1-3 parallel calls, their results, an assistant answer; small realistic
contents) whose output keeps everything (so the baseline passes and every site is judged), and
times `mutate_pair` end to end (bytes -> report) in a fresh subprocess per size, so each size's
peak RSS is its own (the child's `VmHWM`: its `ru_maxrss` would start from the parent's size,
which Linux carries across exec). Each size runs once as warm-up (small sizes) or not at all
(the run itself is the measurement for sizes where a warm-up would double a long run), then
best of `--repeat`. Mutation runs in one process: the effective number of jobs is 1.

The per-mutant cost ratio of the largest size to the smallest is the linearity figure: about 1
when the total cost grows linearly with the record (issue #9: the 16k-message record in at most
10 s and 300 MB).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import results

REPO = Path(__file__).resolve().parent.parent

MINIMAL_CONTRACT = "version: 1\n"
CONTRACTS = {
    "audit": (REPO / "examples" / "audit_contract.yaml").read_text(encoding="utf-8"),
    "minimal": MINIMAL_CONTRACT,
}
_STRUCTURE = "  structure:\n    system_messages: leading_only\n"
OPT_IN = {
    # the audit contract with both opt-in checks on, provider_validity judging by one profile
    f"opt-in {profile}": CONTRACTS["audit"].replace(_STRUCTURE, _STRUCTURE + (
        f"  provider_validity:\n    profile: {profile}\n    allow_trailing_pending_call: true\n"
        "  tool_call_integrity: true\n"))
    for profile in ("openai-chat", "anthropic", "gemini", "openai-responses")
}
OPT_IN["opt-in responses items with reasoning"] = CONTRACTS["audit"].replace(
    "format: openai\n", "format: openai-responses\n").replace(_STRUCTURE, _STRUCTURE + (
        "  provider_validity:\n    allow_trailing_pending_call: true\n  tool_call_integrity: true\n"))
"""Selectable with `--contracts`: the Chat record judged by each provider profile's rules, and
the same session as Responses items with a reasoning item before every assistant turn (in its
own format, so reasoning items are dropped by their operator and judged by their rules)."""
ALL_CONTRACTS = {**CONTRACTS, **OPT_IN}
TARGET_SECONDS = {16_000: 10.0}
TARGET_MB = {16_000: 300.0}
PER_MUTANT_RATIO = 1.5
"""Issue #28: the cost per mutant at the largest size at most 1.5x the smallest's."""
TOOLS = ("read_file", "grep", "run_tests", "list_dir", "git_diff")
WORDS = ("the", "build", "fails", "on", "module", "parser", "check", "why", "fix", "tests",
         "config", "value", "returns", "null", "after", "update", "line", "error")


def _text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def huge_session(n_messages: int, seed: int = 1) -> list[dict[str, Any]]:
    """Exactly `n_messages` messages: a system prompt, then closed tool-call exchanges, ending
    with a user request (the last exchange is cut short to hit the length)."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    serial = 0
    while len(messages) < n_messages - 1:
        messages.append({"role": "user", "content": _text(rng, 4, 14)})
        calls = []
        for _ in range(rng.randint(1, 3)):
            serial += 1
            arguments = json.dumps({"path": f"src/{rng.choice(WORDS)}_{serial}.py"})
            calls.append({"id": f"call_{serial:08x}", "type": "function",
                          "function": {"name": rng.choice(TOOLS), "arguments": arguments}})
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for call in calls:
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": _text(rng, 8, 40)})
        messages.append({"role": "assistant", "content": _text(rng, 6, 20)})
    del messages[n_messages - 1:]
    while messages[-1]["role"] == "tool" or (messages[-1]["role"] == "assistant"
                                              and messages[-1].get("tool_calls")):
        messages.pop()  # never leave a batch cut in half
    while len(messages) < n_messages:
        messages.append({"role": "user", "content": _text(rng, 4, 14)})
    return messages


def huge_record(n_messages: int, fmt: str) -> list[dict[str, Any]]:
    """`huge_session` as wire data of `fmt`: Chat messages, or (openai-responses) Responses
    items with a reasoning item in front of every assistant turn."""
    messages = huge_session(n_messages)
    if fmt != "openai-responses":
        return messages
    from sessiongen.responses_items import representable, to_items

    written = representable(messages)
    assert written is not None  # the generated session has a Responses spelling
    return to_items(written, reasoning=True).items


CHILD = r"""
import json, resource, sys, time
import orjson
from frayproof_audit.contract import parse_contract
from frayproof_audit.mutate import mutate_pair
from frayproof_audit.snapshot import load_wire, parse_snapshot_bytes
sys.path.insert(0, sys.argv[1])
from benchmarks.huge_mutate import huge_record
size, contract_text, repeat, warm = int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1"
budget = None if sys.argv[6] == "none" else int(sys.argv[6])
contract = parse_contract(contract_text, "<contract>")
fmt = contract.format
blob = orjson.dumps(huge_record(size, fmt))
kwargs = {} if budget is None else {"max_mutants": budget}
def peak_mb():
    # this interpreter's own high-water mark (VmHWM, reset at exec): Linux carries the parent's
    # size into a child's ru_maxrss across exec, so a big parent would show as the child's peak
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def once():
    start = time.perf_counter()
    report = mutate_pair(load_wire(parse_snapshot_bytes(blob), fmt),
                         load_wire(parse_snapshot_bytes(blob), fmt), contract, **kwargs)
    return time.perf_counter() - start, report
if warm:
    once()
passes = [once() for _ in range(repeat)]
best, report = min(passes, key=lambda pair: pair[0])
assert report.baseline.passed
print(json.dumps({"seconds": best, "passes": [seconds for seconds, _ in passes],
                  "judged": report.caught + report.survived,
                  "caught": report.caught, "survived": report.survived, "skipped": report.skipped,
                  "bytes": len(blob), "mb": peak_mb()}))
"""


def measure(size: int, contract_text: str, repeat: int, budget: int | None = None,
            timeout: float = 900.0) -> dict[str, Any] | str:
    """One size in its own interpreter: best seconds, judged mutants, peak RSS in MB."""
    warm = size <= 4_000
    args = [sys.executable, "-c", CHILD, str(REPO), str(size), contract_text, str(repeat),
            "1" if warm else "0", "none" if budget is None else str(budget)]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return f"did not finish in {timeout:.0f} s"
    if done.returncode != 0:
        return f"failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}"
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def run(sizes: Sequence[int], repeat: int, budget: int | None = None, timeout: float = 900.0,
        results_folder: Path | None = None, contracts: Sequence[str] = tuple(CONTRACTS)) -> int:
    print(f"huge records: one pair per size, mutate_pair bytes -> report, best of {repeat}, "
          "jobs 1 (mutation of a pair runs in one process)"
          + (f", budget {budget} mutants per pair" if budget is not None else ""))
    measured: list[results.Target] = []
    for name in contracts:
        contract_text = ALL_CONTRACTS[name]
        print(f" contract {name}:")
        per_mutant: dict[int, float] = {}
        spreads: dict[int, float] = {}  # each size's passes' spread; the ratio carries both
        for size in sizes:
            result = measure(size, contract_text, repeat, budget, timeout)
            if isinstance(result, str):
                print(f"  {size:>7,} messages: {result}")
                continue
            seconds, judged, mb = result["seconds"], result["judged"], result["mb"]
            micro = 1e6 * seconds / max(judged, 1)
            per_mutant[size] = micro
            spreads[size] = results.spread(result.get("passes", [seconds]))
            targets = []
            # the absolute targets are for its contracts; the opt-in ones (two more
            # checks per mutant, and another record for Responses items) carry the linear one
            if size in TARGET_SECONDS and name in CONTRACTS:
                targets.append(f"<= {TARGET_SECONDS[size]:.0f} s {_verdict(seconds <= TARGET_SECONDS[size])}")
                measured.append(results.Target(f"mutate one {size:,}-message record ({name} contract)",
                                               seconds, TARGET_SECONDS[size], unit="s", at_least=False,
                                               noise=spreads[size]))
            if size in TARGET_MB and name in CONTRACTS:
                targets.append(f"<= {TARGET_MB[size]:.0f} MB {_verdict(mb <= TARGET_MB[size])}")
                measured.append(results.Target(f"peak memory, one {size:,}-message record ({name} contract)",
                                               mb, TARGET_MB[size], unit="MB", at_least=False))
            print(f"  {size:>7,} messages ({result['bytes'] / 1e6:5.2f} MB): {seconds:8.2f} s  "
                  f"{judged:>7,} mutants judged, {result['skipped']:,} skipped  "
                  f"{micro:9.1f} us/mutant  peak {mb:7.1f} MB"
                  + (f"  [{'; '.join(targets)}]" if targets else ""))
        if len(per_mutant) >= 2:
            small, large = min(per_mutant), max(per_mutant)
            ratio = per_mutant[large] / per_mutant[small]
            print(f"  per-mutant cost {large:,} / {small:,} messages: {ratio:.2f}x "
                  f"(target ~1, linear total; <= {PER_MUTANT_RATIO} "
                  f"{_verdict(ratio <= PER_MUTANT_RATIO)})")
            measured.append(results.Target(
                f"per-mutant cost, {large:,} / {small:,} messages ({name} contract)", ratio,
                PER_MUTANT_RATIO, at_least=False, noise=spreads[small] + spreads[large]))
    results.save(results_folder, "bench_mutate_huge", 1, measured,
                 {"sizes": list(sizes), "repeat": repeat, "budget": budget, "contracts": list(contracts)})
    return 0
