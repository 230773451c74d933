"""One-line capture for the OpenAI Agents SDK (extra `agents`).

* `RecordingSession(session, writer)` wraps any `Session`: every call passes straight through,
  and each `run_compaction` (the Runner's automatic compaction after a turn, or a manual call;
  `OpenAIResponsesCompactionSession` or any compaction-aware session) is recorded as one pair:
  the items `get_items()` returned before it and after it, in format `openai-responses`. After
  an `OpenAIResponsesCompactionSession` compaction the after items hold the encrypted
  `compaction` item, which the checks judge on structure (an opaque assistant turn). A
  compaction that decided not to compact changes nothing and is no pair.
* `recording_filter(filter, writer)` wraps a `RunConfig.call_model_input_filter` (sync or
  async): each call whose result differs from its input is a pair of request objects
  `{"input": [...], "instructions": ...}`, before and after the filter.

Importing this module needs nothing; using it needs `openai-agents`
(`pip install 'frayproof-audit[agents]'`).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from frayproof_audit.capture.recorder import PairCapture, SessionSource
from frayproof_audit.capture.writer import PairWriter
from frayproof_audit.contract import load_contract

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory.session import Session
    from agents.memory.session_settings import SessionSettings
    from agents.run_config import CallModelData, ModelInputData

__all__ = ["FORMAT", "RecordingSession", "recording_filter"]

EXTRA = "pip install 'frayproof-audit[agents]'"
FORMAT = "openai-responses"


def _require() -> None:
    try:
        importlib.import_module("agents")
    except ImportError as exc:
        raise ImportError(f"frayproof_audit.capture.agents needs the OpenAI Agents SDK "
                          f"(openai-agents is not installed): {EXTRA}") from exc


_TAKES_WRAPPER: dict[tuple[type, str], bool] = {}


def _takes_wrapper(kind: type, name: str) -> bool:
    """Whether `kind.name` accepts a `wrapper` keyword (the SDK's opt-in for context-aware
    sessions), so it is passed on exactly when the wrapped session asked for it."""
    known = _TAKES_WRAPPER.get((kind, name))
    if known is not None:
        return known
    try:
        parameters = inspect.signature(getattr(kind, name)).parameters.values()
    except (TypeError, ValueError, AttributeError):
        found = False
    else:
        found = any(p.name == "wrapper" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                    for p in parameters)
    _TAKES_WRAPPER[(kind, name)] = found
    return found


async def _call(target: Any, name: str, *args: Any, wrapper: Any = None) -> Any:
    method = getattr(target, name)
    if wrapper is not None and _takes_wrapper(type(target), name):
        result = method(*args, wrapper=wrapper)
    else:
        result = method(*args)
    return await result if inspect.isawaitable(result) else result


def _default_compactor(session: Any) -> str:
    model = getattr(session, "model", None)
    name = type(session).__name__
    return f"{name}:{model}" if isinstance(model, str) else name


class RecordingSession:
    """A `Session` that forwards everything to `session` and records each compaction.

    `compactor` defaults to the session's class and compaction model
    (`OpenAIResponsesCompactionSession:gpt-4.1`); `session_id` to the session's own id.
    `contract` also checks each compaction live (its verdict goes into the record under
    `guard`; the compaction has already replaced the history, so `on_violation="raise"` fails
    the run after the fact)."""

    def __init__(self, session: Session, writer: PairWriter, *, compactor: str | None = None,
                 contract: Any = None, on_violation: str = "log", session_id: SessionSource = None) -> None:
        _require()
        self.underlying_session = session
        self._capture = PairCapture(
            writer, None if contract is None else load_contract(contract), on_violation,
            compactor or _default_compactor(session), input_format=FORMAT, hook=True,
            session_id=session_id, record_unchanged=False)

    @property
    def session_id(self) -> str:
        return self.underlying_session.session_id

    @property
    def session_settings(self) -> SessionSettings | None:
        return self.underlying_session.session_settings

    @session_settings.setter
    def session_settings(self, value: SessionSettings | None) -> None:
        self.underlying_session.session_settings = value

    def __getattr__(self, name: str) -> Any:
        # Compaction is offered exactly when the wrapped session offers it; every other
        # attribute (the Runner's private coordination hooks included) is the wrapped one's.
        if name == "underlying_session":
            raise AttributeError(name)
        if name == "run_compaction" and callable(getattr(self.underlying_session, name, None)):
            return self._run_compaction
        return getattr(self.underlying_session, name)

    async def get_items(self, limit: int | None = None, *, wrapper: Any = None) -> list[TResponseInputItem]:
        items: list[TResponseInputItem] = await _call(self.underlying_session, "get_items", limit,
                                                      wrapper=wrapper)
        return items

    async def add_items(self, items: list[TResponseInputItem], *, wrapper: Any = None) -> None:
        await _call(self.underlying_session, "add_items", items, wrapper=wrapper)

    async def pop_item(self, *, wrapper: Any = None) -> TResponseInputItem | None:
        item: TResponseInputItem | None = await _call(self.underlying_session, "pop_item", wrapper=wrapper)
        return item

    async def clear_session(self, *, wrapper: Any = None) -> None:
        await _call(self.underlying_session, "clear_session", wrapper=wrapper)

    async def _run_compaction(self, args: Any = None, *, wrapper: Any = None) -> None:
        capture = self._capture
        before = capture.begin(await self.get_items(wrapper=wrapper))
        await _call(self.underlying_session, "run_compaction", args, wrapper=wrapper)
        after = await self.get_items(wrapper=wrapper)
        session = capture.session_of(self) if capture.session_id is not None else self.session_id
        capture.finish(before, after, session_id=session, stacklevel=3)


def _request(data: Any) -> dict[str, Any] | None:
    """A `ModelInputData` as the Responses request it becomes (None: not one)."""
    items = getattr(data, "input", None)
    if not isinstance(items, list):
        return None
    return {"input": list(items), "instructions": getattr(data, "instructions", None)}


def recording_filter(
    filter: Callable[[CallModelData[Any]], Any],
    writer: PairWriter,
    *,
    compactor: str | None = None,
    contract: Any = None,
    on_violation: str = "log",
    session_id: SessionSource = None,
) -> Callable[[CallModelData[Any]], Any]:
    """`filter` (returning a `ModelInputData`, or an awaitable of one) recording every call
    that changes the model input. `compactor` defaults to the filter's module and qualified
    name; `session_id` is an id or a callable of the `CallModelData`."""
    _require()
    name = compactor or f"{getattr(filter, '__module__', '')}.{getattr(filter, '__qualname__', repr(filter))}"
    capture = PairCapture(writer, None if contract is None else load_contract(contract), on_violation,
                          name, input_format=FORMAT, hook=True, session_id=session_id,
                          record_unchanged=False)

    def recorded(data: CallModelData[Any]) -> Any:
        given = _request(data.model_data)
        before = capture.begin(given) if given is not None else None
        session = capture.session_of(data)
        result = filter(data)

        def finish(output: ModelInputData) -> ModelInputData:
            after = _request(output)
            if before is not None and after is not None:
                capture.finish(before, after, session_id=session, stacklevel=4)
            return output

        if inspect.isawaitable(result):

            async def later() -> ModelInputData:
                return finish(await result)

            return later()
        return finish(result)

    return recorded
