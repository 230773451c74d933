"""`python -m benchmarks.regress`: is any headline figure worse than the last recorded one?

Every benchmark's results file (`benchmarks.results`) holds its headline figures: one `Target`
each, with the direction that is better (`at_least`) and the noise the run itself measured
(`Target.noise`, the spread of its passes). The recorded figures are the results files as last
committed to the repository (`git show HEAD:benchmarks/results/<name>.json`; outside a git
checkout, the files as they were when the run started). A figure is a **regression** when it
is worse than its recorded value by more than `TOLERANCE` (15 %) plus the run's own noise
(a time or a rate against its record scaled by how fast the machine ran Python in each run,
`speed_factor`: this shared VM's speed moves by a third within an hour):

    worse = recorded / measured - 1   (higher is better)      measured / recorded - 1   (lower)
    REGRESSION  when  worse > TOLERANCE + noise

Figures are compared only with a record of the same machine class (CPU count, model and
architecture, Python's minor version): another machine's record says nothing about this one
(`not comparable`, never a failure). `python -m benchmarks` runs this after the benchmarks,
runs each benchmark that read a regression once more and keeps only the regressions the rerun
confirms (`confirmed`; the machine's speed can drop for minutes, more than a run's own noise
and its speed probe show), measures what the rerun confirms beside the recorded code run now
(`against_recorded_code`), and exits 1 on any regression left, so `make bench` fails loudly;
`make test` never runs it.

    python -m benchmarks.regress [--results DIR] [--against REV]   # compare what is on disk
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.results import RESULTS_DIR, amount

TOLERANCE = 0.15
"""How much worse than recorded a figure may be, beyond the run's own noise."""

REGRESSION = "REGRESSION"
OK = "ok"
BETTER = "better"
NEW = "new"
NOT_COMPARABLE = "not comparable"

Record = Mapping[str, Any]
"""One results file's JSON (`benchmarks.results.save`)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """One headline figure against its record."""

    benchmark: str
    goal: str
    status: str
    measured: float
    unit: str
    recorded: float | None = None
    worse: float | None = None
    """How much worse than recorded, relative (negative: better)."""
    allowed: float = TOLERANCE
    reason: str = ""

    def line(self) -> str:
        head = f"  {self.status.upper() if self.status == REGRESSION else self.status:>14}  " \
               f"{self.benchmark}: {self.goal}: {amount(self.measured, self.unit)}"
        if self.recorded is None or self.worse is None:
            return head + (f" ({self.reason})" if self.reason else "")
        change = (f"{100 * self.worse:.1f}% worse" if self.worse > 0
                  else f"{-100 * self.worse:.1f}% better" if self.worse < 0 else "unchanged")
        return (head + f" vs recorded {amount(self.recorded, self.unit)}: {change} "
                f"(allowed {100 * self.allowed:.1f}%: {100 * TOLERANCE:.0f}% + noise)"
                + (f" ({self.reason})" if self.reason else ""))


def machine_class(machine: Mapping[str, Any]) -> tuple[Any, ...]:
    """What must match for two runs' figures to be compared: CPU count, model (when known),
    architecture and Python's minor version (never the load or the kernel build)."""
    python = str(machine.get("python", ""))
    arch = machine.get("arch")
    if arch is None:  # results written before `arch` was recorded: read it from the platform
        platform_name = str(machine.get("platform", ""))
        arch = next((part for part in platform_name.split("-")
                     if part in ("x86_64", "aarch64", "arm64", "i686", "ppc64le", "s390x")), None)
    return (machine.get("cpus"), ".".join(python.split(".")[:2]), arch)


def same_class(current: Mapping[str, Any], recorded: Mapping[str, Any]) -> bool:
    if machine_class(current) != machine_class(recorded):
        return False
    mine, theirs = current.get("cpu_model"), recorded.get("cpu_model")
    return mine is None or theirs is None or mine == theirs


def worse_by(measured: float, recorded: float, at_least: bool) -> float:
    """How much worse `measured` is than `recorded`, relative to the better of the two's
    scale: for higher-is-better figures recorded / measured - 1, else measured / recorded - 1
    (so 0.15 means 15 % slower either way; negative means better)."""
    if at_least:
        return recorded / measured - 1 if measured > 0 else float("inf")
    return measured / recorded - 1 if recorded > 0 else (0.0 if measured <= 0 else float("inf"))


TIMES = frozenset({"s", "ms", "us"})
"""Units of figures that are CPU or wall time: slower in a slow minute."""


def speed_factor(current: Mapping[str, Any], recorded: Mapping[str, Any], unit: str) -> float:
    """How many times as slow the machine ran Python in this run as in the recorded one (the
    `speed_probe_s` both recorded, `results.machine_speed`), for a figure that is a time or a
    rate (`pairs/s`, `MB/s`); 1 for a ratio measured within one run (`x`), a size, or when
    either run has no probe.

    Never below 1: the probe (12 ms of pure Python) may forgive a slow run but never make a
    record stricter. At 22:33 on 2026-12-01 it read the machine 0.70x as slow as at the record
    while `run_mutations` ran at 326 pairs/s against 459, and so called a figure that matched
    the recorded code run beside it a regression."""
    if unit not in TIMES and not unit.endswith("/s"):
        return 1.0
    now, then = current.get("speed_probe_s"), recorded.get("speed_probe_s")
    if not now or not then:
        return 1.0
    return max(1.0, float(now) / float(then))


def compare(current: Record, recorded: Record | None,
            tolerance: float = TOLERANCE, scaled: bool = True) -> list[Verdict]:
    """Every target of `current` against the same goal in `recorded`; times and rates at the
    machine's speed of each run unless not `scaled` (two runs minutes apart, compared as
    measured)."""
    name = str(current.get("benchmark", "?"))
    found: list[Verdict] = []
    comparable = recorded is not None and same_class(current["machine"], recorded["machine"])
    old = {target["goal"]: target for target in recorded["targets"]} if recorded is not None else {}
    for target in current["targets"]:
        goal, measured, unit = target["goal"], float(target["measured"]), target["unit"]
        if recorded is None or goal not in old:
            found.append(Verdict(name, goal, NEW, measured, unit, reason="no recorded figure"))
            continue
        before = float(old[goal]["measured"])
        if not comparable:
            found.append(Verdict(name, goal, NOT_COMPARABLE, measured, unit, before,
                                 reason=f"recorded on another machine class ({recorded['date']})"))
            continue
        if bool(old[goal]["at_least"]) != bool(target["at_least"]):
            found.append(Verdict(name, goal, NOT_COMPARABLE, measured, unit, before,
                                 reason="the recorded figure is read the other way"))
            continue
        noise = target.get("noise")
        allowed = tolerance + (float(noise) if noise is not None else 0.0)
        slower = speed_factor(current["machine"], recorded["machine"], unit) if scaled else 1.0
        worse = worse_by(measured, before * slower if not target["at_least"] else before / slower,
                         bool(target["at_least"]))
        status = REGRESSION if worse > allowed else BETTER if worse < 0 else OK
        reason = "" if noise is not None else "noise not measured"
        if slower != 1.0:
            reason = _joined(reason, f"recorded figure scaled by the machine's speed: "
                                     f"{slower:.2f}x as slow now")
        if status == REGRESSION:
            reason = _joined(reason, f"recorded {recorded['date']}")
        found.append(Verdict(name, goal, status, measured, unit, before, worse, allowed, reason))
    return found


def _in_git(path: Path) -> tuple[str, str]:
    """The git checkout holding `path` and the path within it; raises CalledProcessError (or
    OSError without git, ValueError outside the checkout)."""
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=path.parent,
                          capture_output=True, text=True, check=True).stdout.strip()
    return root, path.resolve().relative_to(Path(root).resolve()).as_posix()


def committed(path: Path, revision: str = "HEAD") -> Record | None:
    """The results file as committed at `revision`, or None (not in git, or not committed)."""
    try:
        root, relative = _in_git(path)
        shown = subprocess.run(["git", "show", f"{revision}:{relative}"], cwd=root,
                               capture_output=True, check=True).stdout
    except (OSError, ValueError, subprocess.CalledProcessError):
        return None
    try:
        value: Record = json.loads(shown)
    except ValueError:
        return None
    return value


def snapshot(folder: Path, revision: str = "HEAD") -> dict[str, Record | None]:
    """The recorded results to compare a run with, taken before it writes: per results file
    the committed version, else (no git) the file as it is now."""
    found: dict[str, Record | None] = {}
    for path in sorted(folder.glob("*.json")):
        record = committed(path, revision)
        if record is None:
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                record = None
        found[path.name] = record
    return found


def written_since(folder: Path, before: Mapping[str, str]) -> list[Path]:
    """The results files whose text differs from `before` (name -> text at the start)."""
    return [path for path in sorted(folder.glob("*.json"))
            if path.read_text(encoding="utf-8") != before.get(path.name)]


def texts(folder: Path) -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.json"))}


def check_files(paths: Sequence[Path], recorded: Mapping[str, Record | None],
                tolerance: float = TOLERANCE) -> list[Verdict]:
    verdicts: list[Verdict] = []
    for path in paths:
        current = json.loads(path.read_text(encoding="utf-8"))
        verdicts += compare(current, recorded.get(path.name), tolerance)
    return verdicts


def suspects(verdicts: Sequence[Verdict], modules: Sequence[str]) -> list[str]:
    """The benchmark modules (of `modules`) whose results hold a regression, to run again: a
    results file is named after its module, or after the module and a part (`bench_mutate`
    writes `bench_mutate_huge`), so the longest module name it starts with. A file no module
    that ran claims is not rerun: its regressions stand as read."""
    found: list[str] = []
    for verdict in verdicts:
        if verdict.status != REGRESSION:
            continue
        module = owner(verdict.benchmark, modules)
        if module is not None and module not in found:
            found.append(module)
    return found


