"""`audit` and `stats`: whole logs into the Parquet dataset, and the numbers over it."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, NoReturn

import click

from frayproof_audit.cli.choices import RegistryChoice
from frayproof_audit.cli.common import (
    contract_option,
    fail_input,
    field_options,
    format_option,
    input_format_option,
    parse_operator_list,
    sarif_category_for,
)
from frayproof_audit.cli.dataset_options import (
    as_day,
    blame_option,
    cannot_write,
    selection_options,
    show_notes,
    show_table,
    table_format_option,
    table_output,
)
from frayproof_audit.cli.entry import CRASH_LOG, INTERRUPT_NOTE
from frayproof_audit.cli.option_types import BYTES, RATE, SCOPED_RATE, count
from frayproof_audit.corpus.inputs.field_map import field_map_of
from frayproof_audit.corpus.inputs.source_choice import source_names
from frayproof_audit.corpus.run.audit_config import (
    BACKENDS,
    DEFAULT_MAX_INPUT_ERROR_RATE,
    DEFAULT_MAX_MUTANTS_PER_PAIR,
    DEFAULT_MAX_RECORD_BYTES,
    DEFAULT_SHARD_BYTES,
    FAIL_ON,
    STATS_BY,
    AuditConfig,
)
from frayproof_audit.corpus.run.rate_gates import DEFAULT_MIN_PAIRS, FailureRateGate, gate_for
from frayproof_audit.errors import InputError
from frayproof_audit.render import RenderContext, render
from frayproof_audit.report import EXIT_PASS
from frayproof_audit.shown import read_shown

if TYPE_CHECKING:
    from frayproof_audit.corpus.dataset.selection import Selection
    from frayproof_audit.corpus.run.audit_run import Progress
    from frayproof_audit.corpus.run.summary import RunSummary


class _ProgressLine:
    """A one-line progress display on stderr (records, rate, ETA); silent unless enabled."""

    def __init__(self, stream: IO[str], enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self.shown = False
        self.last = 0.0

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        finished = progress.shards_done == progress.shards_total
        if not self.enabled or (now - self.last < 0.2 and not finished):
            return
        self.last = now
        rate = progress.records / progress.elapsed_s if progress.elapsed_s > 0 else 0.0
        fraction = progress.weight_done / progress.weight_total if progress.weight_total else 1.0
        eta = ""
        if 0 < fraction < 1:
            seconds = int(progress.elapsed_s * (1 - fraction) / fraction)
            eta = f" · ETA {seconds // 60}:{seconds % 60:02d}"
        self.stream.write(
            f"\r  {fraction:6.1%} · {progress.shards_done}/{progress.shards_total} shards"
            f" · {progress.records:,} records · {rate:,.0f} rec/s{eta}\x1b[K"
        )
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


@click.command("audit")
@click.argument("inputs", nargs=-1, required=True)
@contract_option
@input_format_option
@click.option("--out", "out", required=True,
              help="Dataset folder (or object-store URI, s3://bucket/audit): runs/, pairs/, "
                   "findings/, mutants/ (created if missing).")
@click.option("--jobs", "-j", "jobs", type=count(-1), default=-1, show_default=True,
              help="Worker processes (-1: every core the input keeps busy; 1: no pool, in this process).")
@click.option("--backend", type=click.Choice(BACKENDS), default="loky", show_default=True,
              help="joblib backend: loky (processes), threading, dask or ray (a cluster).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="With --backend dask or ray: the cluster (tcp://HOST:PORT, a Ray address) or "
                   "'local' (the default: a local cluster of --jobs workers).")
@click.option("--incremental", is_flag=True,
              help="Audit only what no other committed run with the same contract fingerprint "
                   "audited (appended lines, rotated files are recognised); a last line without "
                   "its newline waits for the next run.")
@click.option("--source", "source", type=RegistryChoice(source_names), default="auto",
              show_default=True,
              help="What reads the inputs: auto (decided per file from its first lines, by "
                   "evidence; a file with evidence of two is refused, naming both), pairs "
                   "(records of before/after pairs), or a source of agents' own logs (every "
                   "compaction in them one pair; docs/sources.md).")
@click.option("--run-id", "run_id", default=None,
              help="Name of this run; an existing run of that name is replaced. Default: time + random.")
@field_options
@click.option("--carry", "carry_specs", multiple=True, metavar="NAME=PATH",
              help="Keep this field of every pair record as text in pairs.carried, e.g. "
                   "model=request.model (repeatable; also a carry: block in --config); "
                   "stats --by NAME groups on it.")
@click.option("--strict-fields", is_flag=True,
              help="A mapped field (--field, --config) found in fewer than half the records is "
                   "an input error (exit 2, the run committed as failed), not a warning.")
@click.option("--mutate/--no-mutate", "mutate", default=True, show_default=True,
              help="Mutation-test every pair whose baseline passes.")
@click.option("--operators", default=None, metavar="A,B",
              help="Comma-separated subset of mutation operators (default: all).")
@click.option("--max-mutants-per-pair", "max_mutants", type=count(0),
              default=DEFAULT_MAX_MUTANTS_PER_PAIR, show_default=True, metavar="N",
              help="Judge at most N mutation sites per pair, a deterministic uniform sample per "
                   "operator; the rest are skipped entries with reason Budget (0: no budget).")
@click.option("--max-record-bytes", type=BYTES, default=DEFAULT_MAX_RECORD_BYTES,
              show_default=True, help="Longer records are input errors, never loaded.")
@click.option("--shard-bytes", type=BYTES, default=DEFAULT_SHARD_BYTES,
              show_default=True, help="Target size of one unit of work (plain JSONL byte range).")
@click.option("--fail-on", "fail_on", multiple=True, type=click.Choice(FAIL_ON),
              default=("failures",), show_default=True,
              help="What makes the run exit 1 (repeatable).")
@click.option("--max-failure-rate", "failure_rates", type=SCOPED_RATE, multiple=True,
              metavar="[NAME=]RATE",
              help="Fail only when failed / checked pairs exceeds RATE (replaces 'any failure'); "
                   "CHECK=RATE: that check's failing pairs / checked pairs; "
                   "compactor:NAME=RATE: that compactor's failed / checked pairs (repeatable).")
@click.option("--min-pairs", type=count(1), default=DEFAULT_MIN_PAIRS, show_default=True,
              metavar="N",
              help="A compactor:NAME gate judges the compactor only on at least N checked pairs "
                   "(fewer: 'not judged').")
@click.option("--strict-min-pairs", is_flag=True,
              help="A compactor:NAME gate on fewer than --min-pairs pairs fails the run instead.")
@click.option("--baseline-findings", "baseline_findings", type=click.Path(dir_okay=False),
              default=None, metavar="FILE",
              help="Known-issue baseline: the error findings FILE lists (JSON lines of pair_id "
                   "and code; stats --write-baseline writes one) are stored and counted but fail "
                   "no gate.")
@blame_option
@click.option("--max-input-error-rate", type=RATE,
              default=DEFAULT_MAX_INPUT_ERROR_RATE, show_default=True,
              help="Fail when input errors / records exceeds this (--fail-on input-errors: any).")
@click.option("--allow-engine-errors", is_flag=True,
              help="Do not fail the run for records whose audit raised an unexpected exception "
                   "(engine_error rows: a bug). By default any one fails it, even --fail-on none.")
@click.option("--repair-out", "repair_out", type=click.Path(file_okay=False), default=None,
              help="Write the repaired after snapshot of every failing pair a transcript repair "
                   "fixes completely to this folder (JSONL, with its pair_id).")
@click.option("--dry-run", "dry", is_flag=True,
              help="Read and map the first 100 records of every input and print, per field, how "
                   "many had it; check nothing, write nothing (exit 2 when most lack before or "
                   "after).")
@format_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def audit_command(
    inputs: tuple[str, ...],
    contract: str | None,
    input_format: str | None,
    out: str,
    jobs: int,
    backend: str,
    scheduler: str | None,
    incremental: bool,
    source: str,
    run_id: str | None,
    field_specs: tuple[str, ...],
    config_file: str | None,
    carry_specs: tuple[str, ...],
    strict_fields: bool,
    mutate: bool,
    operators: str | None,
    max_mutants: int,
    max_record_bytes: int,
    shard_bytes: int,
    fail_on: tuple[str, ...],
    failure_rates: tuple[tuple[str | None, float], ...],
    min_pairs: int,
    strict_min_pairs: bool,
    baseline_findings: str | None,
    blame: str,
    max_input_error_rate: float,
    allow_engine_errors: bool,
    repair_out: str | None,
    dry: bool,
    output_format: str,
    max_results: int | None,
    sarif_category: str | None,
    quiet: bool,
) -> None:
    """Audit JSONL/Parquet logs of before/after pairs, or agents' own logs, into a Parquet dataset.

    INPUTS are files (.jsonl, .jsonl.gz, .jsonl.zst, .parquet), globs or folders (searched
    recursively, Hive layouts included): pair records, or the logs a source reads (Codex
    rollouts, Claude Code and Gemini CLI sessions, LangGraph checkpoint databases: a SQLite
    file or a postgresql:// URI, OTLP, Langfuse and LangSmith exports), each compaction in
    them one pair. Bad records are reported as input errors; the run goes on. Exit 0 pass, 1 a
    gate failed, 2 bad contract, input path, option or output folder, a full disk, or nothing
    audited (no pair could be checked, and no log line was read).

    \b
    Example:
        frayproof-audit audit examples/corpus --contract examples/audit_contract.yaml \\
            --out audit-out --fail-on failures --max-failure-rate 0.25
    """
    category = sarif_category_for(output_format, sarif_category)
    progress = _ProgressLine(sys.stderr, sys.stderr.isatty() and not quiet)
    try:
        max_failure_rate, gates = _failure_rates(failure_rates)
        config = AuditConfig(
            inputs=inputs,
            out=out,
            contract=contract,
            n_jobs=jobs,
            backend=backend,
            scheduler=scheduler,
            incremental=incremental,
            source=source,
            run_id=run_id,
            fields=field_map_of(config_file, field_specs, carry_specs),
            strict_fields=strict_fields,
            mutate=mutate,
            operators=parse_operator_list(operators),
            input_format=input_format,
            max_record_bytes=max_record_bytes,
            shard_bytes=shard_bytes,
            fail_on=fail_on,
            max_failure_rate=max_failure_rate,
            failure_rate_gates=gates,
            min_pairs=min_pairs,
            strict_min_pairs=strict_min_pairs,
            baseline_findings=baseline_findings,
            blame=blame,
            argv=("frayproof-audit", *sys.argv[1:]),
            max_input_error_rate=max_input_error_rate,
            allow_engine_errors=allow_engine_errors,
            max_mutants_per_pair=max_mutants or None,
            repair_out=repair_out,
        )
        if dry:
            _dry_run(config, output_format)
        from frayproof_audit.corpus.inputs.location import local_path
        from frayproof_audit.corpus.run.audit_run import new_run_id, run_audit  # heavy: only this command
        from frayproof_audit.corpus.store.layout import LOGS_FOLDER

        config = replace(config, run_id=config.run_id or new_run_id())
        meta = click.get_current_context().meta
        local_out = local_path(out)  # an object store's run crashes into the temp folder
        if local_out is not None:
            meta[CRASH_LOG] = Path(local_out) / LOGS_FOLDER / f"crash-{config.run_id}.log"
        meta[INTERRUPT_NOTE] = f"run {config.run_id} was not committed"
        summary: RunSummary = run_audit(config, progress)
    except InputError as exc:
        progress.close()
        fail_input(str(exc), output_format, label=_label(exc))
    finally:
        progress.close()
    context = RenderContext(contract=contract, max_results=max_results, sarif_category=category)
    click.echo(render(summary, output_format, read_shown(summary, output_format, context)))
    sys.exit(summary.exit_code)


def _failure_rates(given: tuple[tuple[str | None, float], ...]
                   ) -> tuple[float | None, tuple[FailureRateGate, ...]]:
    """The whole run's --max-failure-rate (the last plain RATE) and the per-check and
    per-compactor gates, each once (a repeated NAME: the last wins, as for --field)."""
    overall = None
    named: dict[str, FailureRateGate] = {}
    for subject, rate in given:
        if subject is None:
            overall = rate
            continue
        gate = gate_for(subject, rate)
        named[gate.subject] = gate
    return overall, tuple(named.values())


def _dry_run(config: AuditConfig, output_format: str) -> None:
    """`--dry-run`: the inputs read and mapped (and the contract read), nothing checked or written."""
    from frayproof_audit.contract import load_contract
    from frayproof_audit.corpus.inputs.dry_run import dry_run
    from frayproof_audit.render import get_output

    if get_output(output_format).ci:
        raise InputError(f"--dry-run prints text or json, not {output_format}")
    load_contract(config.contract)  # a contract the run would refuse is refused now
    result = dry_run(config.inputs, config.fields, config.out, repair_out=config.repair_folder)
    click.echo(render(result, output_format))
    sys.exit(result.exit_code)


def _label(exc: InputError) -> str:
    from frayproof_audit.corpus.store.layout import StoreError

    return "OUTPUT ERROR" if isinstance(exc, StoreError) else "INPUT ERROR"


@click.command("stats")
@click.argument("out", type=click.Path())
@click.option("--by", multiple=True, metavar="KEY",
              help=f"Group every table by this column as well: {', '.join(STATS_BY)}, or a field "
                   "the runs carried (audit --carry NAME=PATH); repeatable: --by compactor --by "
                   "log_date.")
@selection_options
@click.option("--all-groups", is_flag=True,
              help="Also show groups with nothing judged (no pair checked, no mutant): their "
                   "check and operator rows are placeholders.")
@blame_option
@table_format_option
@click.option("--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Write to this file instead of standard output.")
@click.option("--write-baseline", "baseline", type=click.Path(dir_okay=False), default=None,
              metavar="FILE",
              help="Instead of the tables, write every error finding of the selected runs (pair "
                   "id and condition code, JSON lines) to FILE: a known-issue baseline for "
                   "audit --baseline-findings.")
def stats_command(out: str, by: tuple[str, ...], runs: tuple[str, ...], since: datetime | None,
                  until: datetime | None, compactors: tuple[str, ...], contract: str | None,
                  all_groups: bool, blame: str, output_format: str, output: str | None,
                  baseline: str | None) -> None:
    """Pairs, per-check, per-condition-code and per-operator statistics over the committed runs in OUT.

    Pairs: passed, failed, input errors, engine errors, failure rate, inherited failures (failing
    pairs whose every error their before already held: not failures under --blame introduced,
    the default, which also counts only introduced findings for a check). Checks, and each check's
    condition codes: findings, errors, warnings, pairs affected, failing pairs, pairs checked,
    failure rate, passing pairs, input errors (runs from before codes existed have code null).
    Operators: applicable, caught, survived, skipped, survival rate and its 95% Wilson interval
    (over the pairs the operator applied to, as in trend and report). Every active check, code
    and operator appears in every group that judged something, at zero if nothing happened.
    Counts the runs of the newest contract by default, failed runs left out, and says in one
    line what it left out (--contract chooses). csv and parquet hold every table in one long
    table with a `table` column.

    \b
    Example:
        frayproof-audit stats audit-out --by compactor --by log_date --since 2025-06-01
    """
    chosen = table_output(output_format, output)
    # Polars: only the commands that read a dataset need it
    from frayproof_audit.corpus.dataset.selection import Selection
    from frayproof_audit.corpus.dataset.stats import compute_stats
    from frayproof_audit.corpus.store.failure_rule import Blame

    try:
        selection = Selection(runs, as_day(since), as_day(until), compactors, contract)
        if baseline is not None:
            _write_baseline(out, baseline, selection)
        stats = compute_stats(out, by, selection, all_groups, Blame(blame))
    except InputError as exc:
        fail_input(str(exc), chosen)
    show_table(chosen, stats, output)
    show_notes(chosen, stats.chosen.notes() if stats.chosen else ())


def _write_baseline(out: str, path: str, selection: Selection) -> NoReturn:
    """`stats --write-baseline FILE`: the baseline written, one line said, exit 0."""
    from frayproof_audit.corpus.dataset.baseline import write_baseline

    try:
        written = write_baseline(out, path, selection)
    except OSError as exc:
        cannot_write(path, exc)
    for note in written.chosen.notes():
        click.echo(f"note: {note}", err=True)
    click.echo(written.to_text())
    sys.exit(EXIT_PASS)
