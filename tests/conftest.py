"""Fixtures shared by the engine, API and CLI tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


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
