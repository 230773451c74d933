"""Runs inside the frayproof 0.1.0 environment (Python 3.12): the differential test's oracle.

Reads a JSON list of jobs on stdin, each `{"after": path, "before": path|null,
"contract": path|null}`, and prints one JSON verdict per job: `["ok", passed, findings]`
(each finding `[check, severity, snapshot, message_index, tool_call_id, pin, rule]`),
`["input_error", message]`, or `["crash", exception type]`. Imports nothing of ours.
"""

import json
import sys

import frayproof


def verdict(job):
    try:
        if job["before"] is None:
            report = frayproof.validate(job["after"], job["contract"])
        else:
            report = frayproof.check(job["before"], job["after"], job["contract"])
    except frayproof.InputError as exc:
        return ["input_error", str(exc)]
    except Exception as exc:  # a crash is data here (frayproof's B1)
        return ["crash", type(exc).__name__]
    findings = [
        [v.check, v.severity, v.snapshot, v.message_index, v.tool_call_id, v.pin, v.rule]
        for v in report.violations
    ]
    return ["ok", report.passed, findings]


def main():
    jobs = json.load(sys.stdin)
    json.dump([verdict(job) for job in jobs], sys.stdout)


if __name__ == "__main__":
    main()
