"""One-line capture for LangChain agents and LangGraph nodes (extra `langchain`).

* `recording(writer, middleware)` wraps an agent's middleware list for `create_agent`: the
  recorder's first half runs before every other hook (it snapshots the messages before any
  `before_agent` / `before_model` hook, such as `SummarizationMiddleware` or a `trim_messages`
  hook, rewrites them) and its second half is the innermost `wrap_model_call` layer (it sees
  exactly what the model gets, after any trimming done there). Each model call whose messages
  differ from the step's start is one pair: before = system prompt + messages at the start of
  the step, after = system prompt + messages the model gets, converted by LangChain's own
  `convert_to_openai_messages` (format `openai`), session = the thread id.
* `recording_node(node, writer)` wraps a plain LangGraph node (state in, partial state out):
  before = `state["messages"]`, after = the node's update applied by LangGraph's own
  `add_messages` reducer, so `RemoveMessage`s, `REMOVE_ALL_MESSAGES` and replacements by id come
  out exactly as the graph will apply them. A node that does not touch the messages is no pair.
* `node_messages()` / `updated_messages()`: the same two extractors for `guard(before=…,
  after=…)`, to guard a node with a contract.

Importing this module needs nothing; using it needs `langchain` and `langgraph`
(`pip install 'frayproof-audit[langchain]'`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from frayproof_audit.capture.recorder import PairCapture, SessionSource
from frayproof_audit.capture.writer import PairWriter
from frayproof_audit.contract import load_contract

if TYPE_CHECKING:
    from langchain.agents.middleware.types import AgentMiddleware

__all__ = ["node_messages", "recording", "recording_node", "updated_messages"]

EXTRA = "pip install 'frayproof-audit[langchain]'"
N = TypeVar("N", bound=Callable[..., Any])


def _impl() -> ModuleType:
    try:
        return importlib.import_module("frayproof_audit.capture._langchain_impl")
    except ImportError as exc:
        missing = exc.name or "langchain"
        if missing.startswith("frayproof_audit"):
            raise
        raise ImportError(f"frayproof_audit.capture.langchain needs LangChain and LangGraph "
                          f"({missing} is not installed): {EXTRA}") from exc


def recording(
    writer: PairWriter,
    middleware: Sequence[AgentMiddleware] = (),
    *,
    compactor: str | None = None,
    contract: Any = None,
    on_violation: str = "log",
    session_id: SessionSource = None,
    tools: bool = False,
) -> list[AgentMiddleware]:
    """`middleware` with the recorder around it, for `create_agent(..., middleware=...)`.

    `compactor` defaults to the names of the wrapped middleware that can edit the context
    (`SummarizationMiddleware`). `contract` also checks each pair live (its verdict goes into
    the record under `guard`; `on_violation="raise"` stops the model call); `session_id` is an
    id or a callable of the `ModelRequest` (default: the thread id). `tools=True` records the
    tools the model had (LangChain's `convert_to_openai_tool`), for tool-argument checks."""
    impl = _impl()
    name = compactor or impl.default_compactor(middleware)
    capture = PairCapture(writer, None if contract is None else load_contract(contract), on_violation,
                          name, hook=True, session_id=session_id, record_unchanged=False)
    result: list[AgentMiddleware] = impl.agent_middleware(capture, list(middleware), tools)
    return result


def recording_node(
    node: N,
    writer: PairWriter,
    *,
    key: str = "messages",
    compactor: str | None = None,
    contract: Any = None,
    on_violation: str = "log",
    session_id: SessionSource = None,
) -> N:
    """`node` (sync or async) recording each call that changes `state[key]` as a pair.

    `compactor` defaults to the node's module and qualified name; `session_id` is an id or a
    callable of the state (default: the thread id from the graph's config)."""
    impl = _impl()
    name = compactor or f"{getattr(node, '__module__', '')}.{getattr(node, '__qualname__', repr(node))}"
    capture = PairCapture(writer, None if contract is None else load_contract(contract), on_violation,
                          name, hook=True, session_id=session_id, record_unchanged=False)
    wrapped: N = impl.wrap_node(node, capture, key)
    return wrapped


def node_messages(key: str = "messages") -> Callable[[Any], Any]:
    """`before=` for `guard` on a LangGraph node: the state's messages."""
    impl = _impl()

    def before(state: Any) -> Any:
        return impl._messages_of(state, key) or []

    return before


def updated_messages(key: str = "messages") -> Callable[[Any, Any], Any]:
    """`after=` for `guard` on a LangGraph node: the state's messages with the node's update
    applied by `add_messages` (unchanged messages when the node did not touch them)."""
    impl = _impl()

    def after(update: Any, state: Any) -> Any:
        messages = impl._messages_of(state, key) or []
        applied = impl.apply_update(messages, update, key)
        return list(messages) if applied is None else applied

    return after
