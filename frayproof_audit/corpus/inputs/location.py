"""Where inputs and datasets live: a local path, or a URI of an fsspec filesystem.

A name is a URI only when it starts with `scheme://` (`s3://bucket/logs`, `gs://…`,
`abfs://…`). Anything else is a local path, colons included (`audit:2025-06-02/` is a folder of
that name). `file:///abs/path` (or fsspec's `local:///abs/path`) is the local path `/abs/path`
and gets every local guarantee (locks, atomic renames). Other URIs go through fsspec, which
finds credentials where the filesystem's own tools do (for S3: `AWS_*` environment variables,
`~/.aws/`, instance roles; `AWS_ENDPOINT_URL` for S3-compatible stores); they are never taken
from the command line.

A URI is refused with one line (exit 2) when it names nothing (`s3://`), when its filesystem is
unknown, not installed, needs more than a URI to be made (`ftp://` its host, `github://` an org,
`dir://` another filesystem), or, for `--out`, cannot be written (`http://`).
"""

from __future__ import annotations

import inspect
import re
from functools import lru_cache
from typing import Any
from urllib.parse import unquote, urlsplit

from frayproof_audit.errors import InputError

URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "abfs": "azure", "az": "azure",
           "abfss": "azure"}


_LOCAL = ("file", "local")
"""Schemes of the local filesystem (fsspec's `local://` is `file://`)."""


class LocationError(InputError):
    """A URI names a filesystem that cannot be used here (exit 2)."""


def is_uri(text: str) -> bool:
    return URI.match(text) is not None


def scheme(text: str) -> str:
    return text.split("://", 1)[0].lower()


def local_path(text: str) -> str | None:
    """The local path a name stands for: itself, or the path of a `file://` (`local://`) URI;
    None for any other URI."""
    if not is_uri(text):
        return text
    protocol = scheme(text)
    if protocol not in _LOCAL:
        return None
    parts = urlsplit(text)
    if parts.netloc not in ("", "localhost"):
        raise LocationError(f"'{text}': a {protocol}:// URI must name a local path ({protocol}:///path)")
    return unquote(parts.path) or "/"


READ_ONLY = frozenset({"data", "git", "github", "http", "https", "libarchive", "reference", "tar",
                       "zip"})
"""fsspec protocols that cannot be written (through `fsspec.filesystem(protocol)`)."""
_WRAPPERS = frozenset({"async_wrapper", "asyncwrapper", "blockcache", "cached", "dask", "dir",
                       "filecache", "generic", "simplecache"})
"""fsspec protocols that wrap another filesystem, which a URI alone does not name."""


def filesystem(uri: str) -> tuple[Any, str]:
    """(fsspec filesystem, path inside it) for a URI; the filesystem is cached per protocol.

    A URI that names nothing (`s3://`: no bucket; fsspec would walk every bucket, or fail) is a
    `LocationError`, and so is a filesystem that is not installed or cannot be made from a
    URI alone."""
    protocol = scheme(uri)
    if not uri.split("://", 1)[1].strip("/"):
        raise LocationError(f"'{uri}' names nothing after '{protocol}://' (a bucket, host or path)")
    fs = _filesystem(protocol)
    return fs, fs._strip_protocol(uri)


def check_writable(uri: str, option: str) -> None:
    """Refuse a URI whose filesystem cannot be written, where something must be (`--out`)."""
    protocol = scheme(uri)
    if protocol in READ_ONLY:
        raise LocationError(f"{option} '{uri}': {protocol}:// cannot be written, and a dataset is"
                            " written (a local folder, s3://, gs:// or abfs://)")


@lru_cache(maxsize=16)
def _filesystem(protocol: str) -> Any:
    try:
        import fsspec  # only for a URI: its import (~90 ms) is no local run's cost
    except ImportError:  # pragma: no cover - fsspec is a dependency
        raise LocationError(f"{protocol}:// needs fsspec: pip install fsspec") from None
    extra = _EXTRAS.get(protocol)
    hint = f" (pip install 'frayproof-audit[{extra}]')" if extra else ""
    try:
        kind = fsspec.get_filesystem_class(protocol)
    except ImportError as exc:
        raise LocationError(f"cannot use {protocol}:// URIs: {_line(exc)}{hint}") from None
    except ValueError as exc:
        raise LocationError(f"cannot use {protocol}:// URIs: {_line(exc)}") from None
    # Made without arguments: one that needs some (ftp's host, github's org) would half-exist,
    # and its destructor print a traceback when collected.
    needed = _required_arguments(kind)
    if needed:
        raise LocationError(f"cannot use {protocol}:// URIs: its filesystem needs {', '.join(needed)},"
                            " which frayproof-audit does not pass")
    if protocol in _WRAPPERS:
        raise LocationError(f"cannot use {protocol}:// URIs: the filesystem wraps another one,"
                            " which a URI alone does not name")
    try:
        return fsspec.filesystem(protocol)
    except ImportError as exc:
        raise LocationError(f"cannot use {protocol}:// URIs: {_line(exc)}{hint}") from None
    except (ValueError, TypeError, OSError) as exc:
        raise LocationError(f"cannot use {protocol}:// URIs: {_line(exc)}") from None


def _required_arguments(kind: Any) -> list[str]:
    """Arguments `kind()` cannot do without (its `__init__`: fsspec's caching metaclass hides them)."""
    parameters = list(inspect.signature(kind.__init__).parameters.values())[1:]  # after self
    return [p.name for p in parameters if p.default is p.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _line(exc: BaseException) -> str:
    """An exception's first line (some, such as libjvm's, span many)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def join(base: str, *parts: str) -> str:
    """`base/part/...` for a URI (always `/`, whatever the local separator)."""
    return "/".join([base.rstrip("/"), *(part.strip("/") for part in parts)])


def full_uri(uri_like: str, path: str) -> str:
    """`path` (as the filesystem of `uri_like` names it) as a full URI with the same scheme."""
    return f"{scheme(uri_like)}://{path.lstrip('/')}"
