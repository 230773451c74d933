"""`--format github`: GitHub Actions workflow commands, one annotation per finding or survivor.

`::error file=F,line=L,title=T::message` (`warning`, `notice` likewise). GitHub shows at most
10 annotations of each level per step and 50 per job, so by default 50 lines are written, the
most severe first; a last `::notice` line always gives the verdict and, when the cap cut the
list, how many were left out. Escaping follows the Actions toolkit: in the message `%`, CR and
LF; in a property also `:` and `,`.
"""

from __future__ import annotations

from frayproof_audit.render.ci import Item, RenderContext, left_out_sentence
from frayproof_audit.render.failure import Failure, Said
from frayproof_audit.render.outcomes import outcome_of

DEFAULT_MAX_ANNOTATIONS = 50
"""Annotations GitHub shows per job."""
_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: like a message, and `:` and `,` too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, **properties: str | int | None) -> str:
    """One workflow command line; properties that are None are left out."""
    given = ",".join(f"{name}={escape_property(str(value))}"
                     for name, value in properties.items() if value is not None)
    return f"::{_COMMAND[level]}{' ' + given if given else ''}::{escape_data(message)}"


def _line(item: Item) -> str:
    title = item.rule
    return command(item.level, item.message, file=item.place.uri, line=item.place.line,
                   title=title)


def render_github(result: object, context: RenderContext) -> str:
    cap = max(1, context.max_results or DEFAULT_MAX_ANNOTATIONS)
    outcome = outcome_of(result, context)
    shown = list(outcome.items[:cap])
    left_out = outcome.items_total - len(shown)
    lines = [_line(item) for item in shown]
    verdict = outcome.verdict
    if left_out > 0:
        left = left_out_sentence(left_out, outcome.items_total, "annotations", outcome.command)
        verdict += f" · {left}"
    lines.append(command("note", verdict, title=f"frayproof-audit {outcome.command}"))
    return "\n".join(lines)


def github_failure(failure: Failure) -> Said:
    """The error as an `::error` annotation (so the run's page shows it), and on stderr."""
    return Said(command("error", failure.line, title="frayproof-audit"), failure.line)
