"""`PairWriter`: the layout `audit` reads as it is, whole lines under concurrency and SIGKILL,
never an exception into the agent (full disk, read-only folder, bad values, failing redaction),
sampling, redaction, rotation, gzip, fsspec targets and the nightly `--incremental` loop.

Everything written is read back by the real `audit` (the library, in this process)."""

from __future__ import annotations

import gzip
import json
import logging
import multiprocessing
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit import Snapshot, load_snapshot
from frayproof_audit.capture import CaptureError, PairWriter, redact_strings, sinks
from frayproof_audit.capture.records import sampled_in
from tests.capture_support import (
    can_mount,
    hand_log,
    input_errors,
    lines_of,
    run_audit,
    tmpfs,
    verdicts,
    write_contract,
)
from tests.helpers import REPO, assistant, call, result, session, system, user

NIGHT = "2025-06-02T10:00:00Z"


def good_pair(n: int = 0) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A compaction the test contract accepts: the oldest exchange summarized, the last one and
    the latest request kept."""
    before = [system("Never write to production."), user(f"old {n}"), assistant(f"old answer {n}"),
              user(f"read {n}"), call(f"c{n}"), result(f"c{n}"), assistant(f"answer {n}"),
              user(f"question {n}")]
    return before, [before[0], user(f"Summary: old {n}"), *before[3:]]


def bad_pair(n: int = 0) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    before, _ = good_pair(n)
    return before, before[1:]  # drops the system prompt


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


# --- one record, exactly as audit reads it ------------------------------------------------

def test_a_record_is_one_line_in_the_night_folder_and_audits(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    with PairWriter(root, host="agent-7") as writer:
        before, after = good_pair()
        pair_id = writer.record(before, after, compactor="summary-v2", session_id="s-1", logged_at=NIGHT,
                                tenant="acme")
    [path] = files_under(root)
    assert path.parent.name == "log_date=2025-06-02"
    assert re.fullmatch(rf"agent-7-{os.getpid()}-\d{{8}}T\d{{12}}Z\.jsonl", path.name), path.name
    [line] = path.read_bytes().splitlines()
    record = json.loads(line)
    assert list(record) == ["pair_id", "session_id", "compactor", "logged_at", "tenant", "before", "after"]
    assert record["pair_id"] == pair_id and record["logged_at"] == "2025-06-02T10:00:00.000000Z"
    assert (record["before"], record["after"]) == (before, after)
    summary = run_audit(str(root), write_contract(tmp_path), tmp_path / "out")
    assert (summary.pairs, summary.passed, summary.input_errors) == (1, 1, 0)
    assert list(verdicts(tmp_path / "out")) == [pair_id]


def test_default_pair_ids_are_unique_and_given_ones_kept(tmp_path: Path) -> None:
    with PairWriter(tmp_path / "a") as first, PairWriter(tmp_path / "b") as second:
        ids = [w.record(*good_pair(), compactor="c") for w in (first, second) for _ in range(50)]
        assert first.record(*good_pair(), compactor="c", pair_id=42) == 42
        assert first.record(*good_pair(), compactor="c", pair_id="mine") == "mine"
    assert len(set(ids)) == 100 and all(isinstance(i, str) for i in ids)


@pytest.mark.parametrize(("logged_at", "text"), [
    (datetime(2025, 6, 2, 23, 30, tzinfo=timezone(timedelta(hours=-2))), "2025-06-03T01:30:00.000000Z"),
    (datetime(2025, 6, 2, 10, 0, 0, 123456), "2025-06-02T10:00:00.123456Z"),
    (date(2025, 6, 2), "2025-06-02T00:00:00.000000Z"),
    ("2025-06-02t10:00:00+02:00", "2025-06-02T08:00:00.000000Z"),
    ("2025-06-02T10:00:00.5", "2025-06-02T10:00:00.500000Z"),
    (1748858400, "2025-06-02T10:00:00.000000Z"),
    (1748858400_250, "2025-06-02T10:00:00.250000Z"),
])
def test_logged_at_is_normalised_and_picks_the_night(tmp_path: Path, logged_at: Any, text: str) -> None:
    with PairWriter(tmp_path) as writer:
        writer.record(*good_pair(), compactor="c", logged_at=logged_at)
    [path] = files_under(tmp_path)
    assert json.loads(path.read_bytes())["logged_at"] == text
    assert path.parent.name == f"log_date={text[:10]}"


def test_the_default_time_is_now_utc(tmp_path: Path) -> None:
    start = datetime.now(UTC)
    with PairWriter(tmp_path) as writer:
        writer.record(*good_pair(), compactor="c")
    [path] = files_under(tmp_path)
    logged = datetime.fromisoformat(json.loads(path.read_bytes())["logged_at"])
    assert start <= logged <= datetime.now(UTC)


def test_host_names_never_make_hidden_files(tmp_path: Path) -> None:
    with PairWriter(tmp_path, host="._build box/1") as writer:
        writer.record(*good_pair(), compactor="c", logged_at=NIGHT)
    [path] = files_under(tmp_path)
    assert path.name.startswith(f"build-box-1-{os.getpid()}-")
    assert run_audit(str(tmp_path), write_contract(tmp_path.parent), tmp_path.parent / "out").pairs == 1


# --- values: wire formats, SDK objects, conversions ---------------------------------------

def test_formats_tools_and_neutral_snapshots(tmp_path: Path) -> None:
    anthropic = [{"role": "user", "content": [{"type": "text", "text": "Never write to production."}]}]
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    with PairWriter(tmp_path) as writer:
        writer.record(anthropic, anthropic, compactor="c", format="anthropic", tools=tools, logged_at=NIGHT)
        writer.record(load_snapshot(session()), Snapshot(()), compactor="c", logged_at=NIGHT)
        path = tmp_path.parent / "before.json"
        path.write_text(json.dumps(session()), encoding="utf-8")
        writer.record(path, str(path), compactor="c", logged_at=NIGHT)
    first, second, third = (json.loads(line) for line in lines_of(tmp_path))
    assert (first["format"], first["tools"]) == ("anthropic", tools)
    assert second["format"] == "openai" and second["before"] == session() and second["after"] == []
    assert third["before"] == third["after"] == session() and "format" not in third


def test_pydantic_items_are_dumped_as_their_sdk_dumps_them(tmp_path: Path) -> None:
    pytest.importorskip("openai")
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    text = ResponseOutputText(type="output_text", text="hi", annotations=[])
    message = ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed",
                                    content=[text])
    call_item = ResponseFunctionToolCall(type="function_call", call_id="call_1", name="read",
                                         arguments="{}")
    with PairWriter(tmp_path) as writer:
        writer.record([message, call_item], [message], compactor="c", format="openai-responses")
    [record] = (json.loads(line) for line in lines_of(tmp_path))
    assert record["before"] == [message.model_dump(mode="json", exclude_unset=True),
                                call_item.model_dump(mode="json", exclude_unset=True)]


def test_values_orjson_cannot_write_are_written_exactly(tmp_path: Path) -> None:
    huge = 10**30
    before = [user("a"), {"role": "user", "content": "b", "count": huge}]
    with PairWriter(tmp_path) as writer:
        assert writer.record(before, before, compactor="c") is not None
    [line] = lines_of(tmp_path)
    assert json.loads(line)["before"][1]["count"] == huge


def test_the_snapshot_is_taken_when_record_is_called(tmp_path: Path) -> None:
    before, after = good_pair()
    with PairWriter(tmp_path) as writer:
        writer.record(before, after, compactor="c")
        before[0]["content"] = "changed afterwards"
    [line] = lines_of(tmp_path)
    assert json.loads(line)["before"][0]["content"] == "Never write to production."


# --- never raises into the agent ----------------------------------------------------------

@pytest.mark.parametrize(("arguments", "reason"), [
    ({"before": [{"role": "user", "content": object()}]}, "not JSON serializable"),
    ({"compactor": 7}, "compactor must be a string"),
    ({"logged_at": "yesterday"}, "not an RFC 3339 time"),
    ({"logged_at": float("nan")}, "finite"),
    ({"logged_at": 10**20}, "outside the years"),
    ({"format": "openai-chat"}, "format must be one of"),
    ({"session_id": 1.5}, "session_id must be a string or an integer"),
    ({"pair_id": ""}, "pair_id must not be empty"),
    ({"tools": {"name": "read"}}, "tools must be a list"),
    ({"before": REPO / "no-such-file.json"}, "cannot read the snapshot"),
])
def test_a_bad_value_is_counted_never_raised(tmp_path: Path, arguments: dict[str, Any], reason: str,
                                              caplog: pytest.LogCaptureFixture) -> None:
    before, after = good_pair()
    call_arguments: dict[str, Any] = {"before": before, "after": after, "compactor": "c", **arguments}
    with PairWriter(tmp_path) as writer, caplog.at_level(logging.ERROR, "frayproof_audit.capture"):
        assert writer.record(**call_arguments) is None
        assert writer.record(before, after, compactor="c") is not None
    stats = writer.stats()
    assert (stats.recorded, stats.written, stats.errors) == (2, 1, 1)
    assert reason in (stats.last_error or "")
    assert len(lines_of(tmp_path)) == 1
    [logged] = caplog.records
    assert "1 pair(s) not written" in logged.getMessage() and reason in logged.getMessage()
    strict = PairWriter(tmp_path / "strict", strict=True)
    with pytest.raises(CaptureError, match=re.escape(reason)) as raised:
        strict.record(**call_arguments)
    assert raised.value.__cause__ is not None and strict.errors == 1


def test_failures_are_logged_once_a_minute_and_recovery_once(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    with PairWriter(tmp_path) as writer, caplog.at_level(logging.WARNING, "frayproof_audit.capture"):
        for _ in range(5):
            writer.record([object()], [], compactor="c")
        writer.record(*good_pair(), compactor="c")
    assert [r.levelname for r in caplog.records] == ["ERROR", "WARNING"]
    assert "again" in caplog.records[1].getMessage() and writer.errors == 5


def test_record_after_close_is_an_error(tmp_path: Path) -> None:
    writer = PairWriter(tmp_path)
    writer.close()
    writer.close()
    assert writer.record(*good_pair(), compactor="c") is None
    assert writer.errors == 1 and "closed" in str(writer.last_error)
    assert files_under(tmp_path) == []


def test_constructor_checks_its_options() -> None:
    with pytest.raises(ValueError, match="sample"):
        PairWriter("x", sample=1.5)
    with pytest.raises(ValueError, match="compression"):
        PairWriter("x", compression="zip")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_file_bytes"):
        PairWriter("x", max_file_bytes=0)
    with pytest.raises(TypeError, match="redact"):
        PairWriter("x", redact="secret")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="file:// URI"):
        PairWriter("file://elsewhere/logs")


# --- sampling and redaction ---------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([f"s{n}" for n in range(12)]), min_size=1, max_size=40),
       st.sampled_from([0.0, 0.25, 0.5, 1.0]))
def test_sampling_keeps_or_drops_a_session_whole(tmp_path_factory: pytest.TempPathFactory,
                                                 sessions: list[str], rate: float) -> None:
    root = tmp_path_factory.mktemp("sampled")
    with PairWriter(root, sample=rate) as writer:
        for n, session_id in enumerate(sessions):
            writer.record(*good_pair(n), compactor="c", session_id=session_id)
    kept = [json.loads(line)["session_id"] for line in lines_of(root)]
    assert kept == [s for s in sessions if sampled_in(s, rate)]
    stats = writer.stats()
    assert stats.recorded == stats.written + stats.sampled_out == len(sessions)


def test_sampling_is_the_same_in_every_process() -> None:
    keys = [f"session-{n}" for n in range(200)]
    here = [sampled_in(key, 0.1) for key in keys]
    code = ("import json, sys; from frayproof_audit.capture.records import sampled_in; "
            f"print(json.dumps([sampled_in(k, 0.1) for k in {keys!r}]))")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": "123", "PYTHONPATH": str(REPO)})
    assert json.loads(there.stdout) == here
    assert 5 <= sum(here) <= 40  # about a tenth


def test_redaction_runs_before_anything_is_written(tmp_path: Path) -> None:
    def redact(record: dict[str, Any]) -> dict[str, Any] | None:
        if record["session_id"] == "drop-me":
            return None
        record["tenant"] = "redacted"
        return redact_strings(lambda text: text.replace("sk-live-123", "[KEY]"))(record)

    before = [system("Never write to production."), user("my key is sk-live-123")]
    with PairWriter(tmp_path, redact=redact) as writer:
        assert writer.record(before, before, compactor="c", session_id="keep", tenant="acme") is not None
        assert writer.record(before, before, compactor="c", session_id="drop-me") is None
    data = b"".join(p.read_bytes() for p in files_under(tmp_path))
    assert b"sk-live-123" not in data and b"acme" not in data
    [record] = (json.loads(line) for line in data.splitlines())
    assert record["before"][1]["content"] == "my key is [KEY]" and record["tenant"] == "redacted"
    assert before[1]["content"] == "my key is sk-live-123"  # the agent's own list is untouched
    stats = writer.stats()
    assert (stats.written, stats.redacted_out, stats.errors) == (1, 1, 0)


def test_a_failing_redaction_drops_the_pair(tmp_path: Path) -> None:
    def broken(record: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("redaction service down")

    with PairWriter(tmp_path, redact=broken) as writer:
        assert writer.record(*good_pair(), compactor="c") is None
        assert writer.record(*good_pair(), compactor="c") is None
    assert files_under(tmp_path) == [] and writer.errors == 2
    with PairWriter(tmp_path, redact=lambda record: ["not", "a", "record"]) as writer:  # type: ignore[arg-type,return-value]
        assert writer.record(*good_pair(), compactor="c") is None
    assert "redact must return a dict" in str(writer.last_error)


# --- rotation, gzip -----------------------------------------------------------------------

def test_rotation_by_size_and_by_night(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    with PairWriter(root, max_file_bytes=2000) as writer:
        for n in range(20):
            writer.record(*good_pair(n), compactor="c", logged_at=NIGHT)
        for n in range(3):
            writer.record(*good_pair(n), compactor="c", logged_at="2025-06-03T00:00:01Z")
        writer.record(*good_pair(99), compactor="c", logged_at="2025-06-02T23:59:59Z")  # logged late
    nights = {p.parent.name for p in files_under(root)}
    assert nights == {"log_date=2025-06-02", "log_date=2025-06-03"}
    longest = max(len(line) + 1 for line in lines_of(root))
    assert len(files_under(root)) > 4
    assert all(p.stat().st_size < 2000 + longest for p in files_under(root))
    assert writer.stats().files == tuple(str(p) for p in sorted(files_under(root), key=lambda p: p.name))
    assert len(lines_of(root)) == 24
    out = tmp_path / "out"
    summary = run_audit(str(root), write_contract(tmp_path), out)
    assert (summary.pairs, summary.input_errors) == (24, 0)
    import polars as pl

    from frayproof_audit.corpus import read_table

    dates = read_table(out, "pairs").group_by("log_date").len().sort("log_date").collect()
    assert dates["len"].to_list() == [21, 3]
    assert dates["log_date"].to_list() == [date(2025, 6, 2), date(2025, 6, 3)]
    assert read_table(out, "pairs").filter(pl.col("logged_at_missing")).collect().height == 0


def test_gzip_files_are_one_member_per_record_and_audit(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    with PairWriter(root, compression="gzip") as writer:
        for n in range(5):
            writer.record(*(bad_pair(n) if n == 3 else good_pair(n)), compactor="c", logged_at=NIGHT)
    [path] = files_under(root)
    assert path.name.endswith(".jsonl.gz")
    assert len(gzip.decompress(path.read_bytes()).splitlines()) == 5
    contract = write_contract(tmp_path)
    summary = run_audit(str(root), contract, tmp_path / "out")
    assert (summary.pairs, summary.passed, summary.failed) == (5, 4, 1)
    # A writer killed inside its last member costs that record only.
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 20])
    summary = run_audit(str(root), contract, tmp_path / "torn")
    assert (summary.pairs, summary.input_errors) == (5, 1)
    assert "cannot read the stream" in input_errors(tmp_path / "torn")[0]


# --- many writers at once -----------------------------------------------------------------

PROCESSES, THREADS, PER_THREAD = 8, 4, 625


def _write_from_threads(writer: PairWriter, process: int) -> None:
    def work(thread: int) -> None:
        for n in range(PER_THREAD):
            writer.record(*good_pair(n), compactor="c", session_id=f"p{process}-t{thread}",
                          pair_id=f"p{process}-t{thread}-{n}", logged_at=NIGHT)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    writer.close()


def test_eight_processes_of_four_threads_write_only_whole_lines(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    writer = PairWriter(root)  # made before the fork: each child must get files of its own
    writer.record(*good_pair(), compactor="c", pair_id="parent-0", logged_at=NIGHT)
    context = multiprocessing.get_context("fork")
    children = [context.Process(target=_write_from_threads, args=(writer, p)) for p in range(PROCESSES)]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=120)
    assert [child.exitcode for child in children] == [0] * PROCESSES
    writer.record(*good_pair(), compactor="c", pair_id="parent-1", logged_at=NIGHT)
    writer.close()
    files = files_under(root)
    pids = {int(p.name.split("-")[-2]) for p in files}
    assert pids == {os.getpid(), *(child.pid for child in children)}
    lines = lines_of(root)
    ids = [orjson.loads(line)["pair_id"] for line in lines]  # every line parses whole
    expected = PROCESSES * THREADS * PER_THREAD + 2
    assert len(ids) == len(set(ids)) == expected
    summary = run_audit(str(root), write_contract(tmp_path), tmp_path / "out")
    assert (summary.pairs, summary.passed, summary.input_errors) == (expected, expected, 0)


async def _async_tasks(writer: PairWriter) -> None:
    import asyncio

    async def task(n: int) -> None:
        for k in range(50):
            writer.record(*good_pair(k), compactor="c", session_id=f"task-{n}")
            await asyncio.sleep(0)

    await asyncio.gather(*(task(n) for n in range(20)))


def test_async_tasks_share_a_writer(tmp_path: Path) -> None:
    import asyncio

    with PairWriter(tmp_path) as writer:
        asyncio.run(_async_tasks(writer))
    assert len({orjson.loads(line)["pair_id"] for line in lines_of(tmp_path)}) == 1000


KILLED_WRITER = """
import sys
from frayproof_audit.capture import PairWriter
writer = PairWriter(sys.argv[1], host="killed", max_file_bytes=2**40)
content = "x" * int(sys.argv[2])
n = 0
while True:
    before = [{"role": "system", "content": "Never write to production."},
              {"role": "user", "content": content}]
    writer.record(before, before, compactor="c", pair_id=f"p{n:08d}", logged_at="2025-06-02T10:00:00Z")
    n += 1
"""


def test_a_writer_killed_mid_line_costs_that_line_only(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    content = 8 * 1024 * 1024
    for attempt in range(8):
        child = subprocess.Popen(
            [sys.executable, "-c", KILLED_WRITER, str(root / str(attempt)), str(content)],
            env={**os.environ, "PYTHONPATH": str(REPO)})
        line_length = None
        deadline = time.monotonic() + 60
        try:
            while time.monotonic() < deadline:
                files = files_under(root / str(attempt)) if (root / str(attempt)).exists() else []
                if not files:
                    continue
                size = files[0].stat().st_size
                if line_length is None and size:
                    with files[0].open("rb") as handle:
                        first = handle.readline()
                    if first.endswith(b"\n"):
                        line_length = len(first)
                if line_length and size > 2 * line_length and size % line_length:
                    os.kill(child.pid, signal.SIGKILL)  # it is inside a write() right now
                    break
        finally:
            child.kill()
            child.wait()
        [path] = files_under(root / str(attempt))
        if not path.read_bytes().endswith(b"\n"):
            break
    else:
        pytest.fail("the writer was never caught inside a write")
    whole = path.read_bytes().count(b"\n")
    summary = run_audit(str(root / str(attempt)), write_contract(tmp_path), tmp_path / "out",
                        max_record_bytes=64 * 1024 * 1024)
    assert (summary.pairs, summary.passed, summary.input_errors) == (whole + 1, whole, 1)
    [reason] = input_errors(tmp_path / "out")
    assert f"line {whole + 1}:" in reason


# --- a full, a read-only, a vanished target -----------------------------------------------

def _fill(writer: PairWriter, size: int, count: int) -> list[bool]:
    before = [system("Never write to production."), user("x" * size)]
    return [writer.record(before, before, compactor="c", logged_at=NIGHT) is not None for _ in range(count)]


@pytest.fixture
def prompt_nlink_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer looks whether its file still exists once a second; at once here."""
    monkeypatch.setattr(sinks, "_NLINK_CHECK_SECONDS", 0.0)


