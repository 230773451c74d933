"""Run code under the optional frayproof 0.1.0 environment ("the peer") and read its result.

frayproof needs Python 3.12 and is not a dependency, so benchmarks measure it in a subprocess
with that environment's interpreter: `make peer` creates `.peer/`, or `FRAYPROOF_PEER_PYTHON`
names another interpreter. Every benchmark prints its peer column through `run_peer`, and skips
it cleanly (with the reason) when `peer_python()` finds nothing or the run fails.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PEER_ENV = "FRAYPROOF_PEER_PYTHON"
"""Environment variable naming a Python 3.12 interpreter that has `frayproof==0.1.0`."""

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PEER = REPO_ROOT / ".peer" / "bin" / "python"


class PeerError(RuntimeError):
    """The peer interpreter is missing, crashed, timed out or printed no JSON result."""


def peer_python() -> str | None:
    """The peer interpreter: `$FRAYPROOF_PEER_PYTHON`, else `.peer/bin/python`, else None.

    Only existence is checked here (cheap); whether frayproof imports shows in `run_peer`.
    """
    configured = os.environ.get(PEER_ENV)
    candidate = Path(configured) if configured else DEFAULT_PEER
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    return None


def run_peer(
    script: str | Path,
    args: Sequence[str] = (),
    *,
    input_data: bytes | None = None,
    timeout: float | None = 1800,
    python: str | None = None,
) -> Any:
    """Run `script` (Python source text, or a `Path` to a file) under the peer interpreter.

    `args` become `sys.argv[1:]`, `input_data` is fed to stdin. The script reports by printing
    one JSON value as its last stdout line; that value is returned. The interpreter runs
    isolated (`-I`: no user site, no current directory on `sys.path`, no PYTHON* variables),
    so our own packages can never shadow frayproof's.
    """
    interpreter = python or peer_python()
    if interpreter is None:
        raise PeerError(f"no peer environment (run `make peer`, or set {PEER_ENV})")
    command = [interpreter, "-I"]
    command += [str(script)] if isinstance(script, Path) else ["-c", script]
    command += list(args)
    try:
        completed = subprocess.run(
            command, input=input_data, capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise PeerError(f"the peer run timed out after {timeout} s") from None
    except OSError as exc:
        raise PeerError(f"cannot start the peer interpreter {interpreter}: {exc}") from None
    if completed.returncode != 0:
        tail = completed.stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
        raise PeerError(f"the peer run failed (exit {completed.returncode}): " + " | ".join(tail))
    lines = completed.stdout.decode("utf-8", "replace").strip().splitlines()
    if not lines:
        raise PeerError("the peer run printed no result")
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError:
        raise PeerError(f"the peer run's last line is not JSON: {lines[-1][:200]!r}") from None
