"""A pytest plugin that ends the run with the CPU time it took, so a slow `make test` says
whether it is CPU-bound (only less work makes it faster) or waiting (more workers would).

Each xdist worker reports its own CPU time and that of the processes it started and waited for
(`RUSAGE_SELF` + `RUSAGE_CHILDREN`: CLI subprocesses, loky and cluster workers, the browser)
through `workeroutput` when its session ends; the controller adds its own and prints

    CPU: 487.3 s in 263 s (2 cores 93% busy); at this CPU the run takes at least 243 s here

The figure is a lower bound: a process nobody waited for (a daemon left running) is not in it.
Loaded by tests/conftest.py; tests/test_cpu_account.py runs it on a small suite.
"""

from __future__ import annotations

import os
import resource
import time
from typing import Any

import pytest

KEY = "frayproof_audit_cpu_s"
"""The `workeroutput` entry a worker reports its CPU seconds in."""


def cpu_seconds() -> float:
    """This process's CPU time and that of the children it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def cores() -> int:
    """The cores this process may run on (its affinity, which a container may narrow)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def summary_line(cpu_s: float, wall_s: float, core_count: int) -> str:
    busy = cpu_s / (wall_s * core_count) if wall_s > 0 else 0.0
    return (f"CPU: {cpu_s:.1f} s in {wall_s:.0f} s ({core_count} cores {busy:.0%} busy); "
            f"at this CPU the run takes at least {cpu_s / core_count:.0f} s here")


class CpuAccount:
    """Sums the workers' reports (or, without xdist, this process's own) for the summary."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.workers_s = 0.0
        self.workers = 0

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        reported = getattr(node, "workeroutput", {}).get(KEY)
        if reported is not None:
            self.workers_s += float(reported)
            self.workers += 1

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        output = getattr(session.config, "workeroutput", None)
        if output is not None:  # in a worker: report to the controller
            output[KEY] = cpu_seconds()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if hasattr(terminalreporter.config, "workeroutput"):
            return
        # The controller's own time without its children: the workers are its children, and
        # their time is already in their reports.
        own = resource.getrusage(resource.RUSAGE_SELF)
        total = own.ru_utime + own.ru_stime + self.workers_s if self.workers else cpu_seconds()
        terminalreporter.write_line(summary_line(total, time.perf_counter() - self.started, cores()))


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(CpuAccount(), "frayproof_audit_cpu_account")
