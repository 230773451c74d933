"""Capture a pair at call time, judge and record it afterwards: the one path `guard(record=…)`
and every framework hook take.

The before snapshot is frozen (serialized, and loaded when judged) when the transformation is
*called*, so an edit the transformation makes to its own input cannot hide a loss, neither from
the check nor from the log. A pair is recorded whether it passes or not, with the live verdict
under the record's `guard` key, before `on_violation` acts, so a pair that `raise` stops is
still in tonight's log.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from frayproof_audit.capture.records import FrozenSnapshot, RecordError, freeze, to_wire
from frayproof_audit.capture.writer import CaptureError, PairWriter
from frayproof_audit.contract import Contract
from frayproof_audit.engine import check_loaded
from frayproof_audit.errors import ContractViolation, ContractWarning, InputError
from frayproof_audit.loaded import Loaded
from frayproof_audit.on_violation import checked_mode
from frayproof_audit.report import Report
from frayproof_audit.snapshot import load_source

LOGGER = logging.getLogger("frayproof_audit")

SessionId = str | int | None
SessionSource = str | int | Callable[[Any], SessionId] | None


def _judgeable(value: Any) -> tuple[Any, str | None]:
    """What `check` can load: LangChain messages converted (LangChain's converter, format
    `openai`), a frozen capture as its JSON; anything else as given, so paths, `Snapshot`s and
    lists load as `check` loads them."""
    if isinstance(value, FrozenSnapshot):
        return value.value(), value.format
    if isinstance(value, list | tuple) and value:
        wire, fmt = to_wire(list(value))
        if fmt is not None:
            return wire, fmt
    return value, None


@dataclass(frozen=True)
class Before:
    """A captured before snapshot: frozen for the log (None: nothing to record, or it could not
    be serialized), loaded for the check (None: not judged, or loaded from `frozen` later)."""

    frozen: FrozenSnapshot | None
    loaded: Loaded | None
    format: str | None
    problem: InputError | None = None
    """Why a hook's judged input could not be loaded (reported when the pair is finished)."""


def verdict(report: Report, fingerprint: str) -> dict[str, Any]:
    """The live verdict a record carries under `guard`: pass/fail, counts, the condition codes
    found (first-seen order) and the contract's fingerprint (`runs.contract_fingerprint` of an
    audit judged by the same contract)."""
    codes = list(dict.fromkeys(v.code for v in report.violations))
    return {"passed": report.passed, "errors": report.errors, "warnings": report.warnings,
            "codes": codes, "contract": fingerprint}


def apply(report: Report, mode: str, stacklevel: int) -> None:
    """`on_violation` for a report with an error finding (`stacklevel` counted from here)."""
    if mode == "raise":
        raise ContractViolation(report)
    if mode == "warn":
        warnings.warn(ContractWarning(report.to_text()), stacklevel=stacklevel)
    else:
        LOGGER.error("Context contract violated:\n%s", report.to_text())


