"""The click group every command runs in: the exit codes no result object can own.

A result object (`Report`, `MutationReport`, `RunSummary`) decides 0, 1 or 2 for what a command
found. What ends a command before it has a result is decided here, once for every command:

* an unexpected exception is a bug: exit 123 (as black does), one line on stderr, the traceback
  in a crash log (where the command asked for one, e.g. `OUT/_logs/crash-<run_id>.log` for
  `audit`, else the system temp folder), whose path the line names;
* a fault of the machine that reaches this far (disk full, I/O error, out of memory) is not a
  bug: one line, exit 2 (the command could not run);
* Ctrl-C exits 130 and SIGTERM 143, after the command has cleaned up: while a command runs,
  SIGTERM raises `Interrupted` (a `KeyboardInterrupt`), so both unwind the same way;
* a closed stdout (`... | head`) ends the command quietly with 141, as a shell reports SIGPIPE.
"""

from __future__ import annotations

import contextlib
import errno
import os
import platform
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click

from frayproof_audit import __version__
from frayproof_audit.database_uri import redact_text, shown
from frayproof_audit.report import (
    EXIT_INPUT_ERROR,
    EXIT_INTERNAL_ERROR,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
)

CRASH_LOG = "frayproof_audit.crash_log"
"""`ctx.meta` key: the `Path` a command wants its crash log written to."""
INTERRUPT_NOTE = "frayproof_audit.interrupt_note"
"""`ctx.meta` key: what the interrupted message adds (e.g. that no run was committed)."""
EXIT_BROKEN_PIPE = 141
"""stdout was closed by the reader (128 + SIGPIPE)."""
MACHINE_FAULTS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EMFILE,
                            errno.ENFILE, errno.ENOMEM})
"""OSError numbers that are the machine's fault, not the program's."""


class Interrupted(KeyboardInterrupt):
    """A signal (SIGTERM) asked the command to stop; unwinds like Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """While the command runs, SIGTERM raises `Interrupted` (once: a second one is ignored, so
    it cannot cut the clean-up short). Only the main thread can install signal handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, _frame: FrameType | None) -> None:
        signal.signal(signum, signal.SIG_IGN)
        raise Interrupted(signum)

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class CommandGroup(click.Group):
    """`click.Group` that turns what escapes a command into its documented exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _sigterm_interrupts():
                return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except KeyboardInterrupt as exc:
            signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
            name = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"
            note = ctx.meta.get(INTERRUPT_NOTE)
            _stderr(f"INTERRUPTED: stopped by {name}" + (f"; {note}" if note else ""))
            ctx.exit(EXIT_TERMINATED if signum == signal.SIGTERM else EXIT_INTERRUPTED)
        except BrokenPipeError:
            _silence_stdout()
            ctx.exit(EXIT_BROKEN_PIPE)
        except MemoryError:
            _stderr("ERROR: out of memory")
            ctx.exit(EXIT_INPUT_ERROR)
        except OSError as exc:
            if exc.errno not in MACHINE_FAULTS:
                _crash(ctx, exc)
            where = f": {exc.filename}" if exc.filename else ""
            _stderr(f"ERROR: {exc.strerror or exc}{where}")
            ctx.exit(EXIT_INPUT_ERROR)
        except Exception as exc:
            _crash(ctx, exc)


def _crash(ctx: click.Context, exc: Exception) -> NoReturn:
    log = write_crash_log(ctx.meta.get(CRASH_LOG), exc)
    message = " ".join(str(exc).split())[:300]
    head = f"INTERNAL ERROR: {type(exc).__name__}" + (f": {message}" if message else "")
    if log is None:
        _stderr(f"{head}\n{_traceback(exc)}")
    else:
        _stderr(f"{head} (a bug in frayproof-audit; the traceback is in {log})")
    ctx.exit(EXIT_INTERNAL_ERROR)


def write_crash_log(wanted: Path | None, exc: BaseException) -> Path | None:
    """Write the traceback and what ran to `wanted`, else to the temp folder; None if neither
    can be written (then the caller prints it)."""
    now = datetime.now(UTC)
    text = "\n".join([
        f"frayproof-audit {__version__} crashed at {now.isoformat()}",
        f"argv: {[shown(arg) for arg in sys.argv]!r}",
        f"cwd: {os.getcwd()}",
        f"python: {sys.version.split()[0]} on {platform.platform()}",
        "",
        _traceback(exc),
    ])
    text = redact_text(text)  # a database URI's password, wherever the traceback quotes it
    fallback = Path(tempfile.gettempdir()) / f"frayproof-audit-crash-{now:%Y%m%dT%H%M%SZ}-{os.getpid()}.log"
    for path in ([wanted] if wanted is not None else []) + [fallback]:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", errors="backslashreplace")
        except OSError:
            continue
        return path
    return None


def _traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)).rstrip("\n")


def _stderr(text: str) -> None:
    with contextlib.suppress(OSError):  # stderr gone too: the exit code is all that is left
        click.echo(redact_text(text), err=True)


def _silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush stays quiet."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
