"""The LangChain / LangGraph hooks themselves; imported by `capture.langchain` on first use, so
that module imports without LangChain installed. (No `from __future__ import annotations` here:
LangGraph reads the state schema's annotations at run time.)"""

import contextvars
import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, NotRequired, TypedDict

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
)
from langchain_core.messages import BaseMessage, convert_to_openai_messages
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.graph.message import add_messages
from langgraph.types import Command

from frayproof_audit.capture.recorder import Before, PairCapture, SessionId
from frayproof_audit.capture.records import FrozenSnapshot, RecordError, dumps, freeze

START = "frayproof_capture_start"
BEFORE = "frayproof_capture_before"


class CaptureState(TypedDict):
    """The two private, never checkpointed state keys the recorder passes between its nodes:
    the messages when the agent started (before any `before_agent` hook) and when this model
    step started (before any `before_model` hook)."""

    frayproof_capture_start: NotRequired[Annotated[Any, UntrackedValue, PrivateStateAttr]]
    frayproof_capture_before: NotRequired[Annotated[Any, UntrackedValue, PrivateStateAttr]]


@dataclass
class _Step:
    """One model call as the outermost layer saw it: the messages before every hook, and the
    system message before any `wrap_model_call` changed it."""

    before: FrozenSnapshot | None
    system: BaseMessage | None
    recorded: set[bytes] = field(default_factory=set)


_STEP: contextvars.ContextVar[_Step | None] = contextvars.ContextVar("frayproof_capture_step", default=None)


def _frozen(value: object) -> FrozenSnapshot | None:
    return value if isinstance(value, FrozenSnapshot) else None


def _with_system(system: BaseMessage | None, messages: FrozenSnapshot) -> FrozenSnapshot:
    """The system message the model gets, in front of the messages (the agent keeps it out of
    its state, but it is part of the context, and a hook may change it)."""
    if system is None:
        return messages
    head = dumps(convert_to_openai_messages(system))
    body = messages.data
    joined = b"[" + head + (b"]" if body == b"[]" else b"," + body[1:])
    return FrozenSnapshot(joined, "openai")


def _thread_id(runtime: Any) -> SessionId:
    info = getattr(runtime, "execution_info", None)
    thread = getattr(info, "thread_id", None)
    if thread is None:
        try:
            from langgraph.config import get_config

            thread = get_config().get("configurable", {}).get("thread_id")
        except Exception:
            thread = None
    return thread if thread is None or type(thread) in (str, int) else str(thread)


class AgentRecorder:
    """The state two middleware instances share: the capture and the freezing of messages."""

    def __init__(self, capture: PairCapture, tools: bool) -> None:
        self.capture = capture
        self.tools = tools

    def freeze_messages(self, messages: Sequence[Any]) -> FrozenSnapshot | None:
        try:
            return freeze(list(messages))
        except RecordError as exc:
            self.capture._capture_failed(exc)
            return None

    def observe(self, request: ModelRequest[Any]) -> None:
        """The innermost layer: what the model is about to get. Records it with the messages
        the outermost layer saw, when the messages differ (once per distinct result, so a
        retrying layer in between does not log the same pair twice)."""
        step = _STEP.get()
        if step is None or step.before is None:
            return
        after = self.freeze_messages(request.messages)
        if after is None or after.data == step.before.data or after.data in step.recorded:
            return
        step.recorded.add(after.data)
        capture = self.capture
        session = (capture.session_of(request) if capture.session_id is not None
                   else _thread_id(request.runtime))
        tools = None
        if self.tools:
            try:
                tools = [convert_to_openai_tool(tool) for tool in request.tools]
            except Exception:
                tools = None
        capture.finish(capture.begin_frozen(_with_system(step.system, step.before)),
                       _with_system(request.system_message, after), session_id=session, tools=tools,
                       stacklevel=4)


class CaptureStart(AgentMiddleware[CaptureState, Any, Any]):  # type: ignore[type-var]
    """First in the list: snapshots the messages before every other hook runs."""

    state_schema = CaptureState

    def __init__(self, recorder: AgentRecorder) -> None:
        super().__init__()
        self.recorder = recorder

    @property
    def name(self) -> str:
        return "FrayproofCaptureStart"

    def _start(self, state: Any) -> dict[str, Any]:
        return {START: self.recorder.freeze_messages(state.get("messages", []))}

    def _before(self, state: Any) -> dict[str, Any]:
        started = state.get(START)
        frozen = started if started is not None else self.recorder.freeze_messages(state.get("messages", []))
        return {START: None, BEFORE: frozen}

    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return self._start(state)

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return self._start(state)

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        return self._before(state)

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        return self._before(state)

    def wrap_model_call(self, request: ModelRequest[Any],
                        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]) -> Any:
        token = _STEP.set(_Step(_frozen(request.state.get(BEFORE)), request.system_message))
        try:
            return handler(request)
        finally:
            _STEP.reset(token)

    async def awrap_model_call(self, request: ModelRequest[Any],
                               handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]) -> Any:
        token = _STEP.set(_Step(_frozen(request.state.get(BEFORE)), request.system_message))
        try:
            return await handler(request)
        finally:
            _STEP.reset(token)