@pytest.mark.usefixtures("prompt_nlink_checks")
@pytest.mark.parametrize("compression", [None, "gzip"])
def test_a_full_disk_never_raises_and_leaves_only_whole_lines(tmp_path: Path, compression: Any) -> None:
    if not can_mount():
        pytest.skip("mounting a tmpfs needs root")
    with tmpfs(tmp_path / "small", "5m") as mount:
        root = mount / "logs"
        writer = PairWriter(root, compression=compression)
        random_text = os.urandom(150_000).hex()  # incompressible: gzip fills the disk too
        before = [system("Never write to production."), user(random_text)]
        outcomes = [writer.record(before, before, compactor="c", logged_at=NIGHT) is not None
                    for _ in range(30)]
        stats = writer.stats()
        assert True in outcomes and False in outcomes
        assert stats.written == outcomes.count(True) and stats.errors == outcomes.count(False)
        assert "No space left" in (stats.last_error or "")
        [path] = files_under(root)
        if compression is None:
            assert path.read_bytes().count(b"\n") == stats.written and path.read_bytes().endswith(b"\n")
        else:
            assert len(gzip.decompress(path.read_bytes()).splitlines()) == stats.written
        written_before = stats.written
        assert writer.record(before, before, compactor="c", logged_at=NIGHT) is None  # still full
        path.unlink()  # room again: writing resumes (into a new file: the old one is gone)
        assert writer.record(before, before, compactor="c", logged_at=NIGHT) is not None
        writer.close()
        summary = run_audit(str(root), write_contract(tmp_path), tmp_path / "out")
        assert (summary.pairs, summary.input_errors) == (1, 0)
        assert written_before > 0


