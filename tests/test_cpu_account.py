"""tests/cpu_account.py: the run's closing CPU line counts the xdist workers and the processes
they waited for, so `make test` can say whether it is CPU-bound."""

from __future__ import annotations

import re
import resource

import pytest

from tests.cpu_account import summary_line
from tests.helpers import REPO

BURN_S = 0.4
"""CPU seconds each test of the small suite spends in a child process it waits for."""

SUITE = f'''
import subprocess, sys

BURN = "import time\\nend = time.process_time() + {BURN_S}\\nwhile time.process_time() < end: pass"

def test_one():
    subprocess.run([sys.executable, "-c", BURN], check=True)

def test_two():
    subprocess.run([sys.executable, "-c", BURN], check=True)
'''

LINE = re.compile(r"^CPU: (\d+\.\d) s in (\d+) s \((\d+) cores (\d+)% busy\); "
                  r"at this CPU the run takes at least (\d+) s here$", re.MULTILINE)


def test_the_line_says_how_busy_the_cores_were_and_the_floor_they_allow() -> None:
    assert summary_line(480.4, 262.0, 2) == (
        "CPU: 480.4 s in 262 s (2 cores 92% busy); at this CPU the run takes at least 240 s here")
    assert summary_line(3.0, 0.0, 2).startswith("CPU: 3.0 s in 0 s (2 cores 0% busy)")


@pytest.mark.parametrize("workers", [["-n", "2"], ["-p", "no:xdist"]], ids=["xdist", "one-process"])
def test_a_real_run_counts_its_workers_and_their_children(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    pytester.makepyfile(test_burn=SUITE)
    before = _children_cpu()
    done = pytester.runpytest_subprocess("-p", "tests.cpu_account", "-p", "no:langsmith_plugin",
                                         "-p", "no:cacheprovider", *workers)
    seen_from_outside = _children_cpu() - before  # the run's processes, all waited for
    done.assert_outcomes(passed=2)
    (found,) = LINE.findall(done.stdout.str())
    cpu = float(found[0])
    assert cpu >= 2 * BURN_S  # both children, which only the workers saw
    # All of it, once: at most what the run cost as a whole, and most of that (measured 70-95 %
    # here: the rest is the workers' teardown after they report, outside the plugin's reach, a
    # fixed cost that is large only in a run this small). A controller counting itself alone
    # (about a fifth here) or its workers twice falls outside.
    assert 0.5 * seen_from_outside <= cpu <= seen_from_outside


def _children_cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime
