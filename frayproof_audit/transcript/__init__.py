"""Transcript tools: inspect, repair and compact one transcript in any supported format.

* `inspect(snapshot, fmt)` — named defects: FATAL (a provider would reject the request) or
  WASTEFUL (costs context for nothing), each at its wire coordinates, each repairable or not.
* `repair(snapshot, fmt)` — the smallest edits that make it valid, every one accounted for in
  the input's coordinates; output in the input's own wire format.
* `compact(snapshot, fmt, max_tokens=..., keep=...)` and `find_safe_boundary` — drop the
  oldest turns to fit a token budget without splitting a call from its result, or refuse.

All of them read the snapshot through an input format (`auto` by default: the one of the four
wire formats the snapshot's own evidence names) into the neutral model, so the rules are the
same for every format; none of them mutates its input or returns objects shared with it, and
each returns the transcript in the shape it came in (an `otel-genai` JSON string stays a
string). `batch` runs them over files, folders and JSONL for the CLI.
"""

from frayproof_audit.transcript.compact import (
    CompactionRefused,
    CompactionResult,
    compact,
    find_safe_boundary,
)
from frayproof_audit.transcript.defects import FATAL, RULES, WASTEFUL, Defect, Rule
from frayproof_audit.transcript.inspection import Inspection, inspect
from frayproof_audit.transcript.repair import (
    INTERRUPTED,
    Change,
    IrreparableError,
    RepairResult,
    Synthesized,
    UnsupportedFormat,
    repair,
)
from frayproof_audit.transcript.tokens import (
    TokenCounter,
    TokenizerUnavailable,
    approximate_tokens,
    tiktoken_counter,
)

__all__ = [
    "FATAL",
    "INTERRUPTED",
    "RULES",
    "WASTEFUL",
    "Change",
    "CompactionRefused",
    "CompactionResult",
    "Defect",
    "Inspection",
    "IrreparableError",
    "RepairResult",
    "Rule",
    "Synthesized",
    "TokenCounter",
    "TokenizerUnavailable",
    "UnsupportedFormat",
    "approximate_tokens",
    "compact",
    "find_safe_boundary",
    "inspect",
    "repair",
    "tiktoken_counter",
]