FSIZE_WRITER = """
import json, resource, sys
from frayproof_audit.capture import PairWriter
resource.setrlimit(resource.RLIMIT_FSIZE, (2_000_000, 2_000_000))
writer = PairWriter(sys.argv[1])
before = [{"role": "system", "content": "Never write to production."},
          {"role": "user", "content": "x" * 150_000}]
done = [writer.record(before, before, compactor="c", logged_at="2025-06-02T10:00:00Z") is not None
        for _ in range(30)]
stats = writer.stats()
print(json.dumps({"ok": done.count(True), "failed": done.count(False), "written": stats.written,
                  "errors": stats.errors, "last": stats.last_error, "limit": 2_000_000}))
"""


def test_a_file_size_limit_never_raises_and_leaves_only_whole_lines(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    done = subprocess.run([sys.executable, "-c", FSIZE_WRITER, str(root)], capture_output=True, text=True,
                          timeout=60, check=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    outcome = json.loads(done.stdout)
    [path] = files_under(root)
    data = path.read_bytes()
    fits = outcome["limit"] // len(data.splitlines(keepends=True)[0])  # whole lines under the limit
    assert outcome["ok"] == outcome["written"] == fits and outcome["failed"] == outcome["errors"] == 30 - fits
    assert "File too large" in outcome["last"]
    assert data.endswith(b"\n") and data.count(b"\n") == fits
    summary = run_audit(str(root), write_contract(tmp_path), tmp_path / "out")
    assert (summary.pairs, summary.input_errors) == (fits, 0)


def test_a_read_only_target_never_raises(tmp_path: Path) -> None:
    if can_mount():
        with tmpfs(tmp_path / "ro", "1m", read_only=True) as mount:
            writer = PairWriter(mount / "logs")
            assert writer.record(*good_pair(), compactor="c") is None
            assert writer.record(*good_pair(), compactor="c") is None
            assert writer.errors == 2 and "Read-only file system" in str(writer.last_error)
            with pytest.raises(CaptureError, match="Read-only"):
                PairWriter(mount / "logs", strict=True).record(*good_pair(), compactor="c")
        return
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    writer = PairWriter(folder / "logs")
    assert writer.record(*good_pair(), compactor="c") is None
    assert writer.errors == 1 and isinstance(writer.last_error, PermissionError)


@pytest.mark.usefixtures("prompt_nlink_checks")
def test_a_file_deleted_or_rotated_away_under_the_writer_is_replaced(tmp_path: Path) -> None:
    with PairWriter(tmp_path / "logs") as writer:
        writer.record(*good_pair(), compactor="c", logged_at=NIGHT)
        [path] = files_under(tmp_path / "logs")
        path.unlink()  # log cleanup
        writer.record(*good_pair(1), compactor="c", logged_at=NIGHT)
        [second] = files_under(tmp_path / "logs")
        second.rename(tmp_path / "rotated.jsonl")  # a rotation by rename
        writer.record(*good_pair(2), compactor="c", logged_at=NIGHT)
    [third] = files_under(tmp_path / "logs")
    assert len({path, second, third}) == 3
    assert len((tmp_path / "rotated.jsonl").read_bytes().splitlines()) == 1
    assert len(third.read_bytes().splitlines()) == 1


# --- fsspec targets -----------------------------------------------------------------------

def test_memory_filesystem_uploads_whole_objects(tmp_path: Path) -> None:
    import fsspec

    fs = fsspec.filesystem("memory")
    root = "memory://capture-tests/logs"
    if fs.exists(root):
        fs.rm(root, recursive=True)
    writer = PairWriter(root, flush_interval=3600)
    for n in range(7):
        writer.record(*good_pair(n), compactor="c", logged_at=NIGHT)
    assert writer.stats().pending == 7 and not fs.exists(root)
    assert writer.flush() is True
    for n in range(3):
        writer.record(*bad_pair(n), compactor="c", logged_at="2025-06-03T01:00:00Z")
    writer.close()
    stats = writer.stats()
    assert (stats.written, stats.pending, stats.errors) == (10, 0, 0)
    objects = sorted(fs.find(root))
    assert [o.split("/")[-2] for o in objects] == ["log_date=2025-06-02", "log_date=2025-06-03"]
    summary = run_audit(root, write_contract(tmp_path), tmp_path / "out")
    assert (summary.pairs, summary.passed, summary.failed) == (10, 7, 3)
    fs.rm(root, recursive=True)


class _FlakyFS:
    """A filesystem whose uploads fail a given number of times: a store that comes back."""

    protocol = ("flaky",)

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.objects: dict[str, bytes] = {}

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        pass

    def pipe_file(self, path: str, data: bytes) -> None:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("store unreachable")
        self.objects[path] = data


def test_a_failed_upload_is_retried_into_the_same_object(monkeypatch: pytest.MonkeyPatch) -> None:
    import fsspec

    flaky = _FlakyFS(failures=2)
    monkeypatch.setattr(fsspec.core, "url_to_fs", lambda root, **options: (flaky, "bucket/logs"))
    writer = PairWriter("flaky://bucket/logs", flush_interval=3600)
    for n in range(4):
        writer.record(*good_pair(n), compactor="c", logged_at=NIGHT)
    assert writer.flush() is False and writer.flush() is False and writer.errors == 0
    assert writer.stats().pending == 4 and "store unreachable" in (writer.stats().last_error or "")
    writer.record(*good_pair(9), compactor="c", logged_at=NIGHT)
    assert writer.flush() is True
    writer.close()
    assert writer.stats().written == 5 and writer.errors == 0
    assert sum(len(data.splitlines()) for data in flaky.objects.values()) == 5
    assert len(flaky.objects) == 2  # the retried batch kept its name: no duplicate object


def test_an_unreachable_store_loses_only_what_it_must(monkeypatch: pytest.MonkeyPatch) -> None:
    import fsspec

    dead = _FlakyFS(failures=10**9)
    monkeypatch.setattr(fsspec.core, "url_to_fs", lambda root, **options: (dead, "bucket/logs"))
    line = len(orjson.dumps({"before": good_pair()[0]}))
    writer = PairWriter("dead://bucket/logs", flush_interval=3600, max_buffer_bytes=20 * line)
    for n in range(60):
        assert writer.record(*good_pair(n), compactor="c", logged_at=NIGHT) is not None
        writer.flush()
    assert 0 < writer.stats().pending < 60 and writer.errors == 60 - writer.stats().pending
    writer.close()
    assert writer.errors == 60 and writer.stats().pending == 0 and dead.objects == {}


@pytest.fixture(scope="module")
def s3_env() -> Iterator[dict[str, str]]:
    """An S3 API server (moto) on 127.0.0.1 with a bucket `capture`; the environment points
    clients at it, as credentials and endpoints come from the environment on a real host."""
    pytest.importorskip("s3fs")
    server_module = pytest.importorskip("moto.server")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    import s3fs

    from frayproof_audit.corpus.inputs import location

    s3fs.S3FileSystem.clear_instance_cache()
    location._filesystem.cache_clear()
    try:
        s3fs.S3FileSystem().mkdir("capture")
        yield env
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
        location._filesystem.cache_clear()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.stop()


S3_WRITER = """
import sys
from frayproof_audit.capture import PairWriter
writer = PairWriter(sys.argv[1], flush_interval=3600)
before = [{"role": "system", "content": "Never write to production."}, {"role": "user", "content": "hi"}]
for n in range(5):
    writer.record(before, before, compactor="c", logged_at="2025-06-02T10:00:00Z", pair_id=f"exit-{n}")
# no close(): the interpreter's exit uploads what is buffered
"""


def test_s3_through_moto(tmp_path: Path, s3_env: dict[str, str]) -> None:
    import s3fs

    root = "s3://capture/logs"
    with PairWriter(root, flush_interval=3600) as writer:
        for n in range(6):
            writer.record(*(bad_pair(n) if n % 3 == 0 else good_pair(n)), compactor="c", logged_at=NIGHT)
    assert writer.stats().written == 6 and writer.errors == 0
    subprocess.run([sys.executable, "-c", S3_WRITER, "s3://capture/exit"], check=True, timeout=60,
                   env={**os.environ, **s3_env, "PYTHONPATH": str(REPO)})
    from frayproof_audit.corpus.inputs import location

    s3fs.S3FileSystem.clear_instance_cache()
    location._filesystem.cache_clear()
    summary = run_audit([root, "s3://capture/exit"], write_contract(tmp_path), tmp_path / "out")
    assert (summary.pairs, summary.passed, summary.failed) == (11, 9, 2)
    dead = PairWriter("s3://no-such-bucket/logs", flush_interval=3600)
    assert dead.record(*good_pair(), compactor="c") is not None  # buffered
    assert dead.flush() is False
    dead.close()
    assert dead.errors == 1 and dead.stats().written == 0


# --- the nightly loop: agents write, audit --incremental reads the new lines --------------

def _night_records(night: str, count: int, start: int) -> list[dict[str, Any]]:
    records = []
    for n in range(start, start + count):
        before, after = bad_pair(n) if n % 4 == 1 else good_pair(n)
        records.append({"pair_id": f"{night}-{n}", "session_id": f"s{n % 3}", "compactor": "summary-v2",
                        "logged_at": f"{night}T0{n % 10}:00:00Z", "before": before, "after": after})
    return records


def test_nightly_incremental_audit_matches_hand_logged_pairs(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    root, hand = tmp_path / "logs", tmp_path / "hand"
    nights = {"2025-06-02": _night_records("2025-06-02", 9, 0),
              "2025-06-03": _night_records("2025-06-03", 7, 9)}

    def log(writer: PairWriter, records: list[dict[str, Any]]) -> None:
        for record in records:
            fields = {k: v for k, v in record.items() if k not in ("before", "after")}
            assert writer.record(record["before"], record["after"], **fields) == record["pair_id"]

    agent = PairWriter(root)
    log(agent, nights["2025-06-02"][:6])
    first = run_audit(str(root), contract, tmp_path / "out", incremental=True, run_id="night-1")
    log(agent, nights["2025-06-02"][6:])  # late lines of the first night: appended to its file
    log(agent, nights["2025-06-03"])
    agent.close()
    second = run_audit(str(root), contract, tmp_path / "out", incremental=True, run_id="night-2")
    assert (first.pairs, second.pairs) == (6, 10)
    assert second.skipped is not None and second.skipped.records == 6
    hand_log(hand / "night-1.jsonl", nights["2025-06-02"])
    hand_log(hand / "night-2.jsonl", nights["2025-06-03"])
    run_audit(str(hand), contract, tmp_path / "hand-out")
    ours, theirs = verdicts(tmp_path / "out"), verdicts(tmp_path / "hand-out")
    assert ours == theirs and len(ours) == 16
    assert {status for status, _ in ours.values()} == {"pass", "fail"}
    third = run_audit(str(root), contract, tmp_path / "out", incremental=True, run_id="night-3")
    assert third.pairs == 0 and third.exit_code == 0


def test_the_cli_reads_the_writers_folder(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    with PairWriter(root) as writer:
        for n in range(3):
            writer.record(*good_pair(n), compactor="c", logged_at=NIGHT)
    done = subprocess.run([sys.executable, "-m", "frayproof_audit", "audit", str(root), "--contract",
                           str(write_contract(tmp_path)), "--out", str(tmp_path / "out"), "--no-mutate",
                           "--jobs", "1", "--incremental", "--format", "json", "-q"],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["pairs"], summary["passed"], summary["input_errors"]) == (3, 3, 0)



def test_file_start_stamps_strictly_increase_within_a_process() -> None:
    stamps = [sinks.start_stamp() for _ in range(5000)]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert all(re.fullmatch(r"\d{8}T\d{12}Z", stamp) for stamp in stamps[:10])
