"""`mutate`: would the contract catch a broken transformation?"""

from __future__ import annotations

import sys

import click

from frayproof_audit.cli.common import (
    contract_option,
    fail_input,
    format_option,
    input_format_option,
    parse_operator_list,
    sarif_category_for,
)
from frayproof_audit.cli.option_types import count
from frayproof_audit.errors import InputError
from frayproof_audit.mutate.operators import OPERATORS
from frayproof_audit.mutate.target import MutateRequest, run_request
from frayproof_audit.render import RenderContext, render
from frayproof_audit.shown import read_shown


@click.command("mutate")
@click.option("--input", "input_path", required=True, type=click.Path(),
              help="JSON file with the message list the transformation receives (before).")
@click.option("--target", "target", default=None, metavar="SPEC",
              help="path.py:function or package.module:function. The target is IMPORTED AND "
                   "EXECUTED: its module's top-level code runs, then the function runs once on "
                   "a copy of the input. Contract and input are validated first.")
@click.option("--after", "after_path", default=None, type=click.Path(),
              help="JSON file with a logged output of the transformation; no code is run.")
@contract_option
@input_format_option
@format_option
@click.option("--operators", "operators", default=None, metavar="A,B",
              help=f"Comma-separated operators to run (default all): {', '.join(OPERATORS)}.")
@click.option("--max-mutants-per-pair", "max_mutants", type=count(0), default=0,
              metavar="N",
              help="Judge at most N sites, a deterministic uniform sample per operator; the rest "
                   "are skipped entries with reason Budget (default 0: every site).")
@click.option("--verify", is_flag=True, default=False,
              help="Also recheck every mutant from scratch (slow) and fail loudly if the fast "
                   "path disagrees.")
def mutate_command(input_path: str, target: str | None, after_path: str | None,
                   contract: str | None, input_format: str | None, output_format: str,
                   operators: str | None, max_mutants: int, verify: bool,
                   max_results: int | None, sarif_category: str | None) -> None:
    """Corrupt the real output at every eligible site with the fault operators and report
    which corruptions the contract catches.

    Give --target to run a transformation once on the input, or --after to test an output
    that was logged. The real output must pass the contract first (else: BASELINE FAIL, no
    mutants). Exit 0 when every applicable mutant is caught; 1 for survivors, a failed
    baseline or nothing applicable; 2 for bad input.

    \b
    Example:
        frayproof-audit mutate --input fixtures/mutation_session.json \\
            --target examples/mutation_compactor.py:compact \\
            --contract examples/mutation_contract.yaml
    """
    if (target is None) == (after_path is None):
        raise click.UsageError("Give exactly one of --target or --after.")
    category = sarif_category_for(output_format, sarif_category)
    request = MutateRequest(input=input_path, target=target, after=after_path,
                            contract=contract, operators=parse_operator_list(operators),
                            verify=verify, input_format=input_format,
                            max_mutants=max_mutants or None)
    try:
        report = run_request(request)
    except InputError as exc:
        fail_input(str(exc), output_format)
    context = RenderContext({"before": input_path, "after": request.output_file},
                            request.output_file, contract, max_results, sarif_category=category)
    click.echo(render(report, output_format, read_shown(report, output_format, context)))
    sys.exit(report.exit_code)
