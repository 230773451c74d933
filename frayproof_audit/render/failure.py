"""What an output shows when a command could not run at all (a bad input, option, contract or
output folder: exit 2): each `Output` has a `failure` function from a `Failure` to what is
`Said` on stdout and stderr.

The message always goes to stderr as one `LABEL: message` line, except with `json`, where the
one-line JSON envelope on stdout replaces it. A CI step that uploads the SARIF file or publishes
the JUnit report needs a valid document then too: an empty file fails the upload with a message
about the file, not about the input, and a report that is missing reads as "no tests". So
`sarif` writes one run with no results whose invocation failed, the error as its notification,
and `junit` one test case in error (`sarif.sarif_failure`, `junit.junit_failure`); `github`
writes the line as an `::error` annotation too.
"""

from __future__ import annotations

from typing import NamedTuple

from frayproof_audit.report import input_error_json


class Failure(NamedTuple):
    """A command that could not run: `label` says whose fault (`INPUT ERROR`, `OUTPUT ERROR`)."""

    command: str
    label: str
    message: str
    exit_code: int
    sarif_category: str | None = None

    @property
    def line(self) -> str:
        return f"{self.label}: {self.message}"


class Said(NamedTuple):
    """What to print: `stdout` first, then `stderr` (None: nothing there)."""

    stdout: str | None = None
    stderr: str | None = None


def text_failure(failure: Failure) -> Said:
    return Said(stderr=failure.line)


def json_failure(failure: Failure) -> Said:
    return Said(stdout=input_error_json(failure.message))
