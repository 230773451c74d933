"""The `langgraph` source on a real PostgreSQL server, through a connection URI.

One server per module: the Postgres binaries of the `pgserver` wheel, started by the test on
127.0.0.1 (a free port) with password authentication, in a temporary folder, stopped and removed
at the end (skipped, saying why, when it cannot start; under `CI` that fails instead). Real
graphs (LangChain's `SummarizationMiddleware` agent, a `RemoveMessage` trimming node, a
trimming subgraph) checkpoint through the real `PostgresSaver` (`setup()` is the test's, never
the audit's); the source must find exactly the compactions they made, with the same pairs as
the same checkpoints in a `langgraph-checkpoint-sqlite` database; the command line reads a URI
through `--source langgraph` and `auto`, refuses what cannot be read with exit 2 and a message
naming the URI, and never writes or shows the password.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.corpus import read_table
from frayproof_audit.database_uri import redact_text, redacted, secrets_of, shown, unmasked
from frayproof_audit.errors import InputError
from frayproof_audit.sources import Compaction, derive, detect_file, read_source
from tests.helpers import EXAMPLES, run_cli


def _need(module: str) -> Any:
    """The module, or a skip saying what is missing (a failure under CI, which installs it)."""
    try:
        return pytest.importorskip(module)
    except pytest.skip.Exception:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is not installed, and CI must run the Postgres tests")
        raise


_need("langgraph.checkpoint.postgres")
_need("psycopg")
_need("pgserver")
_need("langgraph.checkpoint.sqlite")

import psycopg  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import SummarizationMiddleware  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langgraph.checkpoint.postgres import PostgresSaver  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402

from tests.test_sources_langgraph import held, trimming_graph  # noqa: E402

PASSWORD = "Sekr3t-pg-pw"
"""Long and unlike anything else in a run's output: found in no byte written or shown."""
CONTRACT = EXAMPLES / "contract.yaml"


