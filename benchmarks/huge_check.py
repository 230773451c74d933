"""The check path on one huge failing record: does it stay linear in the record's length?

`bench_check --huge N,N,...` builds, per size, a before of N tool-call exchanges (user,
assistant call, its result, an assistant answer) and afters that break it the ways real
compactors do, at every exchange at once: every result dropped (unanswered calls), every call
dropped (orphaned results), and one call id reused by every call with every result changed
(a log that numbers nothing). It times what a corpus worker does with such a record, in
process: reading both snapshots, `check_loaded` and the repair behind `findings.repairable`
(`repair_pair`), under the audit example contract with `tool_call_integrity` and
`provider_validity` on (every check that reads results). A kept after is the control.

The figure is the cost per message at the largest size over the cost at the smallest: about 1
when the cost grows linearly with the record. No target of issue #9 names it (goal 3 is about
mutation), so it prints no target line: it guards "no single record can dominate a night" for
records that fail, which mutation never touches.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks import huge_mutate
from frayproof_audit.contract import Contract, parse_contract
from frayproof_audit.corpus.run.pair_repair import repair_pair
from frayproof_audit.engine import check_loaded
from frayproof_audit.formats import get_format

Messages = list[dict[str, Any]]
CONTRACT = huge_mutate.OPT_IN["opt-in openai-chat"]


def session(exchanges: int, call_id: Callable[[int], str] = lambda n: f"call_{n}") -> Messages:
    """A system prompt and `exchanges` exchanges of four messages each."""
    messages: Messages = [{"role": "system", "content": "You are a careful agent."}]
    for n in range(exchanges):
        messages += [
            {"role": "user", "content": f"step {n}: read the next file"},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": call_id(n), "type": "function",
                "function": {"name": "read_file", "arguments": f'{{"path": "src/m{n}.py"}}'}}]},
            {"role": "tool", "tool_call_id": call_id(n), "content": f"def f{n}(): return {n}"},
            {"role": "assistant", "content": f"read src/m{n}.py"},
        ]
    return messages


def shapes(exchanges: int) -> dict[str, tuple[Messages, Messages]]:
    """Before and after of each shape, at `exchanges` exchanges."""
    before = session(exchanges)
    reused = session(exchanges, lambda _n: "call_0")
    return {
        "kept (control)": (before, list(before)),
        "unanswered calls": (before, [m for m in before if m["role"] != "tool"]),
        "orphaned results": (before, [m for m in before if not m.get("tool_calls")]),
        "one id reused": (reused, [dict(m, content="(elided)") if m["role"] == "tool" else m
                                   for m in reused]),
    }


def audit_seconds(before: Messages, after: Messages, contract: Contract, repeat: int) -> tuple[float, int]:
    """Best CPU seconds of reading, checking and repairing the pair, and its findings."""
    fmt = get_format("openai")
    best, found = float("inf"), 0
    for _ in range(repeat):
        start = time.process_time()
        loaded_before, loaded_after = fmt.load(before), fmt.load(after)
        report = check_loaded(loaded_before, loaded_after, contract)
        repair_pair(after, loaded_after, loaded_before, contract, report, "p", "r")
        best = min(best, time.process_time() - start)
        found = len(report.violations)
    return best, found


def run(sizes: Sequence[int], repeat: int) -> int:
    contract = parse_contract(CONTRACT, "<audit contract, opt-in checks on>")
    sizes = sorted(sizes)
    print(f"huge failing records: {', '.join(str(4 * s + 1) for s in sizes)} messages; "
          f"best of {repeat}, CPU time, in process, jobs 1")
    built = {size: shapes(size) for size in sizes}  # each size's pairs built once, all shapes
    for name in built[sizes[0]]:
        per_message = []
        for size in sizes:
            before, after = built[size][name]
            seconds, found = audit_seconds(before, after, contract, repeat)
            messages = len(before) + len(after)
            per_message.append(seconds / messages)
            print(f"  {name:18s} {len(before):7d} messages  {seconds:7.3f} s  "
                  f"{seconds / messages * 1e6:6.2f} us/message  {found:6d} findings")
        if len(sizes) > 1:
            print(f"  {name:18s} cost per message, largest / smallest: "
                  f"{per_message[-1] / per_message[0]:.2f}x (1.0 = linear)")
    return 0
