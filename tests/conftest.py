"""Fixtures shared by the engine, API and CLI tests, and the one gate for the reference peer."""

from __future__ import annotations

import functools
import gc
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.peer import PEER_ENV, peer_python

pytest_plugins = ("tests.cpu_account", "pytester")
"""The run ends with the CPU time it took and what that allows on this machine's cores."""

REQUIRE_PEER_ENV = "FRAYPROOF_AUDIT_REQUIRE_PEER"
"""Set to 1 (CI does, once `make peer` succeeded) to make a missing peer fail instead of skip,
so the differential tests can never stop running without anyone noticing."""


@functools.cache
def _peer_problem() -> tuple[str | None, str | None]:
    """(interpreter, None) when frayproof 0.1.0 imports there, else (None, why not)."""
    python = peer_python()
    if python is None:
        return None, f"no frayproof peer: run `make peer` or set {PEER_ENV}"
    probe = subprocess.run([python, "-I", "-c", "import frayproof; print(frayproof.__version__)"],
                           capture_output=True, text=True, timeout=120, check=False)
    if probe.returncode != 0 or probe.stdout.strip() != "0.1.0":
        return None, f"{python} has no frayproof 0.1.0 ({probe.stdout.strip() or probe.stderr[-200:]})"
    return python, None


@pytest.fixture(scope="session")
def peer_python_path() -> Path:
    """The frayproof 0.1.0 interpreter. Without one the test skips, or fails under
    FRAYPROOF_AUDIT_REQUIRE_PEER=1."""
    python, problem = _peer_problem()
    if python is not None:
        return Path(python)
    if os.environ.get(REQUIRE_PEER_ENV) == "1":
        pytest.fail(f"{problem}; {REQUIRE_PEER_ENV}=1 requires it", pytrace=False)
    pytest.skip(problem or "no frayproof peer")


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    """A local Ray instance of two CPUs for the Ray tests of a module: `ray.init` is seconds of
    waiting on Ray's own processes, paid once instead of per test. It is started and shut down
    through an executor, as `--backend ray --scheduler local` does; the tests' executors find it
    running and leave it so (`Executor._start_ray`)."""
    ray = pytest.importorskip("ray")
    from frayproof_audit.corpus.run.executor import Executor

    owner: Executor[None, None, None] = Executor("ray", 2, "local")
    assert owner.jobs == 2 and ray.is_initialized()  # started with n_jobs CPUs
    try:
        yield
    finally:
        owner.close()
        assert not ray.is_initialized()  # the executor that started Ray shuts it down


@pytest.fixture
def write_json(tmp_path: Path) -> Callable[..., Path]:
    """Write a value as a JSON file (or raw bytes/text verbatim) and return its path."""
    counter = iter(range(10_000))

    def write(value: Any, name: str | None = None) -> Path:
        path = tmp_path / (name or f"snapshot_{next(counter)}.json")
        if isinstance(value, bytes):
            path.write_bytes(value)
        elif isinstance(value, str):
            path.write_text(value, encoding="utf-8")
        else:
            path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        return path

    return write


@pytest.fixture
def write_contract(tmp_path: Path) -> Callable[..., Path]:
    """Write contract YAML text (or bytes) to a file and return its path."""
    counter = iter(range(10_000))

    def write(text: str | bytes, name: str | None = None) -> Path:
        path = tmp_path / (name or f"contract_{next(counter)}.yaml")
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return write


SLOWEST_FIRST = (
    "test_scale.py", "test_worker_loss.py", "test_hardening_run.py", "test_doc_code.py",
    "test_dataset_damage.py", "test_hardening_inputs.py", "test_examples.py",
    "test_nightly_history.py", "test_suggest_example.py", "test_mutation_linear.py",
    "test_interrupt_workers.py", "test_incremental.py", "test_corpus_crash.py", "test_properties.py",
    "test_capture_writer.py", "test_toolargs_fastpath.py", "test_equivalence.py", "test_mutation.py",
    "test_benchmarks_smoke.py", "test_ci_outputs.py", "test_import_graph.py",
    "test_schemas_are_data.py", "test_input_globs.py",
)
"""The test modules that take longest (clusters, object stores, real subprocesses), longest first,
from `--durations=0` of the whole suite. `make test` hands whole files to its two workers
(`--dist loadfile --no-loadscope-reorder`), the next file to whichever worker is free: starting
with the longest means the run never ends with one worker alone on a long file while the other
idles. Only the order changes; a module not listed runs after these, in collection order."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable within a module


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything collection made (imported packages, the test modules, 3,500 parametrized
    items: some 450,000 objects per worker) lives until the end: freeze it out of the garbage
    collector's full passes (`gc.freeze`, as CPython's docs advise for objects made at start-up
    and kept), which otherwise walk it about forty times per worker (measured 14 s of each
    worker's 250 s) and again at every `gc.collect()` a benchmark smoke test makes."""
    gc.collect()
    gc.freeze()
