"""Options and error rendering shared by every command."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import click

from frayproof_audit.cli.choices import LiveHelp, RegistryChoice
from frayproof_audit.cli.option_types import count
from frayproof_audit.formats import FORMATS
from frayproof_audit.render import OUTPUTS, Failure, Said, get_output, plain_outputs
from frayproof_audit.report import EXIT_INPUT_ERROR

if TYPE_CHECKING:
    from frayproof_audit.corpus.inputs.field_map import FieldMap
    from frayproof_audit.render.tables import TableOutput

FORMAT_CHOICE = RegistryChoice(lambda: OUTPUTS)
PLAIN_FORMAT_CHOICE = RegistryChoice(plain_outputs)


def input_format_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--input-format",
        "input_format",
        type=RegistryChoice(lambda: FORMATS),
        default=None,
        help="Wire format of the snapshots (default: the contract's `format`, else openai); "
             "in a corpus, a record's own `format` field wins.",
    )(function)


def field_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--field` and `--config`: where a pair record's fields live (`field_map` reads them)."""
    function = click.option(
        "--config", "config_file", type=click.Path(dir_okay=False), default=None,
        help="YAML file with a fields: block (NAME: dotted.path); --field wins over it.")(function)
    return click.option(
        "--field", "field_specs", multiple=True, metavar="NAME=PATH",
        help="Where a field lives in a pair record, as a dotted path, e.g. "
             "before=request.messages (pair records only: a source derives its pairs).")(function)


def field_map(config_file: str | None, specs: tuple[str, ...]) -> FieldMap:
    """The field map of `--config` and `--field` (a bad one is a `ConfigError`, exit 2)."""
    from frayproof_audit.corpus.inputs.field_map import FieldMap, load_fields_file, parse_field_specs

    fields = FieldMap()
    if config_file is not None:
        fields = fields.with_specs(load_fields_file(config_file))
    return fields.with_specs(parse_field_specs(specs))


def contract_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--contract",
        "contract",
        type=click.Path(),
        default=None,
        help="YAML context contract. Without one: pairing, unique ids and structure, as errors.",
    )(function)


def _sarif_category(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from frayproof_audit.render.sarif import SarifCategoryError, sarif_category

    try:
        return sarif_category(value)
    except SarifCategoryError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


def format_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--format` with every output, and `--max-results` and `--sarif-category` for the CI ones."""
    function = click.option(
        "--sarif-category",
        "sarif_category",
        default=None,
        metavar="NAME",
        callback=_sarif_category,
        help="With --format sarif: the code-scanning category (automationDetails.id up to its "
             "last '/'; default frayproof-audit/COMMAND). Give each analysis uploaded for one "
             "commit its own, e.g. one per corpus.",
    )(function)
    function = click.option(
        "--max-results",
        "max_results",
        type=count(1),
        default=None,
        metavar="N",
        cls=LiveHelp,
        help_of=_max_results_help,
    )(function)
    return click.option(
        "--format",
        "output_format",
        type=FORMAT_CHOICE,
        default="text",
        show_default=True,
        help="text for people, json for machines; sarif (code scanning), github (workflow "
             "annotations) or junit (test reports) for CI. The exit code is the same for all.",
    )(function)


def _max_results_help() -> str:
    caps = ", ".join(f"{output.cap} {output.name}" for output in OUTPUTS.values() if output.ci)
    return ("Cap for sarif results, github annotations or junit test cases, the most severe "
            f"kept and the rest counted in a note (default: {caps}).")


def sarif_category_for(output_format: str, sarif_category: str | None) -> str | None:
    """`--sarif-category`, refused with an output it does not apply to (it would change nothing)."""
    return _own_option("sarif_category", "--sarif-category", output_format, sarif_category)


def _own_option(name: str, flag: str, output_format: str, value: str | None) -> str | None:
    """An option that applies to some outputs only (`Output.options`): refused with another."""
    if value is not None and name not in get_output(output_format).options:
        takers = " or ".join(f"--format {output.name}" for output in OUTPUTS.values()
                             if name in output.options)
        raise click.UsageError(f"{flag} applies to {takers} only, not --format {output_format}.")
    return value


def plain_format_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--format",
        "output_format",
        type=PLAIN_FORMAT_CHOICE,
        default="text",
        show_default=True,
        help="text for people, json for machines.",
    )(function)


def fail_input(message: str, output: str | TableOutput, label: str = "INPUT ERROR") -> NoReturn:
    """Print an input error the way the chosen output shows a command that could not run
    (`Output.failure`; a results output by name, or a table output), then exit 2 (`label` says
    whose fault: `OUTPUT ERROR` when the output folder cannot be used or written)."""
    show = get_output(output).failure if isinstance(output, str) else output.failure
    context = click.get_current_context()
    said: Said = show(Failure(context.info_name or "frayproof-audit", label, message,
                              EXIT_INPUT_ERROR, context.params.get("sarif_category")))
    if said.stdout is not None:
        click.echo(said.stdout)
    if said.stderr is not None:
        click.echo(said.stderr, err=True)
    sys.exit(EXIT_INPUT_ERROR)


def parse_operator_list(text: str | None) -> tuple[str, ...] | None:
    """`--operators a,b` → ("a", "b"); None (the option not given) means every operator.

    Blank items are dropped, so "a,,b," is ("a", "b") and "" is (): the caller says why that is
    not allowed, because it knows which operators exist.
    """
    if text is None:
        return None
    return tuple(name.strip() for name in text.split(",") if name.strip())
