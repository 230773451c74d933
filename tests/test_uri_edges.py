"""`scheme://` edge cases are one line and exit 2 (issue 23, D16), for inputs, `--out`,
`--repair-out` and the dataset readers, and nothing is created on the way.

`audit s3:// --out o` exited 123 (ValueError: Cannot traverse all of S3, with a crash log in a
new local folder `o/`), `audit x.jsonl --out http://127.0.0.1:9/ds` exited 123
(NotImplementedError). No case here needs a network: port 9 of 127.0.0.1 refuses connections.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import EXAMPLES, run_cli

RECORD = (EXAMPLES / "corpus" / "2025-06-02" / "compactions.jsonl").read_bytes().split(b"\n", 1)[0]
DEAD = "127.0.0.1:9"
"""A port nothing listens on: a connection is refused at once."""

CASES: dict[str, tuple[tuple[str, ...], str]] = {
    # name: (arguments, the one line of stderr, or its start when it ends with "…")
    "input: empty bucket": (("audit", "s3://", "--out", "o"),
                            "INPUT ERROR: 's3://' names nothing after 's3://' (a bucket, host or path)"),
    "input: empty bucket, three slashes": (
        ("audit", "s3:///", "--out", "o"),
        "INPUT ERROR: 's3:///' names nothing after 's3://' (a bucket, host or path)"),
    "input: empty bucket among files": (
        ("audit", "x.jsonl", "s3://", "--out", "o"),
        "INPUT ERROR: 's3://' names nothing after 's3://' (a bucket, host or path)"),
    "input: a glob over bucket names": (("audit", "s3://*", "--out", "o"),
                                        "INPUT ERROR: cannot list input 's3://*': …"),
    "input: a glob in the bucket name": (("audit", "s3://b*/x.jsonl", "--out", "o"),
                                         "INPUT ERROR: cannot list input 's3://b*/x.jsonl': …"),
    "input: bare http": (("audit", "http://", "--out", "o"),
                         "INPUT ERROR: 'http://' names nothing after 'http://' (a bucket, host or path)"),
    "input: bare scheme without //": (("audit", "s3:", "--out", "o"),
                                      "INPUT ERROR: input 's3:' does not exist"),
    "input: unknown scheme": (("audit", "foo://x/y.jsonl", "--out", "o"),
                              "INPUT ERROR: cannot use foo:// URIs: Protocol not known: foo"),
    "input: scheme not installed": (("audit", "gs://bucket/x.jsonl", "--out", "o"),
                                    "INPUT ERROR: cannot use gs:// URIs: …"),
    "input: scheme that needs arguments": (("audit", "github://x.jsonl", "--out", "o"),
                                           "INPUT ERROR: cannot use github:// URIs: …"),
    "input: scheme that needs a host": (
        ("audit", "ftp://h/x.jsonl", "--out", "o"),
        "INPUT ERROR: cannot use ftp:// URIs: its filesystem needs host, which frayproof-audit"
        " does not pass"),
    "input: scheme that wraps another": (
        ("audit", "dir://x/y.jsonl", "--out", "o"),
        "INPUT ERROR: cannot use dir:// URIs: the filesystem wraps another one, which a URI alone"
        " does not name"),
    "input: generic wrapper": (("audit", "generic://x/y.jsonl", "--out", "o"),
                               "INPUT ERROR: cannot use generic:// URIs: the filesystem wraps …"),
    "input: local:// of a host": (("audit", "local://h/x.jsonl", "--out", "o"),
                                  "INPUT ERROR: 'local://h/x.jsonl': a local:// URI must name a local path"
                                  " (local:///path)"),
    "input: not a filesystem URI": (("audit", "data://abc", "--out", "o"),
                                    "INPUT ERROR: cannot list input 'data://abc': …"),
    "input: host that refuses": (("audit", f"http://{DEAD}/x.jsonl", "--out", "o"),
                                 f"INPUT ERROR: cannot list input 'http://{DEAD}/x.jsonl': …"),
    "out: empty bucket": (("audit", "x.jsonl", "--out", "s3://"),
                          "OUTPUT ERROR: 's3://' names nothing after 's3://' (a bucket, host or path)"),
    "out: http": (("audit", "x.jsonl", "--out", f"http://{DEAD}/ds"),
                  f"OUTPUT ERROR: --out 'http://{DEAD}/ds': http:// cannot be written, and a dataset is"
                  " written (a local folder, s3://, gs:// or abfs://)"),
    "out: https": (("audit", "x.jsonl", "--out", f"https://{DEAD}/ds"),
                   f"OUTPUT ERROR: --out 'https://{DEAD}/ds': https:// cannot be written, and a dataset"
                   " is written (a local folder, s3://, gs:// or abfs://)"),
    "out: zip": (("audit", "x.jsonl", "--out", "zip://ds"),
                 "OUTPUT ERROR: --out 'zip://ds': zip:// cannot be written, and a dataset is written"
                 " (a local folder, s3://, gs:// or abfs://)"),
    "out: unknown scheme": (("audit", "x.jsonl", "--out", "foo://x"),
                            "OUTPUT ERROR: cannot use foo:// URIs: Protocol not known: foo"),
    "out: scheme not installed": (("audit", "x.jsonl", "--out", "gs://b/ds"),
                                  "OUTPUT ERROR: cannot use gs:// URIs: …"),
    "repair-out: s3": (("audit", "x.jsonl", "--out", "o", "--repair-out", "s3://b/r"),
                       "INPUT ERROR: --repair-out 's3://b/r' is a URI: repaired snapshots are written to"
                       " a local folder (for a local folder of that name, write ./s3://b/r)"),
    "repair-out: http": (("audit", "x.jsonl", "--out", "o", "--repair-out", f"http://{DEAD}/r"),
                         f"INPUT ERROR: --repair-out 'http://{DEAD}/r' is a URI: …"),
    "repair-out: file URI of a host": (
        ("audit", "x.jsonl", "--out", "o", "--repair-out", "file://host/r"),
        "INPUT ERROR: --repair-out 'file://host/r': a file:// URI must name a local path (file:///path)"),
    "stats: empty bucket": (("stats", "s3://"),
                            "INPUT ERROR: 's3://' names nothing after 's3://' (a bucket, host or path)"),
    "trend: empty bucket": (("trend", "s3://"),
                            "INPUT ERROR: 's3://' names nothing after 's3://' (a bucket, host or path)"),
    "report: empty bucket": (("report", "s3://", "-o", "r.html"),
                             "INPUT ERROR: 's3://' names nothing after 's3://' (a bucket, host or path)"),
    "stats: host that refuses": (("stats", f"http://{DEAD}/ds"),
                                 f"INPUT ERROR: cannot read dataset 'http://{DEAD}/ds': …"),
    "stats: unknown scheme": (("stats", "foo://x"),
                              "INPUT ERROR: cannot use foo:// URIs: Protocol not known: foo"),
}


def _check(stderr: str, expected: str) -> None:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip("\n").splitlines()
    assert len(lines) == 1, stderr
    if expected.endswith("…"):
        assert lines[0].startswith(expected[:-1]), stderr
    else:
        assert lines[0] == expected


@pytest.mark.parametrize("case", list(CASES))
def test_each_scheme_edge_case_is_one_line_and_exit_2(case: str, tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_bytes(RECORD + b"\n")
    args, expected = CASES[case]
    done = run_cli(*args, expect=2, cwd=tmp_path)
    _check(done.stderr, expected)
    assert sorted(os.listdir(tmp_path)) == ["x.jsonl"]  # no `o/`, no `s3:/`, no crash log folder


@pytest.mark.parametrize("case", ["input: empty bucket", "out: http"])
def test_the_issue_reproducers_as_processes(case: str, tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_bytes(RECORD + b"\n")
    args, expected = CASES[case]
    done = run_cli(*args, expect=2, real=True, cwd=tmp_path)
    _check(done.stderr, expected)
    assert sorted(os.listdir(tmp_path)) == ["x.jsonl"]


def test_a_file_uri_repair_out_is_the_local_folder(tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "corpus" / "2025-06-02" / "compactions.jsonl", tmp_path / "logs.jsonl")
    repaired = tmp_path / "fixed"
    run_cli("audit", "logs.jsonl", "--out", "o", "--repair-out", repaired.as_uri(), "-q", "--no-mutate",
            "--fail-on", "none", "--jobs", "1", cwd=tmp_path)
    assert list(repaired.glob("repaired-*.jsonl"))
    assert not (tmp_path / "file:").exists()


def test_local_uris_are_local_paths(tmp_path: Path) -> None:
    # fsspec's local:// is file://: read and written as local paths, with their guarantees
    (tmp_path / "x.jsonl").write_bytes(RECORD + b"\n")
    done = run_cli("audit", f"local://{tmp_path}/x.jsonl", "--out", f"local://{tmp_path}/o", "-q",
                   "--no-mutate", "--format", "json", cwd=tmp_path)
    assert '"pairs": 1' in done.stdout
    assert (tmp_path / "o" / ".frayproof-audit.lock").is_file()
