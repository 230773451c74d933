"""The one place that decides how tasks run: a plain loop, threads, loky processes, Dask or Ray.

An `Executor` is three verbs: `submit(function, shared, tasks)`, `completed()` (results as they
finish, each carrying its own key, so order never matters) and, when a worker vanishes, the
`WorkerLost` that `completed()` raises, naming the tasks that were in flight (or `ClusterLost`
when no worker is left at all). The caller's retry policy (`audit_run._execute`: each lost task once
more, alone, then given up) is therefore the same on every backend, and needs no shared
filesystem: the executor itself knows which tasks it handed out and which came back, because
it hands out at most `IN_FLIGHT_PER_WORKER` tasks per worker ahead of the results (one running,
one queued, so no worker waits between two tasks).

loky, threads and Ray are entered through `joblib.parallel_config`, never hard-coded into a
`Parallel`; Dask through its own client (below: joblib's Dask backend scatters the shared value,
which a cluster cannot recompute once every worker holding it is gone):

* `loky` — local worker processes; they end when the process that started them dies
  (`exit_with_parent`, SIGKILL included). `start()` starts the pool in a background thread, so
  workers start and import the engine (`start_worker`) while the parent plans the shards.
* `threading` — threads of this process (no worker can be lost).
* `dask` — a Dask cluster: `scheduler` is `tcp://HOST:PORT` of a running scheduler, or `local`
  to start a `LocalCluster` of `n_jobs` single-threaded worker processes. Each task is
  `client.submit`ted with the `shared` value (the run's settings with the compiled contract, a
  few KB) in it, so the scheduler holds everything a task needs: Dask reruns the tasks of workers
  that die, all of them at once included, on the workers that are left or come back. A task that
  keeps killing workers ends as `KilledWorker`, which is a `WorkerLost` here; a cluster with no
  worker for `WORKER_WAIT_S` is a `ClusterLost`.
* `ray` — a Ray cluster through `ray.util.joblib` (the `ray` extra); `scheduler` is the Ray
  address (`auto`, `ray://HOST:PORT`) or `local`. Ray's joblib backend cannot stream results, so
  tasks run in rounds of one per worker and each round's results are yielded as it ends.

Closing an executor (or leaving `completed()` early: an error, Ctrl-C, SIGTERM) stops every task
still running, so nothing writes into a staging area that is being removed, and shuts down a
cluster it started; a cluster it only connected to is left running (there the tasks are
cancelled, but one already running on a Dask worker ends there: Dask cannot interrupt a task).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import queue
import signal
import threading
import time
import warnings
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import BrokenExecutor
from typing import Any, Generic, TypeVar

from frayproof_audit.errors import InputError

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")

CLUSTER_BACKENDS = frozenset({"dask", "ray"})
"""Backends that need `--scheduler`: the work runs wherever that cluster's workers are."""


class WorkerLost(Exception):
    """A worker vanished (killed, out of memory) while running `in_flight` (indices of the tasks
    given to `submit`): their results are lost; every other task either finished or never ran."""

    def __init__(self, reason: str, in_flight: tuple[int, ...] = ()) -> None:
        super().__init__(reason)
        self.in_flight = in_flight


class ClusterLost(WorkerLost):
    """No worker is left to run anything (every worker of a cluster gone, none back within
    `WORKER_WAIT_S`, or the scheduler gone): no task that has not finished can run, so retrying
    one cannot help. `in_flight` are the tasks that were handed out."""


class BackendError(InputError):
    """A backend cannot be used: its extra is not installed, or its scheduler cannot be reached."""


AUTO_BYTES_PER_WORKER = 48 * 1024 * 1024
"""With `--jobs -1`, one worker per this much input (up to every core): starting a process pool
costs a second or two, which small inputs never win back, so they run in this process."""