def owner(results_name: str, modules: Sequence[str]) -> str | None:
    """The module of `modules` that writes the results named `results_name` (`bench_x` or
    `bench_x_part`): the longest name it starts with."""
    owners = [name for name in modules if results_name == name or results_name.startswith(f"{name}_")]
    return max(owners, key=len, default=None)


def confirmed(first: Sequence[Verdict], again: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts of a run whose regressions were measured a second time: a figure is a
    regression only when the rerun reads one too (a slow minute of a shared machine, which the
    run's own noise cannot show, passes in the rerun; a real slowdown does not). A figure the
    rerun did not measure keeps its first verdict."""
    return _second_look(
        first, again,
        lambda second: f"confirmed by a rerun: {amount(second.measured, second.unit)}",
        lambda first_verdict: f"a rerun; the first run read "
                              f"{amount(first_verdict.measured, first_verdict.unit)}, not confirmed")


def recorded_commit(path: Path) -> str | None:
    """The commit that last wrote the results file `path`: the code its record was measured
    with (results are committed with or after the code that made them), or None outside git."""
    try:
        root, relative = _in_git(path)
        commit = subprocess.run(["git", "log", "-1", "--format=%H", "--", relative],
                                cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, ValueError, subprocess.CalledProcessError):
        return None
    return commit or None


def against_recorded_code(verdicts: Sequence[Verdict], now: Sequence[Verdict],
                          commit: str) -> list[Verdict]:
    """The verdicts of confirmed regressions judged again against the recorded code run in the
    same minutes (`now`: this run's figures compared with the figures of `commit`'s code
    measured just before or after). A figure is a regression only if it is also worse than the
    old code's beside it: a machine that stays slow for minutes slows both alike."""
    short = commit[:10]
    return _second_look(
        verdicts, [verdict for verdict in now if verdict.recorded is not None],
        lambda pair: f"worse than the recorded code ({short}) run now too: "
                     f"{amount(pair.recorded or 0.0, pair.unit)}",
        lambda first: f"compared with the recorded code ({short}) run now, not with the committed "
                      f"{amount(first.recorded or 0.0, first.unit)}: the machine is slower, not the code")


def _second_look(first: Sequence[Verdict], second: Sequence[Verdict],
                 still: Callable[[Verdict], str], cleared: Callable[[Verdict], str]) -> list[Verdict]:
    """Each regression of `first` judged again by the same figure's verdict in `second`: kept,
    with `still(second verdict)` said, when that is a regression too, else replaced by it, with
    `cleared(first verdict)` said. Every other verdict, and a figure `second` lacks, stays."""
    again = {(verdict.benchmark, verdict.goal): verdict for verdict in second}
    found: list[Verdict] = []
    for verdict in first:
        other = again.get((verdict.benchmark, verdict.goal))
        if verdict.status != REGRESSION or other is None:
            found.append(verdict)
        elif other.status == REGRESSION:
            found.append(replace(verdict, reason=_joined(verdict.reason, still(other))))
        else:
            found.append(replace(other, reason=_joined(other.reason, cleared(verdict))))
    return found


def _joined(*parts: str) -> str:
    """A verdict's reasons, the empty ones left out."""
    return "; ".join(part for part in parts if part)


def regressions_in(verdicts: Sequence[Verdict], results_file: str) -> int:
    """How many figures of one results file (`bench_x.json`) read as regressions."""
    return sum(1 for v in verdicts if v.status == REGRESSION and f"{v.benchmark}.json" == results_file)


def keep_better(first: Path, again: Path, first_verdicts: Sequence[Verdict],
                again_verdicts: Sequence[Verdict]) -> bool:
    """Replace the results file `first` with its rerun `again` when the rerun reads fewer
    regressions over all its figures (the record the next run is compared with is then the
    better run of the two); True when it did."""
    if regressions_in(again_verdicts, again.name) < regressions_in(first_verdicts, first.name):
        first.write_text(again.read_text(encoding="utf-8"), encoding="utf-8")
        return True
    return False


def report(verdicts: Sequence[Verdict]) -> int:
    """Print every verdict, then a summary; 1 when any figure regressed."""
    print("=== regressions: each headline figure against the last committed result "
          f"(worse than {100 * TOLERANCE:.0f}% + the run's noise fails)")
    for verdict in verdicts:
        print(verdict.line())
    regressed = [verdict for verdict in verdicts if verdict.status == REGRESSION]
    if regressed:
        print(f"{REGRESSION}: {len(regressed)} figure(s) worse than recorded: "
              + "; ".join(f"{v.benchmark}: {v.goal}" for v in regressed))
        return 1
    print(f"no regression ({len(verdicts)} figure(s) compared or new)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.regress",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS_DIR,
                        help="folder of results files to judge (default: benchmarks/results)")
    parser.add_argument("--against", default="HEAD", metavar="REV",
                        help="the commit whose results files are the record (default HEAD)")
    options = parser.parse_args(argv)
    recorded = {path.name: committed(path, options.against)
                for path in sorted(options.results.glob("*.json"))}
    return report(check_files(sorted(options.results.glob("*.json")), recorded))


if __name__ == "__main__":
    sys.exit(main())
