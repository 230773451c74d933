"""Compile the package before a benchmark starts processes that import it.

A process that finds no current bytecode for a module compiles it first, about 0.1 s of CPU
for the whole package. Where bytecode is never written on import (`PYTHONDONTWRITEBYTECODE`,
set on some machines; a fresh checkout), every audit subprocess and every worker would pay that
again and the fixed cost and speed-ups would measure the compiler. `compileall` writes the
bytecode whatever that setting says, once, outside any timed region.
"""

from __future__ import annotations

import compileall
from pathlib import Path

import frayproof_audit

PACKAGE = Path(frayproof_audit.__file__).resolve().parent


def ensure_compiled() -> bool:
    """Write current bytecode for every module of `frayproof_audit` (those already current are
    left alone). True when every module compiled."""
    return bool(compileall.compile_dir(PACKAGE, quiet=1))
