"""Capture at the source: log compaction pairs as the agent makes them, in the layout `audit` reads.

`PairWriter` writes one JSONL record per pair under `ROOT/log_date=YYYY-MM-DD/`; `guard(...,
record=writer)` logs every pair a guarded transformation makes; `capture.langchain` and
`capture.agents` are one-line hooks for LangChain / LangGraph and the OpenAI Agents SDK (each
needs its extra: `pip install 'frayproof-audit[langchain]'` / `'frayproof-audit[agents]'`).
See docs/capture.md.
"""

from frayproof_audit.capture.records import FrozenSnapshot, RecordError, redact_strings
from frayproof_audit.capture.writer import CaptureError, PairWriter, WriterStats

__all__ = ["CaptureError", "FrozenSnapshot", "PairWriter", "RecordError", "WriterStats", "redact_strings"]
