"""`guard`: check a transformation's output against its input on every call, and log the pair.

The input is captured when the function is *called* (for async functions too, before the
coroutine runs), so in-place edits by the transformation cannot hide a loss. With `record=`, every
pair the guard sees is written to a `PairWriter`, passing or not, with the guard's own verdict.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar, cast

from frayproof_audit.contract import load_contract
from frayproof_audit.errors import InputError
from frayproof_audit.on_violation import MODES, checked_mode

if TYPE_CHECKING:
    from frayproof_audit.capture.recorder import SessionSource
    from frayproof_audit.capture.writer import PairWriter

__all__ = ["MODES", "guard"]


F = TypeVar("F", bound=Callable[..., Any])


def guard(
    contract: Any = None,
    on_violation: str = "raise",
    *,
    record: PairWriter | None = None,
    before: Callable[[Any], Any] | None = None,
    after: Callable[[Any, Any], Any] | None = None,
    compactor: str | None = None,
    session_id: SessionSource = None,
    input_format: str | None = None,
    record_unchanged: bool = True,
) -> Callable[[F], F]:
    """Decorate a transformation: by default one whose first parameter is the message list it
    transforms and whose return value is the transformed list.

    `on_violation`: `raise` (ContractViolation), `warn` (ContractWarning, output returned) or
    `log` (ERROR on the `frayproof_audit` logger, output returned). Warning-only reports pass.

    For functions whose input and output are not message lists, `before(first_argument)` picks
    the input snapshot and `after(return_value, first_argument)` the output snapshot (a
    LangGraph node: state in, partial state out; an Agents SDK input filter). Snapshots may be
    wire lists in the contract's format (or `input_format`), LangChain messages, `Snapshot`s or
    paths.

    `record`: a `PairWriter` that gets every pair, with the verdict under `guard`, before
    `on_violation` acts; `compactor` names the transformation there (default: the function's
    module and qualified name), `session_id` is an id or a callable of the first argument.
    `record_unchanged=False` skips calls whose output equals their input.
    """
    checked_mode(on_violation)
    resolved = load_contract(contract)
    # Imported here, not at the top: `import frayproof_audit` stays as light as it was.
    from frayproof_audit.capture.recorder import PairCapture

    def decorate(function: F) -> F:
        parameters = list(inspect.signature(function).parameters)
        if not parameters:
            raise TypeError(f"{function.__name__} takes no parameters: nothing to guard")
        signature = inspect.signature(function)
        first = parameters[0]
        name = compactor or f"{function.__module__}.{function.__qualname__}"
        capture = PairCapture(record, resolved, on_violation, name, input_format=input_format,
                              record_unchanged=record_unchanged, session_id=session_id)

        def subject(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return bound.arguments[first]

        def output(result: Any, given: Any) -> Any:
            return result if after is None else after(result, given)

        if inspect.iscoroutinefunction(function):

            def async_wrapper(*args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
                # Capture now, before any other task can edit the input; a bad input still
                # surfaces where callers expect errors from a coroutine: when it is awaited.
                problem: InputError | None = None
                given = subject(args, kwargs)
                try:
                    captured = capture.begin(given if before is None else before(given))
                except InputError as exc:
                    problem = exc
                session = capture.session_of(given)

                async def run() -> Any:
                    if problem is not None:
                        raise problem
                    result = await function(*args, **kwargs)
                    capture.finish(captured, output(result, given), session_id=session, stacklevel=3)
                    return result

                return run()

            wrapped = functools.wraps(function)(async_wrapper)
            if hasattr(inspect, "markcoroutinefunction"):
                wrapped = inspect.markcoroutinefunction(wrapped)
            return cast(F, wrapped)

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = subject(args, kwargs)
            captured = capture.begin(given if before is None else before(given))
            result = function(*args, **kwargs)
            capture.finish(captured, output(result, given), session_id=capture.session_of(given),
                           stacklevel=3)
            return result

        return cast(F, wrapper)

    return decorate