WATCH_SECONDS = 0.5
"""How often a worker process checks that the process that started it is still there."""
ORPHANED_EXIT = 70
"""Exit status of a worker process that found its parent gone."""
IN_FLIGHT_PER_WORKER = 2
"""Tasks handed out per worker at a time: one running and one waiting in the queue, so a worker
that finishes starts its next task at once instead of waiting for the parent to send one."""
CONNECT_TIMEOUT_S = 30
"""How long to wait for a Dask scheduler to answer."""
WORKER_WAIT_S = 30.0
"""How long a Dask run waits for a worker while its cluster has none (none yet, or every one
lost): then the tasks not finished are a `ClusterLost`. A `LocalCluster` restarts a dead worker
in a second or two."""
WORKERS_CHECK_S = 0.5
"""While no Dask task finishes, how often the run asks the scheduler how many workers it has."""


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


def ignore_interrupts() -> None:
    """In a worker process: ignore SIGINT. Ctrl-C in a terminal signals the whole process group,
    workers included, and it is the parent's to handle: it stops the workers, removes its
    staging folder and exits 130. A worker that raised `KeyboardInterrupt` itself would only
    print a traceback (from wherever it was: importing the engine, waiting for a task). The
    worker starts with SIGINT blocked (`interrupts_blocked`), so none arrives before this."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # also discards one that is pending
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def interrupts_blocked() -> Iterator[None]:
    """Block SIGINT in this thread while it may start loky workers (and loky's threads, which
    start workers too and inherit the mask). A process starts with the signal mask of the
    thread that forked it, and an exec keeps it: a Ctrl-C then waits, pending, until the
    worker's `ignore_interrupts` discards it, instead of interrupting its interpreter start-up
    or its imports. The parent loses no Ctrl-C: Python runs its handler in the main thread
    whichever thread the kernel delivers the signal to, and one every thread blocks is
    delivered as soon as the mask is restored."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    # Started with the first worker otherwise, multiprocessing's resource tracker would unblock
    # SIGINT in this thread (Python 3.11 unblocks, it does not restore) just before the fork.
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _joblib() -> Any:
    """joblib, imported on first use: a `--jobs 1` run never needs it (and its import, numpy
    included, is a tenth of a second of every run's fixed cost)."""
    import joblib

    return joblib


