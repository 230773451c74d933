"""Fixtures shared by the engine, API and CLI tests, and the one gate for the reference peer."""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.peer import PEER_ENV, peer_python

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