class PairCapture:
    """One transformation's capture settings: where pairs go, the contract that judges them
    (None: record only), and what a failing pair does.

    `hook=True` (framework hooks) treats a snapshot the contract cannot read like a violation
    (per `on_violation`, when the pair is finished), where `guard` raises `InputError` at once,
    as `check` would.
    `record_unchanged=False` skips a call whose output equals its input (a trimmer that had
    nothing to trim): no check, no record."""

    def __init__(self, writer: PairWriter | None, contract: Contract | None, on_violation: str,
                 compactor: str, *, input_format: str | None = None, record_unchanged: bool = True,
                 hook: bool = False, session_id: SessionSource = None) -> None:
        checked_mode(on_violation)
        if writer is not None and not isinstance(writer, PairWriter):
            raise TypeError(f"record must be a PairWriter, got {type(writer).__name__}")
        if type(compactor) is not str:
            raise TypeError(f"compactor must be a string, got {type(compactor).__name__}")
        self.writer = writer
        self.contract = contract
        self.mode = on_violation
        self.compactor = compactor
        self.format = input_format or (contract.format if contract is not None else None)
        self.fingerprint = contract.fingerprint if contract is not None and writer is not None else ""
        self.record_unchanged = record_unchanged
        self.hook = hook
        self.session_id = session_id

    def session_of(self, subject: Any) -> SessionId:
        """The session id for a call whose input is `subject`; a failing callable is no id."""
        source = self.session_id
        if not callable(source):
            return source
        try:
            found = source(subject)
        except Exception as exc:
            LOGGER.warning("capture: session_id callable failed: %s", exc)
            return None
        return found if found is None or type(found) in (str, int) else str(found)

    def begin(self, value: Any) -> Before:
        """Capture `value`, the input, now. Judged captures are loaded at once, so a bad input
        raises `InputError` here, before the transformation runs (`guard`'s contract)."""
        loaded: Loaded | None = None
        problem: InputError | None = None
        fmt = self.format
        logged = value
        if self.contract is not None:
            judged, forced = _judgeable(value)
            if forced is not None:  # converted once, for the check and for the log
                fmt, logged = forced, judged
            try:
                loaded = load_source(judged, fmt)
            except InputError as exc:
                if not self.hook:
                    raise
                problem = exc
        return Before(self._freeze(logged), loaded, fmt, problem)

    def begin_frozen(self, frozen: FrozenSnapshot) -> Before:
        """A capture frozen elsewhere (by a hook that saw the input earlier), loaded if judged
        only when the pair is finished."""
        return Before(frozen, None, frozen.format or self.format)

    def _freeze(self, value: Any) -> FrozenSnapshot | None:
        if self.writer is None:
            return None
        try:
            return freeze(value)
        except RecordError as exc:
            self._capture_failed(exc)
            return None

    def _capture_failed(self, exc: Exception) -> None:
        writer = self.writer
        assert writer is not None
        writer._lost(1, exc)
        if writer.strict:
            raise CaptureError(f"pair not written to {writer.root}: {exc}") from exc

    def finish(self, before: Before, value: Any, *, session_id: SessionId = None,
               tools: list[Any] | None = None, stacklevel: int = 2) -> None:
        """Judge and record the pair (`value` is the output); then apply `on_violation`
        (`stacklevel` of a warning counted from here)."""
        frozen_after = self._freeze(value) if before.frozen is not None else None
        if (not self.record_unchanged and frozen_after is not None and before.frozen is not None
                and frozen_after.data == before.frozen.data):
            return
        if self.contract is None:
            self._record(before, frozen_after, session_id, None, tools)
            return
        try:
            if before.problem is not None:
                raise before.problem
            loaded_before = before.loaded
            if loaded_before is None:
                assert before.frozen is not None
                loaded_before = load_source(before.frozen.value(), before.format, copy=False)
            judged, forced = _judgeable(value)
            loaded_after = load_source(judged, forced or before.format)
        except InputError as exc:
            self._record(before, frozen_after, session_id,
                         {"passed": False, "input_error": str(exc), "contract": self.fingerprint}, tools)
            if not self.hook:
                raise
            self._input_error(exc, stacklevel + 1)
            return
        report = check_loaded(loaded_before, loaded_after, self.contract)
        if self.writer is not None:
            self._record(before, frozen_after, session_id, verdict(report, self.fingerprint), tools)
        if not report.passed:
            apply(report, self.mode, stacklevel + 1)

    def _input_error(self, exc: InputError, stacklevel: int) -> None:
        if self.mode == "raise":
            raise exc
        text = f"Context contract could not be checked: {exc}"
        if self.mode == "warn":
            warnings.warn(ContractWarning(text), stacklevel=stacklevel)
        else:
            LOGGER.error(text)

    def _record(self, before: Before, after: FrozenSnapshot | None, session_id: SessionId,
                live: dict[str, Any] | None, tools: list[Any] | None) -> None:
        writer = self.writer
        if writer is None or before.frozen is None or after is None:
            return
        extra: dict[str, Any] = {} if live is None else {"guard": live}
        fmt = before.frozen.format or after.format or before.format
        writer.record(before.frozen, after, compactor=self.compactor, session_id=session_id,
                      format=fmt, tools=tools, **extra)
