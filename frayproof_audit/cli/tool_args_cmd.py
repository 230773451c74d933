"""`tool-args`: every tool call of one saved trace against tool schemas (invary's `check`)."""

from __future__ import annotations

import sys

import click

from frayproof_audit.cli.common import fail_input, plain_format_option
from frayproof_audit.errors import InputError
from frayproof_audit.render import render
from frayproof_audit.toolargs.policy import (
    ARGUMENT_POLICIES,
    DEFAULT_EMPTY_ARGUMENTS,
    DEFAULT_MISSING_ARGUMENTS,
    LevelProblem,
    make_policy,
    parse_levels,
)
from frayproof_audit.toolargs.single import check_tool_args


def _levels(items: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """`--rule schema=off --rule no_schema_drift=error` → (rule, level) pairs."""
    given: dict[str, str] = {}
    for item in items:
        rule, sep, level = item.partition("=")
        if not sep:
            raise LevelProblem(f"--rule {item!r}: write RULE=LEVEL (for example schema=off)")
        given[rule.strip()] = level.strip()
    return parse_levels(given)


@click.command("tool-args")
@click.option("--trace", "trace", required=True, type=click.Path(),
              help="JSON file: a chat completion response, a message with tool_calls, an array of "
                   "messages, a tool call, or {name?, arguments}. Every call is checked.")
@click.option("--schema", "schema", required=True, type=click.Path(),
              help="JSON file of tool definitions: one, a list, or {\"tools\": [...]} (OpenAI "
                   "function tools, bare {name, parameters}, or Anthropic {name, input_schema}).")
@click.option("--rule", "rules", multiple=True, metavar="RULE=LEVEL",
              help="Set a rule's level: error, warning or off (repeatable). Defaults: every rule "
                   "error, no_schema_drift warning.")
@click.option("--empty-arguments", type=click.Choice(ARGUMENT_POLICIES), default=DEFAULT_EMPTY_ARGUMENTS,
              show_default=True, help='How arguments "" are read.')
@click.option("--missing-arguments", type=click.Choice(ARGUMENT_POLICIES),
              default=DEFAULT_MISSING_ARGUMENTS, show_default=True,
              help="How absent or null arguments are read.")
@click.option("--strict", is_flag=True, help="Warnings fail too (exit 1).")
@plain_format_option
def tool_args_command(
    trace: str, schema: str, rules: tuple[str, ...], empty_arguments: str, missing_arguments: str,
    strict: bool, output_format: str,
) -> None:
    """Check the arguments of every tool call in a saved trace against tool schemas.

    Rules: valid_json, unknown_tool, required_fields, arg_types, no_schema_drift, schema (full
    JSON Schema). Exit 0 pass, 1 a rule of error severity failed (any with --strict), 2 the
    check could not run (unreadable file, bad schema, unrecognized trace).

    \b
    Example:
        frayproof-audit tool-args --trace examples/tool_args/trace.json \\
            --schema examples/tool_args/tools.json
    """
    try:
        policy = make_policy(_levels(rules), empty_arguments=empty_arguments,
                             missing_arguments=missing_arguments)
    except LevelProblem as exc:
        fail_input(f"--rule: {exc}", output_format)
    try:
        result = check_tool_args(trace, schema, policy=policy, strict=strict)
    except InputError as exc:
        fail_input(str(exc), output_format)
    click.echo(render(result, output_format))
    sys.exit(result.exit_code)
