"""The time one call's arguments may take to judge, and the verdict when they take longer.

RE2 keeps patterns linear and `keywords.all_unique` keeps `uniqueItems` linear, but two things
stay beyond any bound known before running: a pattern only a backtracking engine can run
(backreferences, lookaround), and jsonschema's `unevaluatedProperties` / `unevaluatedItems`,
which re-validate every subtree under in-place applicators (2^depth on recursive schemas).
So each call gets a deadline (`CALL_SECONDS`, plus `PER_MIB_SECONDS` per MiB of arguments
text), checked by the backtracking engine and at every applicator keyword; a call that reaches
it raises `NotJudged`, and the `schema` rule reports `TA-NOT-JUDGED` at its severity. Not judged
is never a pass: a log cannot make a call acceptable by making it slow to judge.

The deadline is per thread (a corpus worker may judge in threads), set by `start`.
"""

from __future__ import annotations

import threading
import time

CALL_SECONDS = 1.0
"""A call's budget before its size is counted: judging a logged call takes microseconds."""
PER_MIB_SECONDS = 1.0
"""Added per MiB of arguments text, so the bound grows with the argument, never beyond."""


class NotJudged(Exception):
    """The call could not be judged within bounds; the message is the finding's evidence."""


class _State(threading.local):
    deadline: float | None = None
    seconds: float = CALL_SECONDS


_STATE = _State()


def start(size: int) -> tuple[float | None, float]:
    """Start judging one call of `size` characters of arguments text; returns what `stop`
    restores. (Two plain calls, not a context manager: this runs for every call judged.)"""
    seconds = CALL_SECONDS + PER_MIB_SECONDS * size / (1024 * 1024)
    previous = _STATE.deadline, _STATE.seconds
    _STATE.deadline, _STATE.seconds = time.monotonic() + seconds, seconds
    return previous


def stop(previous: tuple[float | None, float]) -> None:
    _STATE.deadline, _STATE.seconds = previous


def out_of_time(what: str) -> str:
    return f"not judged: {what} took longer than the call's time budget ({_STATE.seconds:.3g} s)"


def remaining(what: str) -> float:
    """Seconds left for `what` (raises `NotJudged` when none are); outside a call, one call's
    base budget, so a match is bounded wherever it runs."""
    deadline = _STATE.deadline
    if deadline is None:
        return CALL_SECONDS
    left = deadline - time.monotonic()
    if left <= 0:
        raise NotJudged(out_of_time(what))
    return left


def check() -> None:
    """Raise `NotJudged` when the current call is past its deadline (cheap: asked per keyword)."""
    deadline = _STATE.deadline
    if deadline is not None and time.monotonic() > deadline:
        raise NotJudged(out_of_time("validating the arguments"))
