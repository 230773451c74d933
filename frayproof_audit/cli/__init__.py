"""The `frayproof-audit` command line: thin wrappers over the library.

Each command builds its options, calls one library function and renders the result; exit
codes come from the result object (0 pass, 1 fail, 2 bad input or usage, or nothing audited),
and from `entry.CommandGroup` for what ends a command without one (123 a bug, 130 Ctrl-C,
143 SIGTERM, 2 a machine fault, 141 a closed stdout).
"""

from __future__ import annotations

import os

import click

# No command does linear algebra, but pyarrow imports numpy, whose OpenBLAS starts one thread per
# core that spins for a while: about 0.1 s of CPU per run, taken from the workers of a parallel
# audit. Set before any command imports pyarrow; a value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# loky's resource tracker (a process of its own, started with this environment) warns on stderr
# about the semaphores of workers that a stopped run killed, which it cleans up all the same; a
# command that ends on an error owes the user its one line. Only that module's warnings.
os.environ.setdefault("PYTHONWARNINGS", "ignore::UserWarning:joblib.externals.loky.backend.resource_tracker")

from frayproof_audit import __version__
from frayproof_audit.cli.entry import CommandGroup
from frayproof_audit.cli.lazy import LazyCommands

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}

COMMANDS = {
    "validate": "frayproof_audit.cli.single:validate_command",
    "check": "frayproof_audit.cli.single:check_command",
    "mutate": "frayproof_audit.cli.mutate_cmd:mutate_command",
    "audit": "frayproof_audit.cli.audit_cmd:audit_command",
    "pairs": "frayproof_audit.cli.pairs_cmd:pairs_command",
    "stats": "frayproof_audit.cli.audit_cmd:stats_command",
    "trend": "frayproof_audit.cli.trend_cmd:trend_command",
    "report": "frayproof_audit.cli.report_cmd:report_command",
    "show": "frayproof_audit.cli.show_cmd:show_command",
    "runs": "frayproof_audit.cli.runs_cmd:runs_command",
    "rejudge": "frayproof_audit.cli.rejudge_cmd:rejudge_command",
    "tool-args": "frayproof_audit.cli.tool_args_cmd:tool_args_command",
    "suggest": "frayproof_audit.cli.suggest_cmd:suggest_command",
    "init": "frayproof_audit.cli.init_cmd:init_command",
    "inspect": "frayproof_audit.cli.transcript_cmd:inspect_command",
    "repair": "frayproof_audit.cli.transcript_cmd:repair_command",
    "compact": "frayproof_audit.cli.transcript_cmd:compact_command",
}
"""Every command by name, as `module:attribute`: imported only when that command runs (or
`--help` lists them)."""


@click.group(cls=CommandGroup, context_settings=CONTEXT_SETTINGS, commands=LazyCommands(COMMANDS))
@click.version_option(__version__, prog_name="frayproof-audit", message="%(prog)s %(version)s")
def main() -> None:
    """Audit LLM agent context compaction against a YAML context contract.

    Single pairs: validate, check, mutate. Whole logs: audit, stats, trend, report, show, and
    the runs behind them: runs, rejudge; the pairs in agents' own logs: pairs. Tool-call
    arguments: tool-args. Transcripts: inspect, repair, compact. A contract: init (a starter),
    suggest (learned from the logs).

    Exit codes: 0 pass, 1 contract violations or a failed gate, 2 bad input or usage
    (audit: also nothing audited, or a full disk), 123 an internal error (a bug; the
    traceback goes to a crash log), 130 Ctrl-C, 143 SIGTERM.
    """

