"""Which findings a transcript repair would have fixed, and the repaired after snapshots.

For a pair whose findings include one a repair can fix (a result that answers nothing, an
unanswered call, a result out of place, a second answer, an empty assistant turn), the after
snapshot is repaired (`frayproof_audit.transcript.repair`) and checked again under the same
contract. A finding is `repairable` when its condition is gone after the repair; the
`findings.repairable` column says so for every finding. A failing pair whose every error is
repairable, and whose repaired after passes, gets a line in `--repair-out DIR`: its
`pair_id`, the format, the repaired after snapshot (in its own wire format) and the changes.
A pair in a format without a writer (`Format.writer` is None: `gemini`) is not repaired, so
none of its findings is repairable.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import frayproof_audit.checks as registry
from frayproof_audit.contract import Contract
from frayproof_audit.corpus.inputs.expansion import REPAIRED_MARKER
from frayproof_audit.engine import check_loaded
from frayproof_audit.errors import InputError
from frayproof_audit.formats import get_format, writer_of
from frayproof_audit.formats.otel import parse_messages
from frayproof_audit.jsonio import compact
from frayproof_audit.loaded import Loaded
from frayproof_audit.report import Report
from frayproof_audit.transcript.loading import Transcript
from frayproof_audit.transcript.repair import IrreparableError, repair_transcript


@dataclass(frozen=True, slots=True)
class PairRepair:
    """Per finding (in report order), whether the repair fixed it; and the `--repair-out`
    line when the pair failed and the repair fixes all of it."""

    repairable: tuple[bool, ...]
    line: bytes | None = None


def repair_pair(after_wire: Any, after: Loaded, before: Loaded, contract: Contract,
                report: Report, pair_id: str, run_id: str) -> PairRepair:
    """Never raises for the data: a transcript repair cannot fix is simply not repairable.

    `after_wire` is the record's freshly parsed after snapshot and `after` its reading, owned by
    the worker: repair reads them as they are (no copy) and never changes them."""
    violations = report.violations
    nothing = PairRepair((False,) * len(violations))
    fixes = registry.repairable_codes(registry.CHECKS)  # the conditions declared `repairable`
    if not any(v.code in fixes for v in violations):
        return nothing
    fmt = get_format(after.format.name)
    if writer_of(fmt) is None:  # a format that cannot be written back is never repaired
        return nothing
    text = after_wire if isinstance(after_wire, str) else None
    try:
        if text is not None:  # otel-genai: the messages as a JSON string
            after_wire = parse_messages(text)
        transcript = Transcript(after_wire, fmt, after)
        repaired = repair_transcript(transcript, detach=False)
        again = check_loaded(before, after if repaired.output is None else repaired.output, contract)
    except (IrreparableError, InputError):
        return nothing
    remaining = Counter((v.code, v.tool_call_id) for v in again.violations)
    flags = tuple(v.code in fixes and not remaining[(v.code, v.tool_call_id)]
                  for v in violations)
    whole = not report.passed and again.passed and all(
        fixed for fixed, v in zip(flags, violations, strict=True) if v.severity == "error")
    if not whole:
        return PairRepair(flags)
    record = {"pair_id": pair_id, "run_id": run_id, "format": fmt.name,
              # in the shape the record held it: a JSON string stays one
              "after": transcript._replace(text=text).shaped(repaired.transcript),
              "changes": [change.to_dict() for change in repaired.changes],
              "fixed": sorted({v.code for v in violations if v.code})}
    return PairRepair(flags, compact(record) + b"\n")  # exact for any integer a record holds


def write_repaired(folder: str, run_id: str, ordinal: int, lines: Sequence[bytes]) -> str | None:
    """One JSONL file per shard (`repaired-<run_id>-<shard>.jsonl`), written atomically, in a
    folder marked as output (`REPAIRED_MARKER`), so that no later audit reads it as logs."""
    if not lines:
        return None
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, REPAIRED_MARKER), "ab"):
        pass
    path = os.path.join(folder, f"repaired-{run_id}-{ordinal:05d}.jsonl")
    temporary = f"{path}.tmp"
    with open(temporary, "wb") as handle:
        handle.writelines(lines)
    os.replace(temporary, path)
    return path
