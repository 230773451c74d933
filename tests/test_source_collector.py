"""The cyclic garbage collector is paused while a `cycle_free` source derives a file
(`sources.derive`, `frayproof_audit/collector.py`): safe only because deriving makes no
reference cycles, held here for every file of those sources in the tests and the examples, and
for the files `bench_sources` measures (where the collector's full passes over every kept entry
made the cost per MB grow with the file). The collector's state is restored whatever happens."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from benchmarks import bench_sources
from frayproof_audit import sources
from frayproof_audit.sources import SOURCES, derive, detect_file, file_siblings, read_source
from tests.helpers import EXAMPLES, cycles_left

REPO = Path(__file__).resolve().parent.parent
CYCLE_FREE = sorted(name for name, source in SOURCES.items() if source.cycle_free)
FILES = sorted(path for folder in (REPO / "tests" / "data" / "agent_logs", EXAMPLES / "agent-logs")
               for path in folder.rglob("*") if path.is_file())


def _derived(source: str, path: Path) -> Callable[[], object]:
    return lambda: derive(source, str(path), read_source(source, path), file_siblings(path))


def test_the_session_sources_are_the_cycle_free_ones() -> None:
    assert CYCLE_FREE == ["claude-code", "codex", "gemini-cli"]


def test_every_fixture_of_a_cycle_free_source_derives_without_a_cycle() -> None:
    found = [(source, path) for path in FILES if (source := detect_file(path)) in CYCLE_FREE]
    assert sorted({source for source, _ in found}) == CYCLE_FREE  # each had files to prove it on
    # one full collection for them all (each costs a tenth of a second in a test worker's heap);
    # only when it finds a cycle is each file derived alone, to name it
    if cycles_left(lambda: [_derived(source, path)() for source, path in found]):
        assert [path for source, path in found if cycles_left(_derived(source, path))] == []


@pytest.mark.parametrize("source", sorted(bench_sources.WRITERS))
def test_the_benchmarks_files_derive_without_a_cycle(source: str, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    bench_sources.WRITERS[source](path, 0.5, 3, 0)
    rows: list[int] = []
    assert cycles_left(lambda: rows.append(bench_sources.derive_all(source, path))) == 0
    assert rows == [3]


def _watching(lines: Iterator[sources.Line], states: list[bool]) -> Iterator[sources.Line]:
    for line in lines:
        states.append(gc.isenabled())
        yield line


@pytest.mark.parametrize("paused_before", [False, True], ids=["enabled", "paused-by-the-caller"])
def test_derive_pauses_the_collector_and_restores_it(paused_before: bool) -> None:
    path = next(path for path in FILES if detect_file(path) == "claude-code")
    states: list[bool] = []
    if paused_before:
        gc.disable()
    try:
        derive("claude-code", str(path), _watching(read_source("claude-code", path), states))
        assert gc.isenabled() is not paused_before
    finally:
        gc.enable()
    assert states and not any(states)


def test_a_source_that_raises_leaves_the_collector_enabled() -> None:
    def broken() -> Iterator[sources.Line]:
        yield b'{"type": "user"}\n'
        raise OSError("the disk went away")

    with pytest.raises(OSError, match="went away"):
        derive("claude-code", "broken.jsonl", broken())
    assert gc.isenabled()


def test_a_framework_source_runs_with_the_collector_as_it_was() -> None:
    states: list[bool] = []
    derive("otel", "trace.jsonl", _watching(iter([b'{"resourceSpans": []}\n']), states))
    assert states == [True]
