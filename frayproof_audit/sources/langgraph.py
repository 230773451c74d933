"""LangGraph checkpoints: a checkpointer's database (`--source langgraph`): a
`langgraph-checkpoint-sqlite` file, or a `langgraph-checkpoint-postgres` database by its
connection URI (`postgresql://user@host:port/db`).

A checkpointer saves the graph's state after every step (langchain-ai/langgraph
`libs/checkpoint-sqlite/langgraph/checkpoint/sqlite/__init__.py`: tables `checkpoints` and
`writes`; `libs/checkpoint-postgres/langgraph/checkpoint/postgres/base.py`: `checkpoints`,
`checkpoint_blobs`, `checkpoint_writes`; values serialized by `JsonPlusSerializer`). The
database is read through the library itself (`SqliteSaver.list`, `PostgresSaver.list`, which
deserialize every checkpoint), thread by thread, and each checkpoint becomes one JSON line
(`read`): its thread, namespace, id, parent id, timestamp, metadata, the nodes that had run
(`versions_seen`), and the state's message channels as serialized LangChain messages
(`langchain_core.load.dumpd`: format `langchain`). The line of a checkpoint is the same in
either database (keys of metadata and `versions_seen` sorted: Postgres keeps them as JSONB).
`derive` is pure over those lines, so a dump of them (any checkpointer's) is audited the same
way.

Postgres is read read-only: one `READ ONLY`, `REPEATABLE READ` transaction (a consistent
snapshot while the graph writes), never `setup()` (it would create tables in the user's
database). Its URI's password is never shown: every message names it `redacted`
(`frayproof_audit.database_uri`).

A step is a compaction when, from a checkpoint's parent to it (`parent_checkpoint_id`: forks
are branches of their own):

* `messages` lost message ids (LangChain's `SummarizationMiddleware` writes
  `RemoveMessage(REMOVE_ALL_MESSAGES)` then the summary and the kept messages,
  `langchain_v1/langchain/agents/middleware/summarization.py`; a trimming node writes
  `RemoveMessage(id)`s): before = the parent's messages, after = the checkpoint's; event
  `summarize` when a new message took their place, `truncate` when none did;
* a message kept its id but its content was replaced by shorter text or a placeholder
  (`[cleared]`, ...): event `clear`;
* langmem's `SummarizationNode` wrote a `summarized_messages` channel that drops ids of
  `messages` (langchain-ai/langmem `src/langmem/short_term/summarization.py`; it leaves
  `messages` untouched): before = `messages`, after = `summarized_messages`;
* deepagents' `SummarizationMiddleware` recorded a new `_summarization_event {cutoff_index,
  summary_message}` (langchain-ai/deepagents `libs/deepagents/deepagents/middleware/summarization.py`;
  it keeps state and sends the model `[summary_message, *messages[cutoff_index:]]`): before =
  what the model was sent until then, after = what it is sent now.

Every such step is one `Compaction` (fidelity `explicit`), `session_id` the thread id (with
the namespace of a subgraph), `compactor` the node that ran in the step (the one whose
`versions_seen` changed: `SummarizationMiddleware.before_model`). The system prompt of a
`create_agent` agent is not in the state: it is in neither before nor after.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from frayproof_audit.database_uri import is_database_uri, redacted, scrub, unmasked
from frayproof_audit.errors import InputError
from frayproof_audit.sources.base import (
    Compaction,
    Derived,
    Event,
    Line,
    LineProblem,
    Row,
    Siblings,
    Source,
    Tally,
    first_objects,
    no_role,
    parsed,
)
from frayproof_audit.sources.diffing import CLEARED_MARKERS

NAME = "langgraph"
FORMAT = "langchain"
EXTRA = "pip install 'frayproof-audit[langgraph]'"
POSTGRES_EXTRA = "pip install 'frayproof-audit[postgres]'"
CONNECT_TIMEOUT = 10
"""Seconds to wait for a Postgres server before saying it cannot be reached."""
SQLITE_MAGIC = b"SQLite format 3\x00"
REMOVE_ALL = "__remove_all__"
"""`langgraph.graph.message.REMOVE_ALL_MESSAGES`."""
CHANNELS = ("messages", "summarized_messages", "_summarization_event", "context")
NO_SYSTEM = ("the agent's system prompt is not part of the graph state: it is in neither "
             "before nor after")


class CheckpointsError(InputError):
    """A checkpoint database that cannot be read."""


def sniff(lines: Sequence[Line]) -> str | None:
    for row, value in first_objects(lines):
        if "checkpoint_id" in value and "thread_id" in value:
            return f"line {row} is a LangGraph checkpoint (thread_id and checkpoint_id)"
    return None


def sniff_file(path: str) -> str | None:
    """Evidence from the file's own tables; for a Postgres connection URI, from the database's
    (a URI names one database, so one that cannot be reached or holds no checkpointer is a
    `CheckpointsError` saying why, before any work, rather than no evidence)."""
    if is_database_uri(path):
        connection, _ = _connect(path)
        try:
            with connection.cursor() as cursor:
                _require_tables(cursor, path)
        except _psycopg_errors() as exc:
            raise CheckpointsError(f"{redacted(path)}: cannot read the database "
                                   f"({scrub(_line(exc), path)})") from None
        finally:
            connection.close()
        return "a LangGraph checkpoint database (PostgreSQL tables " + ", ".join(POSTGRES_TABLES) + ")"
    try:
        with open(path, "rb") as handle:
            if handle.read(16) != SQLITE_MAGIC:
                return None
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
            tables = {name for (name,) in connection.execute(
                "select name from sqlite_master where type = 'table'")}
    except (OSError, sqlite3.Error):
        return None
    if {"checkpoints", "writes"} <= tables:
        return "a LangGraph checkpoint database (SQLite tables checkpoints and writes)"
    return None



# --------------------------------------------------------------------------- reading (impure)


def plain(value: Any) -> Any:
    """A state value as JSON: LangChain objects by their own serializer (`dumpd`), dataclasses
    and pydantic models by their fields."""
    from langchain_core.load import dumpd
    from langchain_core.messages import BaseMessage

    if isinstance(value, BaseMessage):
        return dumpd(value)
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):
        return plain(value.model_dump())
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def read(path: str) -> Iterator[bytes]:
    """Every checkpoint of the database (a SQLite file, or a Postgres database by its connection
    URI), thread by thread, oldest first, as a JSON line."""
    if is_database_uri(path):
        yield from _read_postgres(path)
        return
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError as exc:
        raise CheckpointsError(f"reading a LangGraph checkpoint database needs "
                               f"langgraph-checkpoint-sqlite ({exc.name} is not installed): "
                               f"{EXTRA}") from exc
    if "://" in path:
        raise CheckpointsError(f"{redacted(path)}: a checkpoint database is a SQLite file or a "
                               "Postgres connection URI (postgresql://user@host:port/db)")
    if not os.path.isfile(path):
        raise CheckpointsError(f"{path}: no such checkpoint database")
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    try:
        saver = SqliteSaver(connection)
        threads = [thread for (thread,) in connection.execute(
            "select distinct thread_id from checkpoints order by thread_id")]
        yield from _lines(saver, threads)
    except sqlite3.Error as exc:
        raise CheckpointsError(f"{path}: not a readable checkpoint database ({exc})") from exc
    finally:
        connection.close()


def _lines(saver: Any, threads: Iterable[Any]) -> Iterator[bytes]:
    """The checkpoints of each thread (every namespace), oldest first: `list` gives the newest
    first, by checkpoint id, for both checkpointers."""
    for thread in threads:
        found = list(saver.list({"configurable": {"thread_id": thread}}))
        for item in reversed(found):
            yield (json.dumps(_record(item), ensure_ascii=False) + "\n").encode("utf-8")


def _read_postgres(uri: str) -> Iterator[bytes]:
    """A Postgres checkpointer's checkpoints, through the library's own `PostgresSaver` (its
    queries and its deserializer), in one read-only, repeatable-read transaction: a graph
    writing meanwhile is seen as it was when the read began, and nothing is ever written
    (`setup()`, which creates and migrates tables, is never called)."""
    connection, saver = _connect(uri)
    try:
        with connection.cursor() as cursor:
            _require_tables(cursor, uri)
            # COLLATE "C": thread ids in byte order, as SQLite orders them, whatever the locale
            cursor.execute('SELECT DISTINCT thread_id COLLATE "C" AS thread_id FROM checkpoints '
                           'ORDER BY 1')
            threads = [row["thread_id"] for row in cursor.fetchall()]
        yield from _lines(saver, threads)
    except _psycopg_errors() as exc:
        raise CheckpointsError(f"{redacted(uri)}: cannot read the LangGraph checkpoints "
                               f"({scrub(_line(exc), uri)})") from None
    finally:
        connection.close()


POSTGRES_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
"""What `PostgresSaver.list` reads (`langgraph/checkpoint/postgres/base.py`: `SELECT_SQL`)."""


def _require_tables(cursor: Any, uri: str) -> None:
    """A `CheckpointsError` naming the checkpointer tables the database (its search path) lacks."""
    cursor.execute("SELECT name FROM unnest(%s::text[]) AS name WHERE to_regclass(name) IS NULL",
                   (list(POSTGRES_TABLES),))
    missing = [row["name"] for row in cursor.fetchall()]
    if missing:
        raise CheckpointsError(f"{redacted(uri)}: no LangGraph checkpointer tables in this database"
                               f" (missing {', '.join(missing)}; the application creates them with"
                               " PostgresSaver.setup())")


def _psycopg_errors() -> tuple[type[Exception], ...]:
    import psycopg

    return (psycopg.Error,)


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _connect(uri: str) -> tuple[Any, Any]:
    """A read-only connection to `uri` and a `PostgresSaver` on it; a clear `CheckpointsError`
    (password redacted) when the packages are missing or the database cannot be reached."""
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
    except ImportError as exc:
        raise CheckpointsError(f"reading a LangGraph Postgres checkpointer needs "
                               f"langgraph-checkpoint-postgres and psycopg ({exc.name} is not "
                               f"installed): {POSTGRES_EXTRA}") from None
    connectable = unmasked(uri)
    stored = connectable is not None
    if connectable is not None:  # a stored name read again (`show`, `rejudge`): the password
        uri = connectable        # libpq finds itself
    try:
        # dict rows, as `PostgresSaver.from_conn_string` asks for; no server-side prepared
        # statements (a transaction-mode pooler such as PgBouncer may refuse them)
        connection = psycopg.Connection.connect(uri, autocommit=False, prepare_threshold=None,
                                                row_factory=dict_row, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as exc:
        hint = ("; the name stored holds no password: set PGPASSWORD or a ~/.pgpass entry"
                if stored else "")
        raise CheckpointsError(f"{redacted(uri)}: cannot connect ({scrub(_line(exc), uri)}){hint}") from None
    connection.read_only = True
    connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    return connection, PostgresSaver(connection)


def _record(item: Any) -> dict[str, Any]:
    configurable = item.config.get("configurable", {})
    parent = (item.parent_config or {}).get("configurable", {})
    checkpoint = item.checkpoint
    values = checkpoint.get("channel_values", {})
    return {
        "thread_id": str(configurable.get("thread_id")),
        "checkpoint_ns": configurable.get("checkpoint_ns", ""),
        "checkpoint_id": configurable.get("checkpoint_id"),
        "parent_checkpoint_id": parent.get("checkpoint_id"),
        "ts": checkpoint.get("ts"),
        # sorted: Postgres stores both as JSONB, which orders keys its own way; a checkpoint is
        # the same line (the same `record_sha256`) in either checkpointer
        "metadata": _sorted(plain(item.metadata or {})),
        "versions_seen": _sorted(plain(checkpoint.get("versions_seen", {}))),
        "channel_values": {key: plain(values[key]) for key in CHANNELS if key in values},
    }


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


# --------------------------------------------------------------------------- deriving (pure)


def _fields(message: Any) -> dict[str, Any]:
    if isinstance(message, dict):
        inner = message.get("kwargs") if "lc" in message else message.get("data", message)
        return inner if isinstance(inner, dict) else {}
    return {}


def _id(message: Any) -> str | None:
    found = _fields(message).get("id")
    return found if isinstance(found, str) else None


def _text(message: Any) -> str:
    return json.dumps(_fields(message).get("content"), ensure_ascii=False)


def _messages(values: dict[str, Any], key: str) -> list[Any] | None:
    found = values.get(key)
    return found if isinstance(found, list) else None


def _event(before: list[Any], after: list[Any]) -> tuple[Event, str] | None:
    """Whether `after` compacted `before`: ids lost (summarize / truncate), or content of a
    kept id replaced by shorter text or a placeholder (clear)."""
    after_ids = {_id(message) for message in after}
    before_ids = {_id(message) for message in before}
    lost = [i for i in before_ids if i is not None and i not in after_ids]
    if lost:
        added = [m for m in after if _id(m) not in before_ids]
        if added:
            return "summarize", f"{len(lost)} message id(s) gone, {len(added)} new message(s) in their place"
        return "truncate", f"{len(lost)} message id(s) gone, nothing new in their place"
    old = {_id(m): _text(m) for m in before if _id(m) is not None}
    for message in after:
        earlier = old.get(_id(message))
        now = _text(message)
        if earlier is not None and now != earlier and (
                any(marker in now for marker in CLEARED_MARKERS) or len(now) < len(earlier)):
            return "clear", f"the content of message {_id(message)} was replaced by shorter text"
    return None


def _node(record: dict[str, Any], parent: dict[str, Any]) -> str | None:
    """The node that ran in the step: the one whose `versions_seen` changed."""
    seen, earlier = record.get("versions_seen"), parent.get("versions_seen")
    if not isinstance(seen, dict):
        return None
    earlier = earlier if isinstance(earlier, dict) else {}
    changed = [node for node, versions in seen.items()
               if earlier.get(node) != versions and not str(node).startswith("__")]
    return ", ".join(sorted(changed)) or None


def _effective(values: dict[str, Any]) -> list[Any] | None:
    """What deepagents sends the model: the summary message and the messages from the cutoff."""
    messages = _messages(values, "messages")
    event = values.get("_summarization_event")
    if messages is None or not isinstance(event, dict):
        return messages
    cutoff = event.get("cutoff_index")
    summary = event.get("summary_message")
    if type(cutoff) is not int or summary is None:
        return messages
    return [summary, *messages[cutoff:]]


def _tokens(messages: list[Any]) -> int | None:
    for message in reversed(messages):
        usage = _fields(message).get("usage_metadata")
        if isinstance(usage, dict) and type(usage.get("input_tokens")) is int:
            tokens: int = usage["input_tokens"]
            return tokens
    return None


def derive(label: str, lines: Iterable[Line], siblings: Siblings | None = None) -> Derived:
    tally = Tally()
    rows: list[Row] = []
    records: dict[tuple[str, str, str], tuple[int, dict[str, Any]]] = {}
    order: list[tuple[int, dict[str, Any]]] = []
    for row, value in parsed(lines, tally):
        if isinstance(value, LineProblem):
            rows.append(value)
            continue
        if not isinstance(value.get("checkpoint_id"), str) or "thread_id" not in value:
            tally.problems += 1
            rows.append(LineProblem(row, f"line {row} is no checkpoint (thread_id and checkpoint_id)"))
            continue
        key = (str(value["thread_id"]), str(value.get("checkpoint_ns") or ""), value["checkpoint_id"])
        records[key] = (row, value)
        order.append((row, value))
    ordinals: dict[str, int] = {}
    for row, record in order:
        thread, namespace = str(record["thread_id"]), str(record.get("checkpoint_ns") or "")
        parent_id = record.get("parent_checkpoint_id")
        found = records.get((thread, namespace, parent_id)) if isinstance(parent_id, str) else None
        compaction = None if found is None else _step(thread, namespace, row, record, found[1], ordinals)
        if compaction is None:
            tally.other += 1
        else:
            tally.events += 1
            rows.append(compaction)
    rows.sort(key=lambda row: row.source_row)
    return Derived(tuple(rows), tally.frozen(), (NO_SYSTEM,) if tally.events else ())


def _step(thread: str, namespace: str, row: int, record: dict[str, Any], parent: dict[str, Any],
          ordinals: dict[str, int]) -> Compaction | None:
    values = record.get("channel_values") or {}
    earlier = parent.get("channel_values") or {}
    if not isinstance(values, dict) or not isinstance(earlier, dict):
        return None
    session = thread if not namespace else f"{thread}/{namespace}"
    found: tuple[list[Any], list[Any], Event, str, str] | None = None
    before, after = _messages(earlier, "messages"), _messages(values, "messages")
    if before is not None and after is not None and (change := _event(before, after)) is not None:
        found = (before, after, *change, "messages")
    summarized = _messages(values, "summarized_messages")
    if found is None and summarized is not None and after is not None \
            and summarized != _messages(earlier, "summarized_messages") \
            and (change := _event(after, summarized)) is not None:
        found = (after, summarized, *change, "summarized_messages (langmem)")
    if found is None and values.get("_summarization_event") != earlier.get("_summarization_event") \
            and isinstance(values.get("_summarization_event"), dict):
        was, now = _effective(earlier), _effective(values)
        if was is not None and now is not None:
            found = (was, now, "summarize", "a new _summarization_event", "_summarization_event (deepagents)")
    if found is None:
        return None
    before, after, event, reason, channel = found
    ordinals[session] = ordinals.get(session, 0) + 1
    node = _node(record, parent)
    notes = [NO_SYSTEM, f"{reason} ({channel})"]
    return Compaction(
        source_row=row, ordinal=ordinals[session], session_id=session,
        logged_at=record.get("ts") if isinstance(record.get("ts"), str) else None,
        compactor=f"langgraph/{node or 'unknown'}", format=FORMAT, event=event,
        fidelity="explicit", before=before, after=after, tokens_before=_tokens(before),
        notes=tuple(notes))


def history(lines: Iterable[Line]) -> list[Any]:
    """The messages of the last checkpoint of the file (its last thread)."""
    last: list[Any] = []
    for _, value in parsed(lines, Tally()):
        if isinstance(value, dict):
            values = value.get("channel_values")
            found = _messages(values, "messages") if isinstance(values, dict) else None
            if found is not None:
                last = found
    return last


SOURCE = Source(
    name=NAME, format=FORMAT, sniff=sniff, derive=derive, role=no_role, history=history,
    notes=(NO_SYSTEM, "a Postgres checkpointer is read by its connection URI (pip install "
                      "'frayproof-audit[postgres]'), read-only, its password never shown"),
    read=read, sniff_file=sniff_file)
