"""One run at a time per run id on an object store: a lock object created only if absent.

Object stores have no `flock`, and two audits with the same `--run-id` into one dataset (a
retried nightly job while the first still runs) would delete each other's files: each starts
by clearing what an earlier run of that id left behind. So before it touches anything, a run
takes `OUT/_staging/<run_id>.lock` with a create-if-absent write (S3's `If-None-Match: *`,
which fsspec spells mode `xb`): of two runs, exactly one creates it. The other reads who holds
it and stops with an error naming that run, unless the holder is dead:

* on this host, its process is gone (the pid and, on Linux, the process's start time, so a
  reused pid is not taken for it), which is how a run killed a moment ago is replaced at once;
* on any host, its heartbeat (`OUT/_staging/<run_id>.<token>/_alive`, written every
  `HEARTBEAT_S`) is older than `STALE_S` by the store's own clock (the time of the newcomer's
  heartbeat), so clocks of different machines never matter.

A dead holder's lock is deleted and taken over. The holder checks the lock is still its own
right before it commits (`verify`), so a run whose lock was taken over (it stalled past
`STALE_S`) stops instead of committing; and every run releases its lock when it ends.

A store that cannot create-if-absent (fsspec raises for mode `xb`) runs without the lock, as
before: then two runs with the same id must not overlap.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from frayproof_audit.corpus.store.layout import StoreError

HEARTBEAT_S = 30.0
"""How often the holder rewrites its heartbeat."""
STALE_S = 300.0
"""A heartbeat older than this (by the store's clock) means its run is dead."""
ALIVE = "_alive"
TAKEOVER_ATTEMPTS = 3


class RunLocked(StoreError):
    """Another live audit holds the run id in this dataset."""


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a lock: enough to tell, from this host, whether that process still runs."""

    token: str
    host: str
    pid: int
    pid_start: str | None
    started: str

    def to_bytes(self) -> bytes:
        return json.dumps({"token": self.token, "host": self.host, "pid": self.pid,
                           "pid_start": self.pid_start, "started": self.started}).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes) -> Holder | None:
        try:
            raw = json.loads(data)
            return cls(str(raw["token"]), str(raw["host"]), int(raw["pid"]),
                       None if raw.get("pid_start") is None else str(raw["pid_start"]),
                       str(raw["started"]))
        except (ValueError, KeyError, TypeError):
            return None


def process_start(pid: int) -> str | None:
    """The start time of process `pid` in clock ticks since boot (Linux), None elsewhere or
    when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return fields[19].decode("ascii") if len(fields) > 19 else None


def process_running(pid: int, start: str | None) -> bool:
    """Whether the process a `Holder` names still runs on this host."""
    if os.path.isdir("/proc/self"):
        now = process_start(pid)
        return now is not None and (start is None or now == start)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def modified(fs: Any, path: str) -> datetime | None:
    """When the store last wrote `path` (its own clock), None when it is not there."""
    try:
        info = fs.info(path)
    except FileNotFoundError:
        return None
    for key in ("LastModified", "last_modified", "updated", "mtime"):
        value = info.get(key)
        if isinstance(value, datetime):
            return value
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                return datetime.fromisoformat(value.replace("Z", "+00:00"))
    try:
        found: datetime = fs.modified(path)
    except (NotImplementedError, OSError):
        return None
    return found


class RunLock:
    """The lock of `run_id` in the dataset whose staging folder is `staging` (a path inside
    `fs`), held by the run whose staging prefix is `staging/<run_id>.<token>`."""

    def __init__(self, fs: Any, staging: str, run_id: str, token: str, out: str) -> None:
        self.fs = fs
        self.path = f"{staging}/{run_id}.lock"
        self.staging = staging
        self.run_id = run_id
        self.alive_path = self._alive_path(token)
        self.out = out
        self.me = Holder(token, socket.gethostname(), os.getpid(), process_start(os.getpid()),
                         datetime.now().astimezone().isoformat(timespec="seconds"))
        self.held = False
        self.supported = True
        self._stop = threading.Event()
        self._beating: threading.Thread | None = None

    # --- taking it --------------------------------------------------------------------------------

    def acquire(self) -> None:
        """Take the lock, replacing a dead holder's; `RunLocked` when a live run holds it."""
        self._beat()
        now = modified(self.fs, self.alive_path)
        for _ in range(TAKEOVER_ATTEMPTS):
            if self._create():
                break
            if not self.supported:
                return
            holder = self._holder()
            if holder is not None and holder.token == self.me.token:
                break
            if holder is not None and not self._dead(holder, now):
                raise RunLocked(self._refusal(holder))
            with contextlib.suppress(FileNotFoundError):
                self.fs.rm(self.path)  # a dead run's lock (or an unreadable one): take it over
            self.fs.invalidate_cache()
        else:
            holder = self._holder()
            raise RunLocked(self._refusal(holder) if holder is not None else
                            f"run id {self.run_id!r} in '{self.out}' is being taken by another run")
        self.held = True
        self._beating = threading.Thread(target=self._heartbeat, name="run-lock-heartbeat",
                                         daemon=True)
        self._beating.start()

    def _create(self) -> bool:
        try:
            with self.fs.open(self.path, "xb") as handle:
                handle.write(self.me.to_bytes())
        except FileExistsError:
            return False
        except (ValueError, NotImplementedError, TypeError):
            self.supported = False  # the store cannot create-if-absent: run unlocked
            return False
        self.fs.invalidate_cache()
        holder = self._holder()  # a store that ignored the condition let a later writer win
        return holder is not None and holder.token == self.me.token

    def _holder(self) -> Holder | None:
        self.fs.invalidate_cache()
        try:
            return Holder.from_bytes(self.fs.cat_file(self.path))
        except FileNotFoundError:
            return None

    def _dead(self, holder: Holder, now: datetime | None) -> bool:
        if holder.host == self.me.host:
            return not process_running(holder.pid, holder.pid_start)
        beats = [when for when in (modified(self.fs, self.path),
                                   modified(self.fs, self._alive_path(holder.token)))
                 if when is not None]
        if now is None or not beats:
            return now is not None  # no heartbeat at all: it never got going
        return (now - max(beats)).total_seconds() > STALE_S

    def _alive_path(self, token: str) -> str:
        """The heartbeat of the run whose staging prefix is `<run_id>.<token>`."""
        return f"{self.staging}/{self.run_id}.{token}/{ALIVE}"

    def _refusal(self, holder: Holder) -> str:
        return (f"another audit holds run id {self.run_id!r} in '{self.out}' (pid {holder.pid} on "
                f"{holder.host}, started {holder.started}): wait for it to end, or give this run "
                f"another --run-id")

    # --- holding it -------------------------------------------------------------------------------

    def _beat(self) -> None:
        with self.fs.open(self.alive_path, "wb") as handle:
            handle.write(self.me.to_bytes())
        self.fs.invalidate_cache()

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            with contextlib.suppress(OSError):
                self._beat()

    def verify(self) -> None:
        """Right before the commit: raise `RunLocked` when the lock is no longer this run's."""
        if not self.held:
            return
        holder = self._holder()
        if holder is None or holder.token != self.me.token:
            self.held = False
            taker = f" by pid {holder.pid} on {holder.host}" if holder is not None else ""
            raise RunLocked(f"the lock of run id {self.run_id!r} in '{self.out}' was taken over"
                            f"{taker} (this run was silent for over {STALE_S:.0f} s): nothing "
                            f"was committed")

    def release(self) -> None:
        """Stop the heartbeat and delete the lock if it is still this run's."""
        self._stop.set()
        if self._beating is not None:
            self._beating.join()
            self._beating = None
        if not self.held:
            return
        self.held = False
        with contextlib.suppress(OSError):
            holder = self._holder()
            if holder is not None and holder.token == self.me.token:
                self.fs.rm(self.path)
        self.fs.invalidate_cache()
