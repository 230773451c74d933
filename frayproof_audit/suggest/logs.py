"""`suggest_logs`: `suggest` over logs on disk, read as `audit` reads them (what the command runs).

The logs are read by `corpus.inputs.pair_records` (pair records in JSON lines, gzip, zstd or
Parquet with the audit's field map, and agents' own session files through the sources), and
the pairs go to `run_suggest`. Every record that holds no pair, whether the reader could not
read it or `suggest` could not use it, is an input error named by its file and line, counted
and shown; when they are more than `max_input_error_rate` of the records, the logs were not
what the command was pointed at, and nothing is suggested from them (exit 2).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import Any

from frayproof_audit.corpus.inputs.field_map import FieldMap
from frayproof_audit.corpus.inputs.pair_records import (
    DEFAULT_MAX_RECORD_BYTES,
    InputProblem,
    PairRecords,
    read_pair_records,
)
from frayproof_audit.corpus.inputs.source_choice import check_source
from frayproof_audit.report import EXIT_INPUT_ERROR
from frayproof_audit.suggest.config import SuggestConfig, SuggestError
from frayproof_audit.suggest.result import Share, Suggestion
from frayproof_audit.suggest.run import check_options, run_suggest

DEFAULT_MAX_INPUT_ERROR_RATE = 0.5
"""As `audit`'s: more input errors than this share of the records is logs misread (a wrong
field map, the wrong files), not a few bad lines."""
SHOWN_PROBLEMS = 10
"""Input errors the text output lists (the JSON document lists every one)."""


@dataclass(frozen=True, slots=True)
class LogInputs:
    """Where the logs are and how to read them, as `audit`'s options say it."""

    paths: tuple[str, ...]
    source: str = "auto"
    fields: FieldMap = field(default_factory=FieldMap)
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    max_input_error_rate: float = DEFAULT_MAX_INPUT_ERROR_RATE

    def __post_init__(self) -> None:
        if not self.paths:
            raise SuggestError("name at least one log file or folder")
        check_source(self.source)
        if type(self.max_record_bytes) is not int or self.max_record_bytes < 1:
            raise SuggestError(f"max_record_bytes: must be a positive integer, got {self.max_record_bytes!r}")
        rate = self.max_input_error_rate
        if type(rate) not in (int, float) or not math.isfinite(rate) or not 0 <= rate <= 1:
            raise SuggestError(f"max_input_error_rate: must be in [0, 1], got {rate!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"paths": list(self.paths), "source": self.source, "fields": dict(self.fields.items()),
                "max_record_bytes": self.max_record_bytes,
                "max_input_error_rate": self.max_input_error_rate}


@dataclass(frozen=True, slots=True)
class LogSuggestion:
    """A suggestion from logs, with what was read and every input error."""

    inputs: LogInputs
    read: PairRecords
    input_errors: tuple[InputProblem, ...]
    """What the reader could not read, then what `suggest` could not use, each named."""
    suggestion: Suggestion | None
    """None when the input errors were too many to suggest anything."""
    output: str | None = None
    """Where the contract was written (set by whoever wrote it)."""

    @property
    def input_error_share(self) -> Share:
        return Share(len(self.input_errors), self.read.rows)

    @property
    def too_many_input_errors(self) -> bool:
        rate = self.input_error_share.rate
        return rate is not None and rate > self.inputs.max_input_error_rate + 1e-12

    @property
    def exit_code(self) -> int:
        """2 when the input errors are too many (nothing is suggested); else the suggestion's:
        0, or 1 when the contract overfits the pairs it learned from (it is still written)."""
        if self.suggestion is None or self.too_many_input_errors:
            return EXIT_INPUT_ERROR
        return self.suggestion.exit_code

    @property
    def contract_text(self) -> str | None:
        """The contract to write (None: nothing to write, exit 2)."""
        return None if self.exit_code == EXIT_INPUT_ERROR or self.suggestion is None \
            else self.suggestion.contract_text

    def written(self, output: str) -> LogSuggestion:
        return replace(self, output=output)

    def to_text(self) -> str:
        read, errors = self.read, self.input_error_share
        lines = [f"READ: {read.rows:,} record(s) in {len(read.files):,} file(s): "
                 f"{read.rows - errors.count:,} pair(s), {errors.count:,} input error(s) "
                 f"({errors.percent()})."]
        lines.extend(f"INPUT ERROR {problem}" for problem in self.input_errors[:SHOWN_PROBLEMS])
        if len(self.input_errors) > SHOWN_PROBLEMS:
            lines.append(f"  and {len(self.input_errors) - SHOWN_PROBLEMS:,} more input error(s) "
                         "(--format json lists them all)")
        lines.extend(f"Note: {note}" for note in read.notes)
        if self.suggestion is None or self.too_many_input_errors:
            why = (f"more than --max-input-error-rate {self.inputs.max_input_error_rate:g}"
                   if self.too_many_input_errors else "no pair is left to learn from")
            lines.append(f"NOT SUGGESTED: {errors.text()} of the records are input errors, {why}: check "
                         "the inputs, --source and the field map (--field, --config, audit --dry-run).")
            return "\n".join(lines)
        lines.append(self.suggestion.to_text())
        if self.suggestion.comparison is not None:
            lines.append(self.suggestion.comparison.to_text())
        if self.output is not None:
            lines.append(f"WROTE: the suggested contract to {self.output}.")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        suggestion = None if self.suggestion is None else self.suggestion.to_dict()
        return {
            "schema_version": 1,
            "kind": "log_suggestion",
            "inputs": self.inputs.to_dict(),
            "read": {"records": self.read.rows, "pairs": self.read.rows - len(self.input_errors),
                     "files": list(self.read.files), "notes": list(self.read.notes),
                     "input_errors": self.input_error_share.to_dict()},
            "input_errors": [problem.to_dict() for problem in self.input_errors],
            "exit_code": self.exit_code,
            "output": self.output,
            "suggestion": suggestion,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)


def suggest_logs(inputs: LogInputs, config: SuggestConfig) -> LogSuggestion:
    """Read the logs of `inputs` as the audit reads them and suggest a contract from their pairs.

    Raises `SuggestError` (an `InputError`) for what `run_suggest` refuses (a bad selector, no
    good pair to learn from) and `InputError` for an input path that names nothing.
    """
    check_options(config)  # a bad selector is refused before a night of logs is read
    read = read_pair_records(inputs.paths, inputs.source, inputs.fields, config.input_format,
                             inputs.max_record_bytes)
    unreadable = LogSuggestion(inputs, read, read.problems, None)
    if unreadable.too_many_input_errors or not read.records:
        if not read.rows:
            raise SuggestError(f"the inputs hold no record ({len(read.files)} file(s) read)")
        return unreadable
    suggestion = run_suggest(read.records, config)
    unusable = tuple(replace(read.places[problem.index], reason=problem.reason)
                     for problem in suggestion.unusable)
    errors = sorted((*read.problems, *unusable), key=lambda problem: (problem.source, problem.row))
    return LogSuggestion(inputs, read, tuple(errors), suggestion)
