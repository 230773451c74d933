"""`PairStatus`: the verdict on one input record, the values of `pairs.status`.

Its own module so the tally and the summary can use it without importing pyarrow.
"""

from __future__ import annotations

from enum import StrEnum


class PairStatus(StrEnum):
    PASS = "pass"
    """No error finding."""
    FAIL = "fail"
    """At least one error finding."""
    INPUT_ERROR = "input_error"
    """The record could not be audited."""
    ENGINE_ERROR = "engine_error"
    """Auditing the record raised an unexpected exception (a bug); `pairs.engine_error` says which."""
