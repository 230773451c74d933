"""The one place that decides how tasks run: a plain loop, threads, or loky processes.

Everything else hands this module a function and a list of task values and gets results back
in completion order; each result carries its own key, so order never matters.

A new backend (dask, ray) needs all of this:

* its name in `config.BACKENDS` (the CLI's `--backend` choices come from there), and in
  `PROCESS_BACKENDS` when its workers are separate processes;
* a branch in `run_tasks` that ships `function` and each task (picklable frozen values) to the
  workers and yields the results; streaming them as they finish keeps the progress line live,
  but a backend that can only hand back a list (ray's `get`) may yield from that list;
* worker loss detection: `run_tasks` must raise `WorkerDied` when a worker vanishes (loky
  raises `BrokenExecutor`, translated below; dask or ray raise their own errors, to be mapped
  the same way), and the workers must share a filesystem with the parent, because the parent
  finds the shards that were in flight from the marker files `audit_shard` leaves in the
  run's `_inflight` folder (see `run._execute`), and workers stage their part files there too;
* orphans: a worker process must end when the process that started it dies (SIGKILL, a
  crash), busy or idle; loky workers get `exit_with_parent` as their initializer;
* early exit: when the caller stops consuming (an error, Ctrl-C, SIGTERM) and closes the
  iterator, every worker is stopped before `run_tasks` returns, so nothing writes into a staging
  folder that is being removed and no process outlives the run.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import BrokenExecutor
from typing import TypeVar

import joblib

T = TypeVar("T")
R = TypeVar("R")

PROCESS_BACKENDS = frozenset({"loky"})
"""Backends whose workers are separate processes, so one can die without taking the run."""


class WorkerDied(Exception):
    """A worker process vanished (killed, out of memory): the pool is broken, results are lost."""


AUTO_BYTES_PER_WORKER = 48 * 1024 * 1024
"""With `--jobs -1`, one worker per this much input (up to every core): starting a process pool
costs a second or two, which small inputs never win back, so they run in this process."""


WATCH_SECONDS = 0.5
"""How often a worker process checks that the process that started it is still there."""
ORPHANED_EXIT = 70
"""Exit status of a worker process that found its parent gone."""


def exit_with_parent(parent: int) -> None:
    """In a worker process: a daemon thread that ends the process (`os._exit`, no clean-up to
    wait for) once `parent` is gone, i.e. this process was reparented, or, when `parent` was not
    its direct parent, no longer exists. Started when the worker starts, so idle workers too."""
    if parent == os.getpid():
        return
    direct = os.getppid() == parent

    def alive() -> bool:
        if direct:
            return os.getppid() == parent
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def watch() -> None:
        while alive():
            time.sleep(WATCH_SECONDS)
        os._exit(ORPHANED_EXIT)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def effective_jobs(n_jobs: int, tasks: int, weight: int | None = None) -> int:
    """Workers actually used: never more than there are tasks. `-1` means every core, or, given
    the input's `weight` in bytes, no more workers than it keeps busy."""
    wanted = n_jobs
    if n_jobs == -1:
        wanted = joblib.cpu_count()
        if weight is not None:
            wanted = min(wanted, max(1, weight // AUTO_BYTES_PER_WORKER))
    return max(1, min(wanted, tasks))


def run_tasks(
    function: Callable[[T], R],
    tasks: Sequence[T],
    backend: str,
    n_jobs: int,
) -> Generator[R, None, None]:
    """Results of `function(task)` as they complete.

    `n_jobs == 1` is a plain loop in this process (no start-up cost, same results). Otherwise a
    process backend always runs tasks in worker processes, even a single one, so a task that
    kills its worker never takes the run with it. Raises `WorkerDied` when a worker vanishes.
    Closing the iterator early (or an exception, Ctrl-C included, while waiting for results)
    kills the workers still running.
    """
    if not tasks:
        return
    if n_jobs == 1:
        for task in tasks:
            yield function(task)
        return
    jobs = effective_jobs(n_jobs, len(tasks))
    if backend in PROCESS_BACKENDS:
        jobs = max(jobs, 2)  # joblib runs n_jobs=1 in this process; two workers keep it out
    options = {}
    if backend in PROCESS_BACKENDS:
        options = {"initializer": exit_with_parent, "initargs": (os.getpid(),)}
    with joblib.parallel_config(backend=backend, n_jobs=jobs, **options):
        parallel = joblib.Parallel(
            return_as="generator_unordered", batch_size=1, pre_dispatch="2*n_jobs"
        )
        results = parallel(joblib.delayed(function)(task) for task in tasks)
        try:
            for result in results:  # noqa: UP028 - `yield from` would close it before `finally`
                yield result
        except BrokenExecutor as exc:
            reason = str(exc).split(". ")[0].splitlines()[0] if str(exc) else type(exc).__name__
            raise WorkerDied(reason) from exc
        finally:
            with warnings.catch_warnings():  # joblib warns that the tasks it kills were lost
                warnings.simplefilter("ignore", UserWarning)
                results.close()  # a no-op once every result is in; otherwise kills the workers