@dataclass(frozen=True)
class Server:
    port: int
    run_as: str | None

    def uri(self, database: str = "postgres", user: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{database}"

    def create(self, database: str) -> str:
        """A new empty database, by its URI."""
        with psycopg.connect(self.uri(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{database}"')
        return self.uri(database)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    from pgserver._commands import POSTGRES_BIN_PATH

    root = Path(tempfile.mkdtemp(prefix="frayproof-pg-"))
    run_as = None
    if os.geteuid() == 0:  # postgres refuses to run as root: pgserver's own unprivileged user
        import pwd

        from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

        run_as = "pgserver"
        ensure_user_exists(run_as)
        ensure_prefix_permissions(root)
        readable, runnable = stat.S_IRGRP | stat.S_IROTH, stat.S_IXGRP | stat.S_IXOTH
        ensure_folder_permissions(POSTGRES_BIN_PATH, readable | runnable)
        ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", readable)
        os.chown(root, pwd.getpwnam(run_as).pw_uid, pwd.getpwnam(run_as).pw_gid)
    password = root / "password"
    password.write_text(PASSWORD + "\n")
    if run_as is not None:
        shutil.chown(password, run_as)
    data = root / "data"
    port = _free_port()
    started = False
    try:
        subprocess.run([POSTGRES_BIN_PATH / "initdb", "-D", data, "-U", "postgres", "-N",
                        "--auth=scram-sha-256", f"--pwfile={password}", "--encoding=utf8"],
                       check=True, capture_output=True, user=run_as, timeout=60)
        subprocess.run([POSTGRES_BIN_PATH / "pg_ctl", "-D", data, "-w", "-t", "30", "-l", root / "log",
                        "-o", f"-h 127.0.0.1 -p {port} -k '' -F", "start"],
                       check=True, capture_output=True, user=run_as, timeout=60)
        started = True
    except (OSError, subprocess.SubprocessError) as exc:
        log = (root / "log").read_text(errors="replace") if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        reason = f"cannot start a PostgreSQL server from pgserver's binaries: {exc} {log[-500:]}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        yield Server(port, run_as)
    finally:
        if started:
            subprocess.run([POSTGRES_BIN_PATH / "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"],
                           capture_output=True, user=run_as, timeout=60, check=False)
        shutil.rmtree(root, ignore_errors=True)


# --------------------------------------------------------------------------- graphs


def _agent(checkpointer: Any) -> Any:
    model = FakeMessagesListChatModel(responses=[AIMessage(f"answer {i}") for i in range(30)])
    summarizer = FakeMessagesListChatModel(responses=[AIMessage("They asked q0 to q2.")] * 5)
    return create_agent(model, tools=[], system_prompt="Be brief.", checkpointer=checkpointer,
                        middleware=[SummarizationMiddleware(model=summarizer, trigger=("messages", 6),
                                                            keep=("messages", 2))])


def _ask(graph: Any, thread: str, count: int, first: int = 0) -> None:
    for i in range(first, first + count):
        graph.invoke({"messages": [HumanMessage(f"q{i}")]}, {"configurable": {"thread_id": thread}})


def _compactions(uri: str) -> list[Compaction]:
    found = derive("langgraph", "db", read_source("langgraph", uri))
    assert found.counts.problems == 0
    return [row for row in found.rows if isinstance(row, Compaction)]


@pytest.fixture(scope="module")
def trimmed(server: Server) -> str:
    """A database a trimming graph checkpointed: thread `t` compacted twice, `u` once."""
    uri = server.create("trimmed")
    with PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        graph = trimming_graph().compile(checkpointer=saver)
        _ask(graph, "t", 4)
        _ask(graph, "u", 3)
    return uri


# --------------------------------------------------------------------------- the source


def test_summarization_middleware_on_postgres_is_the_compaction_the_agent_made(server: Server) -> None:
    uri = server.create("agent")
    with PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        agent = _agent(saver)
        _ask(agent, "alice", 5)
        _ask(agent, "bob", 2)
        summaries = [m for m in agent.get_state({"configurable": {"thread_id": "alice"}}).values["messages"]
                     if str(m.content).startswith("Here is a summary of the conversation to date:")]
        assert len(summaries) == 1  # the graph compacted alice once, bob never
        assert detect_file(uri) == "langgraph"
        [row] = _compactions(uri)
        assert (row.session_id, row.pair_id, row.event, row.fidelity) == ("alice", "alice:1", "summarize",
                                                                          "explicit")
        assert row.compactor == "langgraph/SummarizationMiddleware.before_model"
        assert (row.before, row.after) == held(agent, "alice", row)
        assert row.after[0]["kwargs"]["id"] == summaries[0].id


def test_two_threads_and_a_subgraphs_namespace_are_read(server: Server) -> None:
    """A trimming subgraph inside a graph: its checkpoints are in their own namespace
    (`inner:<task id>`), one per invocation; the parent only merges what it returns."""
    from langchain_core.load import dumpd

    uri = server.create("subgraph")

    def outer(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("outer")]}

    builder = StateGraph(MessagesState)
    builder.add_node("inner", trimming_graph(keep=2).compile())
    builder.add_node("outer", outer)
    builder.add_edge(START, "inner")
    builder.add_edge("inner", "outer")
    builder.add_edge("outer", END)
    with PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        graph = builder.compile(checkpointer=saver)
        _ask(graph, "one", 3)
        _ask(graph, "two", 3)
        rows = _compactions(uri)
        assert [(row.session_id.split("/inner:")[0], row.event, row.compactor, row.pair_id)
                for row in rows] == [("one", "truncate", "langgraph/trim", f"{rows[0].session_id}:1"),
                                     ("two", "truncate", "langgraph/trim", f"{rows[1].session_id}:1")]
        for row in rows:
            thread, namespace = row.session_id.split("/", 1)
            assert namespace.startswith("inner:")
            found = {item.checkpoint["ts"]: item for item in saver.list(
                {"configurable": {"thread_id": thread, "checkpoint_ns": namespace}})}
            child = found[row.logged_at]
            parent = next(item for item in found.values() if item.config["configurable"]["checkpoint_id"]
                          == child.parent_config["configurable"]["checkpoint_id"])
            assert row.before == [dumpd(m) for m in parent.checkpoint["channel_values"]["messages"]]
            assert row.after == [dumpd(m) for m in child.checkpoint["channel_values"]["messages"]]
            assert len(row.after) == 2


def test_the_pairs_equal_those_of_the_same_checkpoints_in_sqlite(
        server: Server, tmp_path: Path) -> None:
    """The trimming graph checkpointed in SQLite, every checkpoint copied through PostgresSaver's
    own `put` and `put_writes`: the `pairs` of both databases, row for row, but their names."""
    import sqlite3

    path = tmp_path / "trim.sqlite"
    uri = server.create("copied")
    with sqlite3.connect(path, check_same_thread=False) as connection:
        sqlite_saver = SqliteSaver(connection)
        graph = trimming_graph().compile(checkpointer=sqlite_saver)
        _ask(graph, "t", 5)
        _ask(graph, "u", 4)
        with PostgresSaver.from_conn_string(uri) as saver:
            saver.setup()
            for item in reversed(list(sqlite_saver.list(None))):
                configurable = item.config["configurable"]
                parent = item.parent_config or {"configurable": {
                    "thread_id": configurable["thread_id"], "checkpoint_ns": configurable["checkpoint_ns"]}}
                saver.put(parent, item.checkpoint, item.metadata, item.checkpoint["channel_versions"])
                for task, channel, value in item.pending_writes or ():
                    saver.put_writes(item.config, [(channel, value)], task)
    assert list(read_source("langgraph", uri)) == list(read_source("langgraph", path))
    tables = []
    for database in (path, uri):
        out = tmp_path / f"out-{len(tables)}"
        run_cli("audit", database, "--source", "langgraph", "--contract", CONTRACT, "--out", out,
                "--run-id", "night", "-j", "1", expect=None)
        tables.append(read_table(out, "pairs").collect().drop("source").sort("pair_id"))
    assert tables[0]["pair_id"].to_list() == ["t:1", "t:2", "t:3", "u:1", "u:2"]
    assert tables[0].equals(tables[1])


def test_a_read_only_role_is_enough_and_nothing_is_created(server: Server, trimmed: str) -> None:
    with psycopg.connect(trimmed, autocommit=True) as connection:
        connection.execute("DROP TABLE checkpoint_migrations")
        connection.execute("DO $$ BEGIN CREATE ROLE reader LOGIN PASSWORD 'reader-pw-77'; "
                           "EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        connection.execute("GRANT SELECT ON checkpoints, checkpoint_blobs, checkpoint_writes TO reader")
    reader = server.uri("trimmed", user="reader", password="reader-pw-77")
    rows = _compactions(reader)
    assert [(row.session_id, row.event, row.compactor) for row in rows] == [
        ("t", "truncate", "langgraph/trim")] * 2 + [("u", "truncate", "langgraph/trim")]
    assert rows == _compactions(trimmed)
    with psycopg.connect(trimmed, autocommit=True) as connection:  # setup() would have made it again
        assert connection.execute("SELECT to_regclass('checkpoint_migrations')").fetchone() == (None,)


def test_what_cannot_be_read_is_a_clear_error_naming_the_uri_without_its_password(
        server: Server) -> None:
    empty = server.create("empty")
    wrong = server.uri("trimmed", password="Wr0ng-pass-99")
    closed = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{_free_port()}/x"
    cases = {
        empty: "no LangGraph checkpointer tables in this database (missing checkpoints, "
               "checkpoint_blobs, checkpoint_writes",
        wrong: "password authentication failed",
        closed: "cannot connect",
        server.uri("nosuchdb"): 'database "nosuchdb" does not exist',
        server.uri("trimmed") + "?nosuchoption=1": "cannot connect",
    }
    for uri, said in cases.items():
        with pytest.raises(InputError) as caught:
            list(read_source("langgraph", uri))
        message = str(caught.value)
        assert said in message and redact_text(uri).split("?")[0] in message
        assert PASSWORD not in message and "Wr0ng-pass-99" not in message
        result = run_cli("pairs", "--source", "langgraph", uri, expect=2)
        assert said in result.stderr
        assert PASSWORD not in result.stdout + result.stderr and "Wr0ng" not in result.stderr


# --------------------------------------------------------------------------- the command line


def _walk_bytes(folder: Path) -> Iterator[tuple[Path, bytes]]:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield path, path.read_bytes()


def _assert_secret_nowhere(out: Path, *texts: str) -> None:
    files = list(_walk_bytes(out))
    assert files
    for path, data in files:
        assert PASSWORD.encode() not in data, path
    for text in texts:
        assert PASSWORD not in text


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_audit_and_pairs_read_a_uri_and_never_write_its_password(
        server: Server, trimmed: str, tmp_path: Path, scheme: str, monkeypatch: pytest.MonkeyPatch) -> None:
    uri = trimmed.replace("postgresql://", f"{scheme}://", 1)
    shown = f"{scheme}://postgres:***@127.0.0.1:{server.port}/trimmed"
    listed = run_cli("pairs", "--source", "langgraph", uri, "--format", "json")
    assert PASSWORD not in listed.stdout + listed.stderr and shown in listed.stdout
    written = tmp_path / "pairs.jsonl"
    run_cli("pairs", uri, "-o", written)  # auto: the scheme and the tables say langgraph
    assert PASSWORD.encode() not in written.read_bytes() and len(written.read_text().splitlines()) == 3
    out = tmp_path / "out"
    result = run_cli("audit", "--source", "langgraph", uri, "--contract", CONTRACT, "--out", out,
                     "--run-id", "night", "-j", "1", expect=None)
    assert result.exit_code in (0, 1), result.stderr
    pairs = read_table(out, "pairs").collect()
    assert pairs["source"].unique().to_list() == [shown]
    assert sorted(pairs["pair_id"].to_list()) == ["t:1", "t:2", "u:1"]
    runs = read_table(out, "runs").collect()
    assert runs["inputs"].to_list() == [[shown]]
    listed_runs = run_cli("runs", out)
    # a pair is read back by its stored name: the password libpq finds itself (PGPASSWORD)
    refused = run_cli("show", out, "t:1", expect=2)
    assert "no password supplied" in refused.stderr and "set PGPASSWORD" in refused.stderr
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    shown_pair = run_cli("show", out, "t:1", expect=None)
    assert shown_pair.exit_code in (0, 1) and "q2" in shown_pair.stdout, shown_pair.stderr
    report = run_cli("report", out, "-o", f"{out}/report/", expect=None)
    assert report.exit_code == 0, report.stderr
    pages = list((out / "report").rglob("*.html"))
    assert len(pages) > 1 and any(shown.encode() in page.read_bytes() for page in pages)
    _assert_secret_nowhere(out, *(r.stdout + r.stderr for r in (
        listed, result, listed_runs, refused, shown_pair, report)))


def test_a_real_subprocess_audits_a_uri_and_shows_no_password(
        server: Server, trimmed: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli("audit", "--source", "langgraph", trimmed, "--contract", CONTRACT, "--out", out,
                     "--run-id", "night", "-j", "2", expect=None, real=True)
    assert result.exit_code in (0, 1), result.stderr
    shown = f"postgresql://postgres:***@127.0.0.1:{server.port}/trimmed"
    assert read_table(out, "pairs").collect()["source"].to_list() == [shown] * 3
    assert shown in read_table(out, "runs").collect()["argv"].to_list()[0]  # the command line
    _assert_secret_nowhere(out, result.stdout, result.stderr)
    failed = run_cli("audit", "--source", "langgraph", server.uri("trimmed", password="Wr0ng-pass-99"),
                     "--contract", CONTRACT, "--out", tmp_path / "bad", expect=2, real=True)
    assert "password authentication failed" in failed.stderr and "Wr0ng-pass-99" not in failed.stderr


def test_a_uri_is_read_only_by_a_source_that_reads_databases(server: Server, trimmed: str,
                                                             tmp_path: Path) -> None:
    for source in ("pairs", "codex"):
        result = run_cli("audit", "--source", source, trimmed, "--contract", CONTRACT,
                         "--out", tmp_path / source, expect=2)
        assert "is a database" in result.stderr or "no source of this run reads a database" in result.stderr
        assert PASSWORD not in result.stderr and "***" in result.stderr


def test_an_incremental_night_skips_an_unchanged_database_and_audits_a_changed_one(
        server: Server, tmp_path: Path) -> None:
    uri = server.create("nightly")
    out = tmp_path / "out"

    def night(name: str) -> pl.DataFrame:
        run_cli("audit", "--source", "langgraph", uri, "--contract", CONTRACT, "--out", out,
                "--run-id", name, "--incremental", "-j", "1", expect=None)
        return read_table(out, "pairs").collect().filter(pl.col("run_id") == name)

    with PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        graph = trimming_graph().compile(checkpointer=saver)
        _ask(graph, "t", 4)
        assert sorted(night("monday")["pair_id"].to_list()) == ["t:1", "t:2"]
        assert night("tuesday").height == 0  # nothing changed: nothing audited again
        _ask(graph, "t", 1, first=4)  # one more question: the graph trims once more
        # changed: audited again, whole (as a changed SQLite file is), the new compaction with it
        assert sorted(night("wednesday")["pair_id"].to_list()) == ["t:1", "t:2", "t:3"]
        assert night("thursday").height == 0
    _assert_secret_nowhere(out)


# --------------------------------------------------------------------------- redaction


@pytest.mark.parametrize(("given", "shown"), [
    ("postgresql://u:pw@h:5432/db", "postgresql://u:***@h:5432/db"),
    ("postgres://u:p%40ss@h/db", "postgres://u:***@h/db"),
    ("postgresql://u:p@ss/w@h/db", "postgresql://u:***@h/db"),  # unescaped: to the last @
    ("postgresql://u@h/db?password=pw&sslmode=disable", "postgresql://u@h/db?password=***&sslmode=disable"),
    ("postgresql://h:5432/db", "postgresql://h:5432/db"),
    ("argv: ['audit', 'postgresql://u:pw@h/db', 's3://bucket/logs']",
     "argv: ['audit', 'postgresql://u:***@h/db', 's3://bucket/logs']"),
])
def test_redaction_hides_every_password_a_uri_holds(given: str, shown: str) -> None:
    assert redact_text(given) == shown
    if given.startswith("postgres"):
        assert redacted(given) == shown


def test_a_query_password_holding_an_at_sign_is_a_secret_whole() -> None:
    # found by the property below: the `@` of `password=:0@` was read as the user info's end
    uri = "postgresql://user@host/db?sslmode=disable&password=:0@&connect_timeout=3"
    assert secrets_of(uri)[0] == ":0@"  # and the user info read with the `@`: "0" (masks more)
    assert redacted(uri) == "postgresql://user@host/db?sslmode=disable&password=***&connect_timeout=3"


@pytest.mark.parametrize(("given", "stored"), [
    ("postgresql://u:p@ss/w@h/db", "postgresql://u:***@h/db"),
    ("s3://bucket/night:1@2/logs.jsonl", "s3://bucket/night:1@2/logs.jsonl"),  # a path, no password
    ("https://u:pw@h/logs", "https://u:***@h/logs"),
    ("--out=audit:2025-06-02", "--out=audit:2025-06-02"),
])
def test_a_stored_name_masks_passwords_and_keeps_object_store_paths(given: str, stored: str) -> None:
    assert shown(given) == stored


@pytest.mark.parametrize(("stored", "connect"), [
    ("postgresql://u:***@h:5432/db", "postgresql://u@h:5432/db"),
    ("postgresql://u@h/db?password=***&sslmode=disable", "postgresql://u@h/db?sslmode=disable"),
    ("postgresql://u@h/db?sslmode=disable&PASSWORD=***", "postgresql://u@h/db?sslmode=disable"),
    ("postgres://u:***@h/db?password=***", "postgres://u@h/db"),
    ("postgresql://u@h/db?sslpassword=***&password=***&connect_timeout=3",
     "postgresql://u@h/db?connect_timeout=3"),
])
def test_a_stored_name_connects_with_every_masked_password_left_out(stored: str, connect: str) -> None:
    assert unmasked(stored) == connect
    assert redacted(connect) == connect  # nothing left to mask: libpq finds the password


@pytest.mark.parametrize("given", [
    "postgresql://u:pw@h/db", "postgresql://u@h/db?password=pw", "postgresql://u:***@h/db?password=pw",
    "postgresql://h/db",
])
def test_a_uri_with_a_real_password_or_none_is_connected_to_as_given(given: str) -> None:
    assert unmasked(given) is None


def test_a_query_password_is_found_again_through_pgpassword(
        server: Server, trimmed: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A password given as `password=` is stored masked (`?password=***`) and read back, by
    `show`, with the one libpq finds itself: before, the literal `***` was sent as the password."""
    uri = f"postgresql://postgres@127.0.0.1:{server.port}/trimmed?password={PASSWORD}&sslmode=disable"
    stored = f"postgresql://postgres@127.0.0.1:{server.port}/trimmed?password=***&sslmode=disable"
    out = tmp_path / "out"
    run_cli("audit", "--source", "langgraph", uri, "--contract", CONTRACT, "--out", out, "-j", "1",
            "--run-id", "night", expect=None)
    assert read_table(out, "pairs").collect()["source"].unique().to_list() == [stored]
    monkeypatch.delenv("PGPASSWORD", raising=False)
    refused = run_cli("show", out, "t:1", expect=2)
    assert "set PGPASSWORD" in refused.stderr and PASSWORD not in refused.stderr
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    found = run_cli("show", out, "t:1", expect=None)
    assert found.exit_code in (0, 1) and "q2" in found.stdout, found.stderr
    _assert_secret_nowhere(out, refused.stdout + refused.stderr, found.stdout + found.stderr)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1),
       st.sampled_from(["postgresql", "postgres"]))
def test_no_password_survives_redaction(password: str, scheme: str) -> None:
    uri = f"{scheme}://user:{password}@host:5432/db"
    assert redacted(uri) == f"{scheme}://user:***@host:5432/db"
    assert secrets_of(uri)[0] == password
    query = password.replace("&", "").replace("#", "")  # a query parameter's value ends at either
    if query:
        uri = f"{scheme}://user@host/db?sslmode=disable&password={query}&connect_timeout=3"
        assert redacted(uri) == f"{scheme}://user@host/db?sslmode=disable&password=***&connect_timeout=3"
        assert secrets_of(uri)[0] == query  # and, when it holds `@` and `:`, what they suggest


def test_a_crash_log_names_the_uri_without_its_password(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from frayproof_audit.cli.entry import write_crash_log

    uri = f"postgresql://postgres:{PASSWORD}@127.0.0.1:5432/db"
    monkeypatch.setattr("sys.argv", ["frayproof-audit", "audit", "--source", "langgraph", uri])
    try:
        raise RuntimeError(f"while reading {uri}")
    except RuntimeError as exc:
        log = write_crash_log(tmp_path / "crash.log", exc)
    assert log is not None
    text = log.read_text()
    assert PASSWORD not in text and text.count("postgresql://postgres:***@127.0.0.1:5432/db") == 2


def test_without_the_postgres_packages_the_error_says_what_to_install(
        server: Server, trimmed: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "langgraph.checkpoint.postgres", None)
    with pytest.raises(InputError, match=r"langgraph.checkpoint.postgres is not installed.*"
                                         r"pip install 'frayproof-audit\[postgres\]'"):
        list(read_source("langgraph", trimmed))
    result = run_cli("pairs", "--source", "langgraph", trimmed, expect=2)
    assert "pip install 'frayproof-audit[postgres]'" in result.stderr and PASSWORD not in result.stderr
