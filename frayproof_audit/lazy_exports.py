"""Package names imported on first use: the one `__getattr__` every lazy package uses.

A package whose entry points pull in Polars, pyarrow or joblib (`corpus`, `trends`,
`htmlreport`) names each export's module instead of importing it, so importing the package (or a
worker starting) costs nothing until an export is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports `exports[name]` when `name` is asked for."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
