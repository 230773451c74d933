"""The `frayproof-audit` command line: thin wrappers over the library.

Each command builds its options, calls one library function and renders the result; exit
codes come from the result object (0 pass, 1 fail, 2 bad input or usage, or nothing audited),
and from `entry.CommandGroup` for what ends a command without one (123 a bug, 130 Ctrl-C,
143 SIGTERM, 2 a machine fault, 141 a closed stdout).
"""

from __future__ import annotations

import click

from frayproof_audit import __version__
from frayproof_audit.cli.audit_cmd import audit_command, stats_command
from frayproof_audit.cli.entry import CommandGroup
from frayproof_audit.cli.init_cmd import init_command
from frayproof_audit.cli.mutate_cmd import mutate_command
from frayproof_audit.cli.report_cmd import report_command
from frayproof_audit.cli.single import check_command, validate_command
from frayproof_audit.cli.tool_args_cmd import tool_args_command
from frayproof_audit.cli.transcript_cmd import compact_command, inspect_command, repair_command
from frayproof_audit.cli.trend_cmd import trend_command

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}


@click.group(cls=CommandGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, prog_name="frayproof-audit", message="%(prog)s %(version)s")
def main() -> None:
    """Audit LLM agent context compaction against a YAML context contract.

    Single pairs: validate, check, mutate. Whole logs: audit, stats, trend, report. Tool-call
    arguments: tool-args. Transcripts: inspect, repair, compact. A starter contract: init.

    Exit codes: 0 pass, 1 contract violations or a failed gate, 2 bad input or usage
    (audit: also nothing audited, or a full disk), 123 an internal error (a bug; the
    traceback goes to a crash log), 130 Ctrl-C, 143 SIGTERM.
    """


main.add_command(validate_command)
main.add_command(check_command)
main.add_command(mutate_command)
main.add_command(audit_command)
main.add_command(stats_command)
main.add_command(trend_command)
main.add_command(report_command)
main.add_command(tool_args_command)
main.add_command(init_command)
main.add_command(inspect_command)
main.add_command(repair_command)
main.add_command(compact_command)
