"""Where inputs and datasets live: a local path, or a URI of an fsspec filesystem.

A name is a URI only when it starts with `scheme://` (`s3://bucket/logs`, `gs://…`,
`abfs://…`). Anything else is a local path, colons included (`audit:2025-06-02/` is a folder of
that name). `file:///abs/path` is the local path `/abs/path` and gets every local guarantee
(locks, atomic renames). Other URIs go through fsspec, which finds credentials where the
filesystem's own tools do (for S3: `AWS_*` environment variables, `~/.aws/`, instance roles;
`AWS_ENDPOINT_URL` for S3-compatible stores); they are never taken from the command line.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import unquote, urlsplit

from frayproof_audit.errors import InputError

URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "abfs": "azure", "az": "azure",
           "abfss": "azure"}


class LocationError(InputError):
    """A URI names a filesystem that cannot be used here (exit 2)."""


def is_uri(text: str) -> bool:
    return URI.match(text) is not None


def scheme(text: str) -> str:
    return text.split("://", 1)[0].lower()


def local_path(text: str) -> str | None:
    """The local path a name stands for: itself, or the path of a `file://` URI; None for any
    other URI."""
    if not is_uri(text):
        return text
    if scheme(text) != "file":
        return None
    parts = urlsplit(text)
    if parts.netloc not in ("", "localhost"):
        raise LocationError(f"'{text}': a file:// URI must name a local path (file:///path)")
    return unquote(parts.path) or "/"


def filesystem(uri: str) -> tuple[Any, str]:
    """(fsspec filesystem, path inside it) for a URI; the filesystem is cached per protocol."""
    protocol = scheme(uri)
    fs = _filesystem(protocol)
    return fs, fs._strip_protocol(uri)


@lru_cache(maxsize=16)
def _filesystem(protocol: str) -> Any:
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec is a dependency
        raise LocationError(f"{protocol}:// needs fsspec: pip install fsspec") from None
    extra = _EXTRAS.get(protocol)
    hint = f" (pip install 'frayproof-audit[{extra}]')" if extra else ""
    try:
        return fsspec.filesystem(protocol)
    except ImportError as exc:
        raise LocationError(f"cannot use {protocol}:// URIs: {exc}{hint}") from None
    except (ValueError, OSError) as exc:
        raise LocationError(f"cannot use {protocol}:// URIs: {exc}") from None


def join(base: str, *parts: str) -> str:
    """`base/part/...` for a URI (always `/`, whatever the local separator)."""
    return "/".join([base.rstrip("/"), *(part.strip("/") for part in parts)])


def full_uri(uri_like: str, path: str) -> str:
    """`path` (as the filesystem of `uri_like` names it) as a full URI with the same scheme."""
    return f"{scheme(uri_like)}://{path.lstrip('/')}"
