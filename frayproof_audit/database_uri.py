"""Database connection URIs given as inputs (`postgresql://user:pw@host:port/db`).

A database URI names a database a source reads (a LangGraph Postgres checkpointer), not a file:
it is never handed to fsspec. It may carry a password (in its user info, or a `password=` query
parameter), which must never be written or shown: every name a table, a message, the summary
or a crash log holds is `redacted` (`postgresql://user:***@host/db`); only the reader connects
with the URI as given. `redact_text` does the same for free text that may quote a URI (the
command line, an error message, a traceback).
"""

from __future__ import annotations

import re

SCHEMES = frozenset({"postgresql", "postgres"})
"""The schemes libpq (and so psycopg) reads as a connection URI."""
KIND = "postgres"
"""The input kind of a database URI (`expansion.InputFile.kind`)."""
MASK = "***"

_USERINFO = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^ \t\r\n:/?#@'\"]*):(?P<secret>[^ \t\r\n'\"]*)@")
"""A URI's `user:password@` in free text: the password runs to the last `@` of the word (a
password may hold an unescaped `@` or `/`; over-redacting a host is safe, showing a password
is not)."""
_QUERY = re.compile(r"(?P<head>[?&](?:password|sslpassword)=)(?P<secret>[^&\s'\"#]*)", re.IGNORECASE)
_QUERY_ONE = re.compile(r"(?P<head>[?&](?:password|sslpassword)=)(?P<secret>[^&#]*)", re.IGNORECASE)
"""`password=` of one URI: its value runs to the next parameter (or the fragment)."""


def is_database_uri(text: str) -> bool:
    """Whether `text` is a connection URI of a database a source reads (`postgresql://…`)."""
    scheme, separator, _ = text.partition("://")
    return bool(separator) and scheme.lower() in SCHEMES


def redact_text(text: str) -> str:
    """`text` with the password of every URI in it (user info or `password=`) replaced by `***`."""
    if "://" not in text and "password=" not in text.lower():
        return text
    found = _USERINFO.sub(lambda match: f"{match['head']}:{MASK}@", text)
    return _QUERY.sub(lambda match: f"{match['head']}{MASK}", found)


def redacted(uri: str) -> str:
    """The name one URI is shown and stored by: the password of its user info (all between the
    first `:` after the user and the last `@`, whatever it holds) and of `password=` replaced
    by `***`."""
    scheme, separator, rest = uri.partition("://")
    if not separator:
        return redact_text(uri)
    userinfo, at, host = rest.rpartition("@")
    if at and ":" in userinfo:
        rest = f"{userinfo.split(':', 1)[0]}:{MASK}@{host}"
    return _QUERY_ONE.sub(lambda match: f"{match['head']}{MASK}", f"{scheme}://{rest}")


def shown(text: str) -> str:
    """How a command-line word or an input name is stored and shown: a database URI
    `redacted` whole (its password may hold `/` or `@`), any other text by `redact_text`
    (which masks only a `scheme://user:password@` authority, leaving an object-store path such
    as `s3://bucket/a:b@c` as written)."""
    return redacted(text) if is_database_uri(text) else redact_text(text)


def secrets_of(uri: str) -> tuple[str, ...]:
    """The passwords one URI holds, as written (`redacted` masks them)."""
    queried = [match["secret"] for match in _QUERY_ONE.finditer(uri)]
    # A `password=` value may hold `@` or `:`, and a user-info password `&password=`: the
    # user info is read both with and without the query's values; a spurious candidate only
    # masks more.
    masked = _QUERY_ONE.sub(lambda match: f"{match['head']}{MASK}", uri)
    found = [*_userinfo_password(masked), *queried, *_userinfo_password(uri)]
    return tuple(dict.fromkeys(secret for secret in found if secret))


def unmasked(uri: str) -> str | None:
    """A stored name (`redacted`) made a URI to connect with: every masked password left out,
    so that libpq finds the password itself (`PGPASSWORD`, `~/.pgpass`); None when `uri` holds
    a password that is not masked (it is no stored name: connect with it as given)."""
    if secrets_of(uri) != (MASK,):
        return None
    scheme, _, rest = uri.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if at and userinfo.endswith(f":{MASK}"):
        rest = f"{userinfo[:-len(MASK) - 1]}@{host}"
    base, question, query = rest.partition("?")
    if question:
        kept = [part for part in query.split("&") if not _masked_parameter(part)]
        rest = f"{base}?{'&'.join(kept)}" if kept else base
    return f"{scheme}://{rest}"


def _masked_parameter(part: str) -> bool:
    """Whether one `name=value` of a query is a password `redacted` masked."""
    name, _, value = part.partition("=")
    return name.lower() in _PASSWORD_PARAMETERS and value == MASK


_PASSWORD_PARAMETERS = frozenset({"password", "sslpassword"})


def _userinfo_password(uri: str) -> list[str]:
    """The password of `uri`'s user info (to its last `@`), if it has one."""
    _, _, rest = uri.partition("://")
    userinfo, at, _ = rest.rpartition("@")
    return [userinfo.split(":", 1)[1]] if at and ":" in userinfo else []


def scrub(text: str, uri: str) -> str:
    """`text` (a driver's message about `uri`) with `uri`'s passwords, and any URI's, redacted."""
    for secret in sorted(secrets_of(uri), key=len, reverse=True):  # the longest first: no tail left
        if len(secret) >= 3:  # a one- or two-character password would mask every such letter
            text = text.replace(secret, MASK)
    return redact_text(text)