class CaptureEnd(AgentMiddleware):
    """Last in the list: the innermost model-call layer, so it sees exactly what the model gets."""

    def __init__(self, recorder: AgentRecorder) -> None:
        super().__init__()
        self.recorder = recorder

    @property
    def name(self) -> str:
        return "FrayproofCaptureEnd"

    def wrap_model_call(self, request: ModelRequest[Any],
                        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]) -> Any:
        self.recorder.observe(request)
        return handler(request)

    async def awrap_model_call(self, request: ModelRequest[Any],
                               handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]) -> Any:
        self.recorder.observe(request)
        return await handler(request)


def _edits_context(middleware: AgentMiddleware) -> bool:
    kind = type(middleware)
    return any(getattr(kind, hook) is not getattr(AgentMiddleware, hook)
               for hook in ("before_agent", "abefore_agent", "before_model", "abefore_model",
                            "wrap_model_call", "awrap_model_call"))


def agent_middleware(capture: PairCapture, middleware: Sequence[AgentMiddleware], tools: bool,
                     ) -> list[AgentMiddleware]:
    recorder = AgentRecorder(capture, tools)
    wrapped: list[Any] = [CaptureStart(recorder), *middleware, CaptureEnd(recorder)]
    return wrapped


def default_compactor(middleware: Sequence[Any]) -> str:
    names = [m.name for m in middleware if isinstance(m, AgentMiddleware) and _edits_context(m)]
    return "+".join(names) or "langchain-agent"


# --- plain LangGraph nodes ---------------------------------------------------------------

def _messages_of(state: Any, key: str) -> Any:
    if isinstance(state, dict):
        return state.get(key)
    return getattr(state, key, None)


def _update_of(result: Any, key: str) -> tuple[bool, Any]:
    """The node's update of `key`, from a dict, a `Command` or a list of those."""
    if isinstance(result, Command):
        return _update_of(result.update, key)
    if isinstance(result, dict):
        return (key in result, result.get(key))
    if isinstance(result, list | tuple):
        found, value = False, None
        for part in result:
            if isinstance(part, tuple) and len(part) == 2 and part[0] == key:
                found, value = True, part[1]
            else:
                has, update = _update_of(part, key)
                if has:
                    found, value = True, update
        return found, value
    return False, None


def _copied(messages: Any) -> Any:
    """Shallow copies, so the reducer's id assignment touches nothing of the graph's own."""
    if not isinstance(messages, list):
        messages = [messages]
    return [m.model_copy() if isinstance(m, BaseMessage) else m for m in messages]


def apply_update(messages: Any, result: Any, key: str) -> Any:
    """The messages after the node: its update applied by LangGraph's own `add_messages`
    reducer (`RemoveMessage`s, `REMOVE_ALL_MESSAGES`, replacement by id); None when the node
    did not touch `key`."""
    found, update = _update_of(result, key)
    if not found or update is None:
        return None
    return add_messages(_copied(messages or []), _copied(update))


def node_session(capture: PairCapture, state: Any) -> SessionId:
    if capture.session_id is not None:
        return capture.session_of(state)
    return _thread_id(None)


def wrap_node(node: Callable[..., Any], capture: PairCapture, key: str) -> Callable[..., Any]:
    def begin(state: Any) -> tuple[Any, Before]:
        messages = _messages_of(state, key)
        return messages, capture.begin(messages or [])

    def finish(state: Any, messages: Any, before: Before, result: Any) -> None:
        try:
            after = apply_update(messages, result, key)
        except ValueError:  # an invalid update (an unknown id to remove): the graph says so
            return
        if after is not None:
            capture.finish(before, after, session_id=node_session(capture, state), stacklevel=4)

    if inspect.iscoroutinefunction(node):

        @functools.wraps(node)
        async def async_wrapper(state: Any, *args: Any, **kwargs: Any) -> Any:
            messages, before = begin(state)
            result = await node(state, *args, **kwargs)
            finish(state, messages, before, result)
            return result

        return async_wrapper

    @functools.wraps(node)
    def wrapper(state: Any, *args: Any, **kwargs: Any) -> Any:
        messages, before = begin(state)
        result = node(state, *args, **kwargs)
        finish(state, messages, before, result)
        return result

    return wrapper
