"""Load a transformation named on the command line, and run a whole `mutate` request.

A target is `path/to/file.py:function` or `package.module:function`. Importing it
runs the module's top-level code, so `run_request` validates the contract and the input
*before* importing anything (frayproof imports first, its B9): a typo in the contract never
executes user code. A file target's directory goes first on `sys.path` while the target is
imported and run, and the file gets a private module name; both are undone afterwards. Dotted
targets are imported from the current `sys.path` as it is (as in frayproof).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frayproof_audit.contract import load_contract
from frayproof_audit.errors import InputError
from frayproof_audit.mutate.operators import select_operators
from frayproof_audit.mutate.report import MutationReport
from frayproof_audit.mutate.runner import (
    load_mutation_input,
    run_mutations,
    run_mutations_async,
)
from frayproof_audit.snapshot import resolve_format

TARGET_FORMS = "path.py:function or package.module:function"


@dataclass(frozen=True, slots=True)
class TargetSpec:
    location: str
    function: str

    @property
    def is_file(self) -> bool:
        return self.location.endswith(".py")


def parse_target(text: str) -> TargetSpec:
    """Split at the last colon; both parts are required and the function must be a name."""
    location, colon, function = text.rpartition(":")
    if not colon or not location or not function.isidentifier():
        raise InputError(f"Target must be {TARGET_FORMS}, got {text!r}")
    return TargetSpec(location, function)


@contextmanager
def imported_target(spec: TargetSpec) -> Iterator[Callable[..., Any]]:
    """Import the target and yield its function; undo path and module changes on exit."""
    saved_path = sys.path[:]
    module_name = ""
    saved_module: Any = None
    try:
        try:
            if spec.is_file:
                path = Path(spec.location).resolve()
                module_name = "_frayproof_audit_target_" + hashlib.sha256(
                    str(path).encode("utf-8")).hexdigest()[:16]
                saved_module = sys.modules.get(module_name)
                sys.path.insert(0, str(path.parent))
                found = importlib.util.spec_from_file_location(module_name, path)
                if found is None or found.loader is None:
                    raise InputError(f"Cannot import target: no loader for {spec.location!r}")
                module = importlib.util.module_from_spec(found)
                sys.modules[module_name] = module
                found.loader.exec_module(module)
            else:
                module = importlib.import_module(spec.location)
            if not hasattr(module, spec.function):
                raise InputError(f"Cannot import target: {spec.location!r} has no {spec.function!r}")
            function = getattr(module, spec.function)
        except InputError:
            raise
        except Exception as exc:
            raise InputError(f"Cannot import target: {type(exc).__name__}: {exc}") from exc
        if not callable(function):
            raise InputError(f"Target {spec.location}:{spec.function} is not callable")
        yield function
    finally:
        sys.path[:] = saved_path
        if module_name:
            if saved_module is None:
                sys.modules.pop(module_name, None)
            else:
                sys.modules[module_name] = saved_module


@dataclass(frozen=True, slots=True)
class MutateRequest:
    """Everything the `mutate` command was asked to do (one of `target` / `after`)."""

    input: str
    target: str | None = None
    after: str | None = None
    contract: str | None = None
    operators: tuple[str, ...] | None = None
    verify: bool = False
    input_format: str | None = None
    """Overrides the contract's `format` for the input and the output."""
    max_mutants: int | None = None
    """Sites judged at most, sampled (`mutate.budget`); None: every site."""

    @property
    def output_file(self) -> str:
        """The file that stands for the mutated output in reports that point at files: the
        logged output, else a file target's source, else the input."""
        if self.after is not None:
            return self.after
        location = (self.target or "").rpartition(":")[0]
        return location if location.endswith(".py") else self.input


def run_request(request: MutateRequest) -> MutationReport:
    """Validate everything, then (for a target) import and run it, then mutate its output.

    Order matters: target syntax, contract, operators and input are all checked before any
    user code is imported, so every input error comes before the target runs.
    """
    if (request.target is None) == (request.after is None):
        raise InputError("Give either --target or --after")
    spec = parse_target(request.target) if request.target is not None else None
    contract = load_contract(request.contract)
    operators = select_operators(request.operators, contract)
    fmt = resolve_format(request.input_format or contract.format)
    prepared = load_mutation_input(request.input, fmt)
    if spec is None:
        return run_mutations(prepared, contract=contract, after=request.after,
                             operators=operators, verify=request.verify, input_format=fmt,
                             max_mutants=request.max_mutants)
    with imported_target(spec) as function:
        if inspect.iscoroutinefunction(function):
            return asyncio.run(run_mutations_async(
                prepared, function, contract, operators=operators, verify=request.verify,
                input_format=fmt, max_mutants=request.max_mutants))
        return run_mutations(prepared, function, contract, operators=operators,
                             verify=request.verify, input_format=fmt,
                             max_mutants=request.max_mutants)
