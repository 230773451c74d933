"""Output formats of results (`--format`), one module each, registered in `OUTPUTS`.

A result is a `Report` (validate, check), a `MutationReport` (mutate), a `RunSummary` (audit),
or the result of `tool-args`, `inspect`, `repair` or `compact`; each owns its verdict and exit
code and knows its own text and JSON forms. An `Output` holds everything about one format: how
it renders a result (with a `RenderContext`: the files the command read, a cap), what it shows
when the command could not run (`failure`), and whether it is a CI output (`cap`): `sarif`,
`github`, `junit` and `codeclimate` write one `Outcome` (`render/ci.py`), which only validate, check, mutate
and audit results have, and show what the caller read for them (`frayproof_audit.shown`). The
format never changes the exit code. Adding an output is a module here and one entry in
`OUTPUTS`; the commands' `--format` choices, `--max-results`' defaults and the failure path are
read from this table. (`stats` and `trend` show tables: `render/tables.py`.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol

from frayproof_audit.render.ci import RenderContext, Shown
from frayproof_audit.render.failure import Failure, Said, json_failure, text_failure


class Renderable(Protocol):
    """What every result offers every output format."""

    @property
    def exit_code(self) -> int: ...

    def to_text(self) -> str: ...

    def to_json(self) -> str: ...


Renderer = Callable[[Renderable, RenderContext], str]


class Output(NamedTuple):
    """One output format of results (the registry's values are named tuples, as every
    command's imports are: a dataclass costs 8x more to define)."""

    name: str
    render: Renderer
    """The text of a result."""
    failure: Callable[[Failure], Said]
    """What is printed for a command that could not run (exit 2)."""
    cap: int | None = None
    """A CI output's default number of results (`--max-results` replaces it). A CI output
    shows a result's `Outcome`, so only the commands whose results have one offer it, and they
    read what it shows before rendering. None: an output every result has."""
    options: tuple[str, ...] = ()
    """Options of the commands that apply to this output only (`sarif_category`)."""

    @property
    def ci(self) -> bool:
        return self.cap is not None

    def limit(self, max_results: int | None) -> int:
        """The number of results shown: `--max-results`, else the output's own cap."""
        return max(1, max_results or self.cap or 1)


def _text(result: Renderable, context: RenderContext) -> str:
    return result.to_text()


def _json(result: Renderable, context: RenderContext) -> str:
    return result.to_json()


# The CI outputs load the registries (checks, operators) and the Outcome builders: imported
# when one of them runs, never by a command that prints text or JSON.

def _sarif(result: Renderable, context: RenderContext) -> str:
    from frayproof_audit.render.sarif import render_sarif

    return render_sarif(result, context)


def _sarif_failure(failure: Failure) -> Said:
    from frayproof_audit.render.sarif import sarif_failure

    return sarif_failure(failure)


def _github(result: Renderable, context: RenderContext) -> str:
    from frayproof_audit.render.github import render_github

    return render_github(result, context)


def _github_failure(failure: Failure) -> Said:
    from frayproof_audit.render.github import github_failure

    return github_failure(failure)


def _junit(result: Renderable, context: RenderContext) -> str:
    from frayproof_audit.render.junit import render_junit

    return render_junit(result, context)


def _junit_failure(failure: Failure) -> Said:
    from frayproof_audit.render.junit import junit_failure

    return junit_failure(failure)


def _codeclimate(result: Renderable, context: RenderContext) -> str:
    from frayproof_audit.render.codeclimate import render_codeclimate

    return render_codeclimate(result, context)


def _codeclimate_failure(failure: Failure) -> Said:
    from frayproof_audit.render.codeclimate import codeclimate_failure

    return codeclimate_failure(failure)


OUTPUTS: dict[str, Output] = {output.name: output for output in (
    Output("text", _text, text_failure),
    Output("json", _json, json_failure),
    Output("sarif", _sarif, _sarif_failure, cap=25_000, options=("sarif_category",)),
    Output("github", _github, _github_failure, cap=50),
    Output("junit", _junit, _junit_failure, cap=20_000),
    Output("codeclimate", _codeclimate, _codeclimate_failure, cap=10_000),
)}
"""Output format name → output. `text` is for people, `json` for machines, `sarif` for code
scanning (GitHub), `github` for workflow annotations, `junit` for CI test reports,
`codeclimate` for GitLab's Code Quality report. The caps are the CI systems' limits (GitHub
code scanning's 25,000 results per run, the 50 annotations it shows per job, GitLab's 30 MB
reports) and equal the modules' own defaults (a test checks)."""


def get_output(name: str) -> Output:
    """The registered output of that name (`KeyError` for another: click offers only these)."""
    return OUTPUTS[name]


def plain_outputs() -> tuple[str, ...]:
    """The outputs every result has (commands whose results have no `Outcome` offer only these)."""
    return tuple(name for name, output in OUTPUTS.items() if not output.ci)


def render(result: Renderable, output: str, context: RenderContext | None = None) -> str:
    """The text of `result` in output format `output` (a key of `OUTPUTS`). A CI output shows
    what `context.shown` holds: read it first with `frayproof_audit.shown.read_shown`."""
    return OUTPUTS[output].render(result, context or RenderContext())


__all__ = ["OUTPUTS", "Failure", "Output", "RenderContext", "Renderable", "Renderer", "Said",
           "Shown", "get_output", "plain_outputs", "render"]
