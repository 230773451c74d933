"""The `frayproof-audit` command line: thin wrappers over the library.

Each command builds its options, calls one library function and renders the result; exit
codes come from the result object (0 pass, 1 fail, 2 bad input or usage).
"""

from __future__ import annotations

import click

from frayproof_audit import __version__
from frayproof_audit.cli.audit_cmd import audit_command, stats_command
from frayproof_audit.cli.init_cmd import init_command
from frayproof_audit.cli.mutate_cmd import mutate_command
from frayproof_audit.cli.single import check_command, validate_command
from frayproof_audit.cli.tool_args_cmd import tool_args_command

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, prog_name="frayproof-audit", message="%(prog)s %(version)s")
def main() -> None:
    """Audit LLM agent context compaction against a YAML context contract.

    Single pairs: validate, check, mutate. Whole logs: audit, stats.
    Exit codes: 0 pass, 1 contract violations or a failed gate, 2 bad input or usage.
    """


main.add_command(validate_command)
main.add_command(check_command)
main.add_command(mutate_command)
main.add_command(audit_command)
main.add_command(stats_command)
main.add_command(tool_args_command)
main.add_command(init_command)
