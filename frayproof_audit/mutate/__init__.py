"""Mutation testing: would the contract catch a broken compactor?

`run_mutations` / `run_mutations_async` run a transformation once (or take a logged output),
corrupt the real output at every eligible site with the fault operators (frayproof's nine,
plus two argument operators where tool schemas exist) and report which
corruptions the contract rejects. `mutate_pair` does the same for a pair already loaded, as the
corpus audit needs.
"""

from frayproof_audit.mutate.operators import OPERATORS
from frayproof_audit.mutate.report import MutantOutcome, MutationReport
from frayproof_audit.mutate.runner import (
    BuiltMutant,
    FastPathMismatch,
    MutationInput,
    build_mutants,
    load_mutation_input,
    mutate_pair,
    run_mutations,
    run_mutations_async,
)

__all__ = [
    "OPERATORS",
    "BuiltMutant",
    "FastPathMismatch",
    "MutantOutcome",
    "MutationInput",
    "MutationReport",
    "build_mutants",
    "load_mutation_input",
    "mutate_pair",
    "run_mutations",
    "run_mutations_async",
]
