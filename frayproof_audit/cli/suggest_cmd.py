"""`suggest`: the strongest contract the good compactions in some logs already keep."""

from __future__ import annotations

import sys

import click

from frayproof_audit.cli.choices import RegistryChoice
from frayproof_audit.cli.common import (
    fail_input,
    field_map,
    field_options,
    parse_operator_list,
    plain_format_option,
)
from frayproof_audit.cli.option_types import BYTES, RATE, FiniteRange, count
from frayproof_audit.corpus.inputs.pair_records import DEFAULT_MAX_RECORD_BYTES
from frayproof_audit.corpus.inputs.source_choice import source_names
from frayproof_audit.errors import InputError
from frayproof_audit.files import write_through
from frayproof_audit.formats import FORMATS
from frayproof_audit.render import render
from frayproof_audit.suggest.config import SuggestConfig
from frayproof_audit.suggest.logs import DEFAULT_MAX_INPUT_ERROR_RATE, LogInputs, suggest_logs
from frayproof_audit.transcript.sources import shown_path

_DEFAULTS = SuggestConfig()


@click.command("suggest")
@click.argument("logs", nargs=-1, required=True)
@click.option("--good", "good", required=True, metavar="SELECTOR",
              help="The pairs you trust, to learn from: all, compactor=NAME[,NAME...], "
                   "night=DAY[..DAY] (UTC days of logged_at), passes=CONTRACT, several joined "
                   "by ';' (every one must select). The others measure each rule's bite.")
@click.option("-o", "--output", "output", required=True, type=click.Path(dir_okay=False),
              help="Write the suggested contract (commented YAML, read by check, mutate and "
                   "audit) to this file.")
@click.option("--source", "source", type=RegistryChoice(source_names), default="auto",
              show_default=True,
              help="What reads the logs, as for audit: auto (per file, by evidence), pairs "
                   "(records of before/after pairs), or a source of agents' own logs "
                   "(docs/sources.md).")
@field_options
@click.option("--input-format", "input_format", type=RegistryChoice(lambda: FORMATS),
              default=_DEFAULTS.input_format, show_default=True,
              help="Wire format of pair records without a `format` field, and the contract's.")
@click.option("--min-support", type=FiniteRange(0.0, 1.0, min_open=True),
              default=_DEFAULTS.min_support, show_default=True,
              help="Share of the learned-from good pairs each rule, and the whole contract, "
                   "must pass to be proposed.")
@click.option("--holdout", type=FiniteRange(0.0, 1.0, max_open=True), default=_DEFAULTS.holdout,
              show_default=True,
              help="Share of the good pairs held out (by a hash of the pair id) to measure "
                   "false alarms on pairs the contract never saw; exit 1 when they exceed "
                   "1 - min-support.")
@click.option("--compare", "compare", type=click.Path(dir_okay=False), default=None,
              metavar="CONTRACT",
              help="Set this contract beside the suggestion on the same pairs: false alarms, "
                   "other pairs failed, mutation score per operator, the rules that differ.")
@click.option("--min-sessions", type=count(1), default=_DEFAULTS.min_sessions, show_default=True,
              help="Distinct sessions a pin, an enum value or a retention window needs as "
                   "evidence (nothing one session says becomes a rule).")
@click.option("--max-text-pins", type=count(0), default=_DEFAULTS.max_text_pins,
              show_default=True, help="The most `contains` pins proposed (widest shared first).")
@click.option("--infer-tools/--no-infer-tools", default=_DEFAULTS.infer_tools, show_default=True,
              help="Infer tool schemas from the calls when no good record carries tools.")
@click.option("--mutation-pairs", type=count(0), default=_DEFAULTS.mutation_pairs,
              show_default=True,
              help="Good pairs mutated to measure each rule's bite on mutants (0: no mutation).")
@click.option("--max-mutants-per-pair", "max_mutants", type=count(0),
              default=_DEFAULTS.max_mutants, show_default=True, metavar="N",
              help="Mutation sites judged per pair at most, a deterministic sample (0: every site).")
@click.option("--operators", default=None, metavar="A,B",
              help="Comma-separated mutation operators (default: all that apply).")
@click.option("--max-record-bytes", type=BYTES, default=DEFAULT_MAX_RECORD_BYTES,
              show_default=True, help="Longer records are input errors, never loaded.")
@click.option("--max-input-error-rate", type=RATE, default=DEFAULT_MAX_INPUT_ERROR_RATE,
              show_default=True,
              help="Suggest nothing (exit 2) when input errors / records exceeds this.")
@plain_format_option
def suggest_command(logs: tuple[str, ...], good: str, output: str, source: str,
                    field_specs: tuple[str, ...], config_file: str | None, input_format: str,
                    min_support: float, holdout: float, compare: str | None, min_sessions: int,
                    max_text_pins: int, infer_tools: bool, mutation_pairs: int, max_mutants: int,
                    operators: str | None, max_record_bytes: int, max_input_error_rate: float,
                    output_format: str) -> None:
    """Suggest the strongest contract the good pairs in LOGS already keep, each rule with its
    support, its bite and why.

    LOGS are read as audit reads them: pair records (.jsonl, .jsonl.gz, .jsonl.zst, .parquet;
    --field and --config map them) or agents' own logs (docs/sources.md). Every input error
    is counted and named. A part of the good pairs is held out and the contract's false
    alarms on it are reported. Exit 0 the contract written; 1 written, but its held-out false
    alarms exceed 1 - min-support (it overfits); 2 bad input or option, no good pair to learn
    from, or input errors over --max-input-error-rate (nothing written).

    \b
    Example:
        frayproof-audit suggest examples/corpus -o suggested.yaml \\
            --good "compactor=summary_keep_last_n,summary_user_turn;night=2025-06-02..2025-06-08" \\
            --compare examples/audit_contract.yaml
    """
    try:
        inputs = LogInputs(logs, source, field_map(config_file, field_specs), max_record_bytes,
                           max_input_error_rate)
        config = SuggestConfig(
            good=good, min_support=min_support, holdout=holdout, compare_with=compare,
            input_format=input_format, min_sessions=min_sessions, max_text_pins=max_text_pins,
            infer_tools=infer_tools, mutation_pairs=mutation_pairs,
            max_mutants=max_mutants or None, operators=_operators(operators))
        found = suggest_logs(inputs, config)
    except InputError as exc:
        fail_input(str(exc), output_format)
    if found.contract_text is not None:
        try:
            write_through(output, found.contract_text.encode("utf-8"))
        except OSError as exc:
            fail_input(f"cannot write '{shown_path(output)}': {exc.strerror or exc}", output_format,
                       label="OUTPUT ERROR")
        found = found.written(shown_path(output))
    click.echo(render(found, output_format))
    sys.exit(found.exit_code)


def _operators(text: str | None) -> tuple[str, ...] | None:
    names = parse_operator_list(text)
    if names is not None and not names:
        raise InputError("--operators: name at least one operator")
    return names
