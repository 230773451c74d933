"""Globs never skip a folder silently (issue 23, D11): a folder a glob must list, or look into,
and cannot is an error naming it, as it already was for folder inputs.

Root lists every folder, so the folder `locked` is made unlistable in the child process by a
patched listing (as for folder inputs in test_hardening_inputs.py); a real `chmod 0` runs too
when the tests do not run as root.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus_support import good_lines, write_jsonl
from tests.helpers import REPO, run_cli

LOCKED = """
import os, sys
real_scandir, real_lstat, real_stat = os.scandir, os.lstat, os.stat
def _inside(path):
    parts = os.fspath(path).split(os.sep)
    return "locked" in parts[:-1]
def _denied(path):
    raise PermissionError(13, "Permission denied", os.fspath(path))
def scandir(path="."):
    if os.path.basename(os.fspath(path)) == "locked" or _inside(path):
        _denied(path)
    return real_scandir(path)
def lstat(path, *args, **kwargs):
    if _inside(path):  # no search permission on locked/: nothing in it can be looked at
        _denied(path)
    return real_lstat(path, *args, **kwargs)
def stat(path, *args, **kwargs):
    if _inside(path):
        _denied(path)
    return real_stat(path, *args, **kwargs)
os.scandir, os.lstat, os.stat = scandir, lstat, stat
from frayproof_audit.cli import main
sys.argv = ["frayproof-audit", *sys.argv[1:]]
main()
"""
"""The CLI with `locked` (any folder of that name) mode 700 of another user, as root without
CAP_DAC_*: it cannot be listed, and nothing inside it can be looked up."""


def _logs(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "logs" / "open" / "a.jsonl", good_lines(2))
    write_jsonl(tmp_path / "logs" / "locked" / "b.jsonl", good_lines(3, start=10))


def _audit_locked(tmp_path: Path, given: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LOCKED, "audit", given, "--out", "o", "-q", "--no-mutate"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


GLOBS = ["logs/*/*.jsonl", "logs/lo*/*.jsonl", "logs/locked/*.jsonl", "logs/*/b.jsonl",
         "logs/[l]ocked/*", "logs/**/*.jsonl", "logs/*"]


@pytest.mark.parametrize("given", GLOBS)
def test_a_glob_through_a_folder_that_cannot_be_listed_stops_naming_it(
        tmp_path: Path, given: str) -> None:
    _logs(tmp_path)
    done = _audit_locked(tmp_path, given)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (
        "INPUT ERROR: cannot list input folder 'logs/locked': Permission denied"), done.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("given", ["logs/open/*.jsonl", "logs/op*/*.jsonl", "logs/*/a.jsonl"])
def test_a_glob_that_needs_nothing_from_the_locked_folder_still_runs(tmp_path: Path, given: str) -> None:
    # `logs/*/a.jsonl` looks into locked/ too, for an a.jsonl: the lookup is refused there
    _logs(tmp_path)
    done = _audit_locked(tmp_path, given)
    if given == "logs/*/a.jsonl":
        assert done.returncode == 2 and "cannot list input folder 'logs/locked'" in done.stderr
        return
    assert done.returncode == 0, done.stderr
    assert "2 pairs audited" in done.stdout


def test_glob_matches_are_those_of_glob_glob_where_every_folder_lists(tmp_path: Path) -> None:
    from glob import glob

    from frayproof_audit.corpus.inputs.expansion import _glob

    for name in ("a/x.jsonl", "a/.hidden.jsonl", "b/c/y.jsonl", ".h/z.jsonl", "a.jsonl", "b/c/w.txt"):
        write_jsonl(tmp_path / name, good_lines(1))
    patterns = ["*", "*/*", "*/*.jsonl", "?/*", "[ab]/*", "b/*/*", "*/.h*", ".*/*", "*/c/*.jsonl",
                "a/x.jsonl", "nothing/*", "a/*/*", "*.jsonl", "b/c/"]
    previous = Path.cwd()
    os.chdir(tmp_path)
    try:
        for pattern in patterns:
            assert _glob(pattern) == sorted(glob(pattern)), pattern
            absolute = os.path.join(tmp_path, pattern)
            assert _glob(absolute) == sorted(glob(absolute)), absolute
    finally:
        os.chdir(previous)


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists every folder: the patched listing covers it")
def test_a_glob_through_a_folder_without_permissions_stops(tmp_path: Path) -> None:
    _logs(tmp_path)
    (tmp_path / "logs" / "locked").chmod(0)
    try:
        result = run_cli("audit", "logs/*/*.jsonl", "--out", "o", expect=2, real=True, cwd=tmp_path)
    finally:
        (tmp_path / "logs" / "locked").chmod(stat.S_IRWXU)
    assert "cannot list input folder 'logs/locked'" in result.stderr
