"""`guard`: check a transformation's output against its input on every call.

The input is captured when the function is *called* (for async functions too, before the
coroutine runs), so in-place edits by the transformation cannot hide a loss.
"""

from __future__ import annotations

import functools
import inspect
import logging
import warnings
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar, cast

from frayproof_audit.contract import Contract, load_contract
from frayproof_audit.engine import check_loaded
from frayproof_audit.errors import ContractViolation, ContractWarning, InputError
from frayproof_audit.loaded import Loaded
from frayproof_audit.report import Report
from frayproof_audit.snapshot import load_source

LOGGER = logging.getLogger("frayproof_audit")
MODES = ("raise", "warn", "log")

F = TypeVar("F", bound=Callable[..., Any])


def guard(contract: Any = None, on_violation: str = "raise") -> Callable[[F], F]:
    """Decorate a function whose first parameter is the message list it transforms.

    `on_violation`: `raise` (ContractViolation), `warn` (ContractWarning, output returned) or
    `log` (ERROR on the `frayproof_audit` logger, output returned). Warning-only reports pass.
    """
    if on_violation not in MODES:
        raise ValueError(f"on_violation must be one of {', '.join(MODES)}")
    resolved = load_contract(contract)

    def decorate(function: F) -> F:
        parameters = list(inspect.signature(function).parameters)
        if not parameters:
            raise TypeError(f"{function.__name__} takes no parameters: nothing to guard")
        signature = inspect.signature(function)
        first = parameters[0]

        def capture(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Loaded:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return load_source(bound.arguments[first])

        if inspect.iscoroutinefunction(function):

            def async_wrapper(*args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
                # Capture now, before any other task can edit the input; a bad input still
                # surfaces where callers expect errors from a coroutine: when it is awaited.
                problem: InputError | None = None
                try:
                    before = capture(args, kwargs)
                except InputError as exc:
                    problem = exc

                async def run() -> Any:
                    if problem is not None:
                        raise problem
                    result = await function(*args, **kwargs)
                    return _judge(before, result, resolved, on_violation)

                return run()

            wrapped = functools.wraps(function)(async_wrapper)
            if hasattr(inspect, "markcoroutinefunction"):
                wrapped = inspect.markcoroutinefunction(wrapped)
            return cast(F, wrapped)

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            before = capture(args, kwargs)
            return _judge(before, function(*args, **kwargs), resolved, on_violation)

        return cast(F, wrapper)

    return decorate


def _judge(before: Loaded, result: Any, contract: Contract, mode: str) -> Any:
    report: Report = check_loaded(before, load_source(result), contract)
    if report.passed:
        return result
    if mode == "raise":
        raise ContractViolation(report)
    if mode == "warn":
        warnings.warn(ContractWarning(report.to_text()), stacklevel=3)
    else:
        LOGGER.error("Context contract violated:\n%s", report.to_text())
    return result
