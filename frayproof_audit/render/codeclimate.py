"""`--format codeclimate`: GitLab's Code Quality report (a Code Climate issue list) of findings.

GitLab shows these in a merge request's Code Quality widget and diff
(https://docs.gitlab.com/ee/ci/testing/code_quality.html): a JSON array of issues, each with
`description`, `check_name`, `fingerprint`, `severity` and `location` (`path`,
`lines.begin`). One issue per finding, surviving mutant or unreadable record, as SARIF and the
annotations have them: `check_name` is the condition code (or the operator), the fingerprint
the one SARIF's `partialFingerprints` is (stable across runs: code, pair, site), the path the
snapshot's or record's file as the command was given it (GitLab links paths relative to the
repository), the line the one the other CI outputs point at (1 when unknown). Severities:
error → `major`, warning → `minor`, note → `info`. Past `--max-results` issues (10,000 by
default) errors are kept first and one `info` issue says how many were left out.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from frayproof_audit.render.ci import Item, RenderContext, fingerprints, left_out_sentence
from frayproof_audit.render.failure import Failure, Said
from frayproof_audit.render.outcomes import outcome_of

DEFAULT_MAX_ISSUES = 10_000
"""Issues written at most: a report GitLab's widget still loads quickly."""
SEVERITIES = {"error": "major", "warning": "minor", "note": "info"}
TOOL_CHECK = "frayproof-audit"
"""`check_name` of the tool's own issues: a command that could not run, issues left out."""


def _path(item: Item, fallback: str) -> str:
    return item.place.uri or fallback


def _issue(description: str, check: str, fingerprint: str, severity: str, path: str,
           line: int | None) -> dict[str, Any]:
    return {"type": "issue", "description": description, "check_name": check,
            "categories": ["Bug Risk"],
            "fingerprint": hashlib.sha256(fingerprint.encode("utf-8", "surrogatepass")).hexdigest(),
            "severity": severity, "location": {"path": path, "lines": {"begin": line or 1}}}


def render_codeclimate(result: object, context: RenderContext) -> str:
    cap = max(1, context.max_results or DEFAULT_MAX_ISSUES)
    outcome = outcome_of(result, context)
    items = list(outcome.items)
    shown = items[: cap if outcome.items_total <= cap else cap - 1]
    fallback = context.subject or f"frayproof-audit {outcome.command}"
    issues = [_issue(item.message if item.message.startswith(item.rule)
                     else f"{item.rule}: {item.message}",
                     item.rule, print_, SEVERITIES[item.level], _path(item, fallback),
                     item.place.line)
              for item, print_ in zip(shown, fingerprints(shown), strict=True)]
    left_out = outcome.items_total - len(shown)
    if left_out > 0:
        issues.append(_issue(left_out_sentence(left_out, outcome.items_total, "issues",
                                               outcome.command),
                             TOOL_CHECK, f"left-out:{outcome.command}", "info", fallback, None))
    return json.dumps(issues, indent=2, ensure_ascii=False)


def codeclimate_failure(failure: Failure) -> Said:
    """The error as one `critical` issue (so the merge request shows it), and on stderr."""
    issue = _issue(failure.line, TOOL_CHECK, f"failure:{failure.command}:{failure.line}",
                   "critical", f"frayproof-audit {failure.command}", None)
    return Said(json.dumps([issue], indent=2, ensure_ascii=False), failure.line)