def effective_jobs(n_jobs: int, tasks: int, weight: int | None = None) -> int:
    """Workers actually used: never more than there are tasks. `-1` means every core, or, given
    the input's `weight` in bytes, no more workers than it keeps busy.

    The cores are counted (importing joblib, a sixth of a small run's fixed cost) only when the
    tasks and the weight leave room for more than one worker."""
    if n_jobs != -1:
        return max(1, min(n_jobs, tasks))
    busy = tasks if weight is None else min(tasks, max(1, weight // AUTO_BYTES_PER_WORKER))
    return 1 if busy <= 1 else min(_joblib().cpu_count(), busy)


def warm_worker() -> int:
    """Import what auditing a shard needs, so the first real task does not pay for it (run on
    every Dask worker by `Executor.start`, and by `start_worker` in every loky worker)."""
    # The import is the point, in the worker process at its start (the worker module imports
    # nothing of this one: no cycle).
    import frayproof_audit.corpus.run.worker  # noqa: F401

    return os.getpid()


def start_worker(parent: int) -> None:
    """loky's initializer, run in every fresh worker before its first task: leave Ctrl-C to the
    parent (`ignore_interrupts`), end the worker with `parent` (`exit_with_parent`) and import
    the engine (`warm_worker`). Each worker does so as soon as it is up, while the parent plans,
    and takes tasks as soon as it is done: none waits for another worker to be ready."""
    ignore_interrupts()
    exit_with_parent(parent)
    with contextlib.suppress(Exception):  # a broken install: the first task reports it in full
        warm_worker()


class Executor(Generic[S, T, R]):
    """Runs `function(shared, task)` for each task on one backend; see the module docstring."""

    def __init__(self, backend: str, n_jobs: int, scheduler: str | None = None) -> None:
        self.backend = backend
        self.n_jobs = n_jobs
        self.scheduler = scheduler
        self._client: Any = None
        self._cluster: Any = None
        self._warming: threading.Thread | None = None
        self._work: Iterator[R] | None = None
        self._start_error: BaseException | None = None
        self._closers: list[Callable[[], None]] = []

    # --- life cycle --------------------------------------------------------------------------

    def start(self) -> Executor[S, T, R]:
        """Begin starting workers in the background (loky: the pool; dask: connecting to, or
        starting, the cluster and importing the engine on its workers), so they get ready while
        the caller plans. The first `submit` (or `jobs`) waits for them; an error starting a
        cluster is raised there. Ray starts there too, in the caller's thread: `ray.init` from
        any other thread starts a local instance whose driver then fails to reach it (a minute's
        wait, then the process ends)."""
        if self._warming is not None or self._client is not None:
            return self
        target = {"dask": self._start_dask}.get(self.backend)
        if target is None and self.backend == "loky" and self.n_jobs > 1:
            target = self._warm_loky
        if target is not None:
            self._warming = threading.Thread(target=self._started, args=(target,), name="start-workers",
                                             daemon=True)
            self._warming.start()
        return self

    def _started(self, target: Callable[[], None]) -> None:
        try:
            target()
        except BaseException as exc:  # handed to the caller's thread by `_ready`
            self._start_error = exc

    def _ready(self) -> None:
        """Wait for `start` to finish; raise what went wrong starting a cluster."""
        if self._warming is not None:
            self._warming.join()
            self._warming = None
        error, self._start_error = self._start_error, None
        if error is not None:
            raise error
        if self.backend in CLUSTER_BACKENDS and self._client is None:
            (self._start_dask if self.backend == "dask" else self._start_ray)()

    @property
    def jobs(self) -> int:
        """Workers the tasks are spread over (for a cluster: its worker threads or CPUs)."""
        self._ready()
        if self.backend == "dask" and self._client is not None:
            threads: int = sum(self._client.nthreads().values())
            return max(1, threads)
        if self.backend == "ray" and self._client is not None:
            return max(1, int(self._client.cluster_resources().get("CPU", 1)))
        jobs: int = self.n_jobs
        return jobs

    def close(self) -> None:
        """Stop what is running and shut down whatever this executor started."""
        self._stop_work()
        if self._warming is not None:
            self._warming.join()
            self._warming = None
        for closer in reversed(self._closers):
            with contextlib.suppress(Exception):
                closer()
        self._closers.clear()
        self._client = self._cluster = None

    def __enter__(self) -> Executor[S, T, R]:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- submit / completed ------------------------------------------------------------------

    def submit(self, function: Callable[[S, T], R], shared: S, tasks: Sequence[T]) -> None:
        """Hand out `tasks`; their results come from `completed()`."""
        self._stop_work()
        self._work = self._run(function, shared, list(tasks))

    def completed(self) -> Iterator[R]:
        """Results of the submitted tasks as they finish; raises `WorkerLost` if a worker vanished."""
        work, self._work = self._work, None
        if work is None:
            return
        try:
            yield from work
        finally:
            close = getattr(work, "close", None)
            if close is not None:
                close()

    def _stop_work(self) -> None:
        work, self._work = self._work, None
        close = getattr(work, "close", None)
        if close is not None:
            close()

    def _run(self, function: Callable[[S, T], R], shared: S, tasks: list[T]) -> Generator[R, None, None]:
        if not tasks:
            return
        if self.backend not in CLUSTER_BACKENDS and self.n_jobs == 1:
            for task in tasks:  # no pool: no start-up cost, same results
                yield function(shared, task)
            return
        self._ready()
        if self.backend == "ray":
            yield from self._rounds(function, shared, tasks)
            return
        if self.backend == "dask":
            yield from self._stream_dask(function, shared, tasks)
            return
        jobs = self._pool_jobs(len(tasks))
        handed_out: list[int] = []
        finished: set[int] = set()

        def hand_out() -> Iterator[Any]:
            for index, task in enumerate(tasks):
                handed_out.append(index)
                yield _joblib().delayed(_indexed)(function, index, shared, task)

        with _joblib().parallel_config(**self._config(jobs)):
            parallel = _joblib().Parallel(
                return_as="generator_unordered", batch_size=1, pre_dispatch=f"{IN_FLIGHT_PER_WORKER}*n_jobs"
            )
            results = None
            try:
                # Inside the `try`: the first tasks are handed out right here, and a pool whose
                # worker has just died (loky notices it on its own thread, a moment later) can
                # refuse them as broken. That is a lost worker too, never an error of the run.
                # Here too a (new) pool starts its workers: with SIGINT blocked.
                with interrupts_blocked() if self.backend == "loky" else contextlib.nullcontext():
                    results = parallel(hand_out())
                for index, result in results:
                    finished.add(index)
                    yield result
            except BaseException as exc:
                lost = _lost_reason(exc)
                if lost is None:
                    raise
                in_flight = tuple(i for i in handed_out if i not in finished)
                raise WorkerLost(lost, in_flight) from exc
            finally:
                if results is not None:
                    with warnings.catch_warnings():  # joblib warns that the tasks it kills were lost
                        warnings.simplefilter("ignore", UserWarning)
                        results.close()  # a no-op once every result is in; otherwise kills the workers

    def _stream_dask(self, function: Callable[[S, T], R], shared: S, tasks: list[T]) -> Iterator[R]:
        """Dask: at most `IN_FLIGHT_PER_WORKER` tasks per worker submitted ahead of the results,
        each with `shared` in it (never scattered: the scheduler can rerun a task whose workers
        all died only if it holds all the task needs). Dask reruns the tasks of a dead worker by
        itself; the executor only watches that some worker is left (`WORKER_WAIT_S`)."""
        client = self._client
        waiting = collections.deque(enumerate(tasks))
        running: dict[Any, int] = {}
        finished: queue.Queue[Any] = queue.Queue()  # futures as they end, put by Dask's thread
        limit = IN_FLIGHT_PER_WORKER * self.jobs
        no_worker_since: float | None = None
        try:
            while waiting or running:
                while waiting and len(running) < limit:
                    index, task = waiting.popleft()
                    future = client.submit(_indexed, function, index, shared, task, pure=False)
                    running[future] = index
                    future.add_done_callback(finished.put)
                try:
                    future = finished.get(timeout=WORKERS_CHECK_S)
                except queue.Empty:
                    if _dask_workers(client):
                        no_worker_since = None
                    elif no_worker_since is None:
                        no_worker_since = time.monotonic()
                    elif time.monotonic() - no_worker_since >= WORKER_WAIT_S:
                        raise ClusterLost(_NO_DASK_WORKER.format(WORKER_WAIT_S),
                                          tuple(running.values())) from None
                    continue
                no_worker_since = None
                if future not in running:
                    continue
                if future.status == "finished":
                    outcome = _dask_result(client, future, WORKER_WAIT_S)
                    if outcome is not None:
                        del running[future]
                        yield outcome[1]
                        continue
                    if future.status != "finished" and not _dask_workers(client):
                        # its result died with its worker, and no worker is left to compute it
                        raise ClusterLost(_NO_DASK_WORKER.format(WORKER_WAIT_S), tuple(running.values()))
                if future.status == "cancelled":  # not by us: the scheduler dropped it
                    raise ClusterLost(f"the Dask scheduler dropped the task ({_cancel_reason(future)})",
                                      tuple(running.values()))
                if future.status == "error":
                    error = future.exception()
                    lost = _lost_reason(error)
                    if lost is None:
                        raise error
                    raise WorkerLost(lost, tuple(running.values()))
                future.add_done_callback(finished.put)  # pending again: tell us when it ends
        finally:
            if running:  # an error, Ctrl-C, or a caller that stopped early: tasks nobody waits for
                with contextlib.suppress(Exception):
                    client.cancel(list(running))

    def _rounds(self, function: Callable[[S, T], R], shared: S, tasks: list[T]) -> Iterator[R]:
        """Backends without streaming (Ray): one task per worker per round, results per round.
        One `Parallel` serves every round, so its pool of workers (Ray actors) starts once."""
        size = max(1, self.jobs)
        joblib = _joblib()
        with joblib.parallel_config(**self._config(size)), \
                joblib.Parallel(return_as="list", batch_size=1) as parallel:
            for first in range(0, len(tasks), size):
                chunk = list(enumerate(tasks[first : first + size], start=first))
                try:
                    done = parallel(joblib.delayed(_indexed)(function, index, shared, task)
                                    for index, task in chunk)
                except BaseException as exc:
                    lost = _lost_reason(exc)
                    if lost is None:
                        raise
                    raise WorkerLost(lost, tuple(index for index, _ in chunk)) from exc
                for _, result in done:
                    yield result

    def _pool_jobs(self, tasks: int) -> int:
        jobs = effective_jobs(self.n_jobs, tasks)
        return max(jobs, 2) if self.backend == "loky" else jobs  # n_jobs=1 would run in-process

    def _config(self, jobs: int) -> dict[str, Any]:
        if self.backend == "loky":
            return {"backend": "loky", "n_jobs": jobs, "initializer": start_worker,
                    "initargs": (os.getpid(),)}
        if self.backend == "ray":
            return {"backend": "ray", "n_jobs": jobs}
        return {"backend": self.backend, "n_jobs": jobs}

    # --- backends ------------------------------------------------------------------------------

    def _warm_loky(self) -> None:
        """Start the pool: its workers spawn and import the engine in `start_worker`. The tasks
        only make the pool start; they end as soon as one worker is up. SIGINT is blocked
        meanwhile (`interrupts_blocked`), and stays blocked in the threads loky starts here."""
        try:
            with interrupts_blocked(), _joblib().parallel_config(**self._config(max(self.n_jobs, 2))):
                _joblib().Parallel()(_joblib().delayed(os.getpid)() for _ in range(max(self.n_jobs, 2)))
        except Exception:
            pass

    def _start_dask(self) -> None:
        if self._client is not None:
            return
        try:
            from dask import distributed as imported

            distributed: Any = imported  # untyped calls below: typed as Any once, here
        except ImportError:
            raise BackendError(
                "--backend dask needs Dask: pip install 'frayproof-audit[dask]'"
            ) from None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "port 8787 is already in use" and the like
            try:
                if self.scheduler in (None, "local"):
                    workers = self.n_jobs if self.n_jobs > 0 else None
                    # Taken back once the cluster is closed (closers run last first).
                    self._closers.append(_nanny_environment_restorer())
                    # Its workers, and those its nannies restart (from the cluster's thread,
                    # started here), leave Ctrl-C to this process, as loky's do.
                    with interrupts_blocked():
                        self._cluster = distributed.LocalCluster(
                            n_workers=workers, threads_per_worker=1, processes=True,
                            # Its scheduler runs in this process: it would log on the user's
                            # stderr what the run handles itself (a lost worker, a result
                            # gathered again).
                            dashboard_address=None, silence_logs=logging.CRITICAL,
                        )
                    self._closers.append(self._cluster.close)
                    self._client = distributed.Client(self._cluster, set_as_default=False)
                else:
                    self._client = distributed.Client(self.scheduler, timeout=CONNECT_TIMEOUT_S,
                                          set_as_default=False)
            except OSError as exc:
                raise BackendError(f"cannot reach the Dask scheduler {self.scheduler}: {exc}") from None
        self._closers.append(self._client.close)
        try:  # import the engine on every worker now, not in the first task
            self._client.run(warm_worker)
        except Exception as exc:
            raise BackendError(f"the Dask workers cannot run the audit ({type(exc).__name__}: {exc});"
                               " install frayproof-audit, the same version, on every worker") from None

    def _start_ray(self) -> None:
        if self._client is not None:
            return
        try:
            import ray
            from ray.util.joblib import register_ray
        except ImportError:
            raise BackendError("--backend ray needs Ray: pip install 'frayproof-audit[ray]'") from None
        if not ray.is_initialized():
            address = None if self.scheduler in (None, "local") else self.scheduler
            if address is None and self.n_jobs > 0:
                ray.init(num_cpus=self.n_jobs, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
            self._closers.append(ray.shutdown)
        registrar: Callable[[], None] = register_ray  # untyped in Ray: typed here, once
        registrar()
        # Ray's joblib backend hands its pool a multiprocessing context, which Ray's pool warns
        # on every run that it ignores: noise on the user's stderr about nothing they chose.
        logging.getLogger("ray.util.multiprocessing.pool").setLevel(logging.ERROR)
        self._client = ray


def _indexed(function: Callable[[S, T], R], index: int, shared: S, task: T) -> tuple[int, R]:
    """Runs in the worker: the result with the index of its task, so the parent knows which came
    back whatever the order."""
    return index, function(shared, task)


_NO_DASK_WORKER = "no Dask worker for {:g} s: every worker was lost and none came back"


def _dask_workers(client: Any) -> int:
    """Worker threads the Dask scheduler knows of (0 when it cannot be asked)."""
    try:
        threads: int = sum(client.nthreads().values())
    except Exception:  # the scheduler is gone or busy: no worker it could give a task to
        return 0
    return threads


def _dask_result(client: Any, future: Any, timeout: float) -> Any:
    """The value of a finished Dask future, or None when it is not there within `timeout`: its
    worker died after it finished (Dask computes it again), or it failed or was cancelled since.
    Gathered with `errors="skip"`: `future.result(timeout)` given up leaves a wait behind that
    prints "Task exception was never retrieved" once the future is cancelled."""
    async def gather() -> Any:
        return await client.gather(future, errors="skip", asynchronous=True)

    try:
        return client.sync(gather, callback_timeout=timeout)
    except TimeoutError:
        return None


def _cancel_reason(future: Any) -> str:
    """Why Dask cancelled `future` (one line)."""
    try:
        future.result(timeout=0)
    except Exception as exc:  # a cancelled future raises its reason
        return " ".join(str(exc).split())[:200] or type(exc).__name__
    return "cancelled"


def _lost_reason(exc: BaseException) -> str | None:
    """Why `exc` means a worker vanished (one line), or None when it means something else."""
    if isinstance(exc, BrokenExecutor):
        text = str(exc)
        return text.split(". ")[0].splitlines()[0] if text else type(exc).__name__
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & {"KilledWorker", "WorkerCrashedError", "RayActorError", "ActorDiedError",
                "NodeDiedError", "WorkerLostError"}:
        text = " ".join(str(exc).split())
        return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__
    return None


def run_tasks(
    function: Callable[[T], R],
    tasks: Sequence[T],
    backend: str,
    n_jobs: int,
    scheduler: str | None = None,
) -> Generator[R, None, None]:
    """Results of `function(task)` as they complete, on a pool started for this call.

    The simple form of `Executor` for a single batch of tasks. Raises `WorkerLost` when a worker
    vanishes. Closing the iterator early stops the workers still running.
    """
    executor: Executor[Callable[[T], R], T, R] = Executor(backend, n_jobs, scheduler)
    with executor:
        executor.submit(_call, function, tasks)
        yield from executor.completed()


def _call(function: Callable[[T], R], task: T) -> R:
    return function(task)


def _nanny_environment_restorer() -> Callable[[], None]:
    """What puts back this process's environment after a `LocalCluster`: each of its nannies
    writes `distributed.nanny.pre-spawn-environ` (`MALLOC_TRIM_THRESHOLD_`,
    `OMP_NUM_THREADS`, ...), `PYTHONHASHSEED` and `__DASK_PARENT_PID` into `os.environ`
    before every worker it spawns or restarts (distributed's `nanny.py`, `WorkerProcess.start`;
    `proctitle.enable_proctitle_on_children`) and never takes them back, so every later
    subprocess of a program that ran an audit would inherit them. Only those variables are
    restored, as they were before the cluster started."""
    import dask

    keys = {str(key) for key in dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {}}
    saved = {key: os.environ.get(key) for key in keys | {"PYTHONHASHSEED", "__DASK_PARENT_PID"}}

    def restore() -> None:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    return restore
