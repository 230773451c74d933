"""The text form of a `ToolArgsResult`: one row per call and rule, one line per row.

Evidence is escaped and cut to `EVIDENCE_COLUMNS` display columns (`text.one_line`), so model
output with newlines, escape sequences or wide characters never breaks the table (invary Q15).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frayproof_audit.toolargs.text import one_line

if TYPE_CHECKING:
    from frayproof_audit.toolargs.single import ToolArgsResult

EVIDENCE_COLUMNS = 80
HEADERS = ("CALL", "INVARIANT", "SEV", "STATE", "EVIDENCE")


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - len(text))


def render_table(result: ToolArgsResult) -> str:
    rows: list[tuple[str, str, str, str, str]] = []
    for call in result.calls:
        for rule in call.rules:
            evidence = "; ".join(problem.evidence or problem.code for problem in rule.problems)
            codes = " ".join(dict.fromkeys(problem.code for problem in rule.problems))
            shown = f"{codes} {evidence}" if codes else "-"
            rows.append((call.label, rule.rule, rule.severity, rule.state,
                         one_line(shown, EVIDENCE_COLUMNS)))
    widths = [max([len(HEADERS[column])] + [len(row[column]) for row in rows]) for column in range(4)]
    lines = [
        f"trace:   {one_line(result.trace, 100)}",
        f"schema:  {one_line(result.schema, 100)}",
        f"calls:   {len(result.calls)}",
        "",
        " ".join(_pad(header, width) for header, width in zip(HEADERS[:4], widths, strict=True))
        + " " + HEADERS[4],
    ]
    for row in rows:
        lines.append(" ".join(_pad(cell, width) for cell, width in zip(row[:4], widths, strict=True))
                     + " " + row[4])
    states = [rule.state for call in result.calls for rule in call.rules]
    verdict = "PASS" if result.passed else "FAIL"
    strict = " (strict: warnings fail)" if result.strict else ""
    lines += [
        "",
        f"{verdict}: {states.count('pass')} pass / {states.count('FAIL')} fail / "
        f"{states.count('skip')} skip; {result.errors} error(s), {result.warnings} warning(s){strict}",
    ]
    return "\n".join(lines)
