"""What a CI output holds when a command could not run at all (a bad input, option, contract or
output folder: exit 2).

A CI step that uploads the SARIF file or publishes the JUnit report needs a valid document
then too: an empty file fails the upload with a message about the file, not about the input,
and a report that is missing reads as "no tests". So SARIF gets one run with no results whose
invocation failed, the error as its notification; JUnit one test case in error. The message
still goes to stderr and the exit code is still 2.
"""

from __future__ import annotations

import json

from frayproof_audit.render.ci import ERROR, Case
from frayproof_audit.render.junit import junit_document
from frayproof_audit.render.sarif import SCHEMA_URI, TOOL_NAME, automation_id, tool_driver

FAILURE_OUTPUTS = ("sarif", "junit")
"""The outputs that get a document of their own for a command that could not run."""


def failure_document(output: str, command: str, label: str, message: str, exit_code: int,
                     sarif_category: str | None = None) -> str:
    """The `output` (`sarif` or `junit`) of `command` ending with `label: message`."""
    if output == "sarif":
        return sarif_failure(command, label, message, exit_code, sarif_category)
    if output == "junit":
        return junit_failure(command, label, message)
    raise ValueError(f"no failure document for --format {output}")


def sarif_failure(command: str, label: str, message: str, exit_code: int,
                  category: str | None = None) -> str:
    run = {
        "tool": {"driver": tool_driver([])},
        "automationDetails": {"id": automation_id(command, "", category)},
        "invocations": [{
            "executionSuccessful": False,
            "exitCode": exit_code,
            "toolExecutionNotifications": [{
                "level": "error",
                "message": {"text": f"{label}: {message}"},
                "descriptor": {"id": label.lower().replace(" ", "-")},
            }],
        }],
        "results": [],
        "properties": {"verdict": label.lower()},
    }
    return json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=2,
                      ensure_ascii=False)


def junit_failure(command: str, label: str, message: str) -> str:
    return junit_document(command, [Case(TOOL_NAME, f"frayproof_audit.{command}", label.lower(), ERROR,
                                         f"{label}: {message}", type=label)])
