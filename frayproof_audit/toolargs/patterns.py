"""JSON Schema patterns, read as ECMA-262 regular expressions and matched in bounded time.

`pattern`, `patternProperties` and `propertyNames` come from tool schemas, and tool schemas
come from the logs (a record's own `tools`): under Python's backtracking `re`, `^(a+)+$`
against 34 a's and a '!' ran for minutes. So every pattern is translated from ECMA-262 (the
dialect JSON Schema names) into RE2's syntax and run by RE2 (`google-re2`), whose time is
linear in the text. RE2 cannot express backreferences and lookaround; such a pattern runs on
the `regex` module's backtracking engine with the rest of the call's time budget (`budget`),
and a match that does not finish in it raises `NotJudged`: the call is reported as not judged,
never passed. A pattern in Python-only syntax (inline flags, `\\Z`, `(?P<name>`, possessive
quantifiers) is read as Python's `re` reads it, on the same engine and budget.

ECMA-262's reading, where it differs from Python's `re`: `\\d`, `\\w` and `\\b` are ASCII; `\\s`
is Unicode white space and line terminators; `.` matches any code point but `\\n`, `\\r`,
U+2028 and U+2029; `$` is the end of the text only (not before a final newline); `[]` matches
nothing and `[^]` any code point; `\\uXXXX`, `\\u{X...}`, `\\cX`, `\\0` and `\\p{...}` are
escapes; a surrogate pair escape is one code point (the `u` flag).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from frayproof_audit.toolargs import budget

RE2 = "re2"
BACKTRACKING = "backtracking"

MAX_PATTERN_LENGTH = 64 * 1024
"""A pattern longer than this is an input error: RE2's memory bound would refuse most anyway."""

_LINE_TERMINATORS = (0x0A, 0x0D, 0x2028, 0x2029)
_WHITE_SPACE = (
    (0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
    (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF),
)
"""ECMA-262's WhiteSpace and LineTerminator code points (`\\s`), as sorted ranges."""
_MAX_CODE_POINT = 0x10FFFF
_HEX = frozenset("0123456789abcdefABCDEF")


class PatternError(ValueError):
    """The pattern is not a regular expression (no engine here reads it)."""


class _Untranslatable(Exception):
    """Syntax outside ECMA-262 (Python's own): the pattern is read as Python's `re` reads it."""


def _complement(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    gaps, low = [], 0
    for start, end in ranges:
        if start > low:
            gaps.append((low, start - 1))
        low = end + 1
    if low <= _MAX_CODE_POINT:
        gaps.append((low, _MAX_CODE_POINT))
    return tuple(gaps)


_NOT_WHITE_SPACE = _complement(_WHITE_SPACE)
_NOT_LINE_TERMINATOR = _complement(tuple((c, c) for c in _LINE_TERMINATORS))


@dataclass(frozen=True, slots=True)
class _Dialect:
    """How a translated pattern is spelled for one engine."""

    name: str
    end: str
    """ECMA's `$`: RE2's `$` is the end of the text; Python's needs `\\Z`."""

    def code_point(self, cp: int) -> str:
        char = chr(cp)
        if char.isascii() and (char.isalnum() or char == "_"):
            return char
        if 0x20 <= cp < 0x7F:
            return "\\" + char
        if self.name == RE2:
            return f"\\x{{{cp:X}}}"
        return f"\\x{cp:02X}" if cp <= 0xFF else f"\\u{cp:04X}" if cp <= 0xFFFF else f"\\U{cp:08X}"

    def ranges(self, ranges: tuple[tuple[int, int], ...]) -> str:
        """Class members (no brackets) for code point ranges."""
        return "".join(self.code_point(a) if a == b else f"{self.code_point(a)}-{self.code_point(b)}"
                       for a, b in ranges)


_RE2_DIALECT = _Dialect(RE2, "$")
_BACKTRACKING_DIALECT = _Dialect(BACKTRACKING, "\\Z")


@dataclass(slots=True)
class _Translation:
    """The pattern in one dialect, and why RE2 cannot run it (None: it can, as far as syntax goes)."""

    source: str
    beyond_re2: str | None


class _Translator:
    """One pass over an ECMA-262 pattern, writing it in `dialect`.

    Not a validating parser: the engine that compiles the output reports syntax errors
    (an unbalanced parenthesis, a quantifier with nothing to repeat). It only rewrites what
    reads differently, and names the first construct RE2 cannot run.
    """

    def __init__(self, pattern: str, dialect: _Dialect) -> None:
        self.text = pattern
        self.at = 0
        self.dialect = dialect
        self.out: list[str] = []
        self.beyond_re2: str | None = None
        self.quantified = False

    def beyond(self, what: str) -> None:
        if self.beyond_re2 is None:
            self.beyond_re2 = what

    def peek(self, offset: int = 0) -> str:
        index = self.at + offset
        return self.text[index] if index < len(self.text) else ""

    def translate(self) -> _Translation:
        while self.at < len(self.text):
            quantified, self.quantified = self.quantified, False
            char = self.text[self.at]
            self.at += 1
            if char == "\\":
                self.out.append(self.escape(in_class=False))
            elif char == "[":
                self.out.append(self.char_class())
            elif char == ".":
                self.out.append(f"[{self.dialect.ranges(_NOT_LINE_TERMINATOR)}]")
            elif char == "$":
                self.out.append(self.dialect.end)
            elif char == "(":
                self.out.append(self.group())
            elif char in "*+?":
                if quantified and char == "+":
                    raise _Untranslatable("a possessive quantifier")
                self.out.append(char)
                self.quantified = char != "?" or not quantified
            elif char == "{":
                self.out.append(self.braces())
            elif char in "^|)":
                self.out.append(char)
            else:
                self.out.append(self.dialect.code_point(ord(char)))
        return _Translation("".join(self.out), self.beyond_re2)

    def braces(self) -> str:
        end = self.text.find("}", self.at)
        body = self.text[self.at:end] if end >= 0 else ""
        low, _, high = body.partition(",")
        if end >= 0 and low.isdigit() and (not high or high.isdigit()) and low.isascii() and high.isascii():
            self.at = end + 1
            if max(int(low), int(high or 0)) > 1000:
                self.beyond("a repetition count above 1000")
            self.quantified = True
            return "{" + body + "}"
        return self.dialect.code_point(ord("{"))  # a literal brace (Annex B)

    def group(self) -> str:
        if self.peek() != "?":
            return "("
        head = self.text[self.at:self.at + 3]
        if head.startswith("?:"):
            self.at += 2
            return "(?:"
        for opener, what in (("?=", "a lookahead"), ("?!", "a lookahead"),
                             ("?<=", "a lookbehind"), ("?<!", "a lookbehind")):
            if self.text.startswith(opener, self.at):
                self.at += len(opener)
                self.beyond(what)
                return "(" + opener
        if head.startswith("?<"):
            end = self.text.find(">", self.at)
            name = self.text[self.at + 2:end] if end >= 0 else ""
            if not name.isidentifier() or not name.isascii():
                raise _Untranslatable("a group name")
            self.at = end + 1
            return f"(?P<{name}>"
        raise _Untranslatable(f"'(?{self.peek(1)}'")

    def escape(self, in_class: bool) -> str:
        """The escape after a backslash, in the output dialect."""
        char = self.peek()
        if not char:
            raise PatternError("a backslash at the end of the pattern")
        self.at += 1
        if char in "dDwW":
            return "\\" + char
        if char in "bB" and not in_class:
            return "\\" + char
        if char == "b":
            return self.dialect.code_point(0x08)
        if char in "sS":
            ranges = _WHITE_SPACE if char == "s" else _NOT_WHITE_SPACE
            members = self.dialect.ranges(ranges)
            return members if in_class else f"[{members}]"
        if char in "pP":
            return self.property_escape(char)
        if char in "123456789" and not in_class:
            digits = char
            while self.peek().isdigit() and self.peek().isascii():
                digits += self.peek()
                self.at += 1
            self.beyond("a backreference")
            return "\\" + digits
        if char == "k" and self.peek() == "<" and not in_class:
            end = self.text.find(">", self.at)
            name = self.text[self.at + 1:end] if end >= 0 else ""
            if not name.isidentifier():
                raise _Untranslatable("a named backreference")
            self.at = end + 1
            self.beyond("a backreference")
            return f"(?P={name})"
        return self.dialect.code_point(self.code_point_escape(char))

    def code_point_escape(self, char: str) -> int:
        """The code point of a character escape (`\\n`, `\\x41`, `\\u00e9`, `\\cJ`, `\\/`)."""
        simple = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D}
        if char in simple:
            return simple[char]
        if char == "0" and not (self.peek().isdigit() and self.peek().isascii()):
            return 0
        if char == "c" and self.peek().isascii() and self.peek().isalpha():
            self.at += 1
            return ord(self.text[self.at - 1]) % 32
        if char == "x" and self._hex(2):
            return self._take_hex(2)
        if char == "u":
            return self.unicode_escape()
        if char.isascii() and char.isalnum():
            raise _Untranslatable(f"'\\{char}'")  # Python's \A, \Z, \a, \N, \U, octal escapes
        return ord(char)  # an identity escape: `\/`, `\.`, `\-`, a non-ASCII character

    def unicode_escape(self) -> int:
        if self.peek() == "{":
            end = self.text.find("}", self.at)
            body = self.text[self.at + 1:end] if end >= 0 else ""
            if not body or any(c not in _HEX for c in body) or int(body, 16) > _MAX_CODE_POINT:
                raise PatternError("a \\u{...} escape that is not a code point")
            self.at = end + 1
            return int(body, 16)
        if not self._hex(4):
            raise _Untranslatable("'\\u' without four hex digits")
        cp = self._take_hex(4)
        if 0xD800 <= cp <= 0xDBFF and self.text.startswith("\\u", self.at):
            self.at += 2
            if self._hex(4):
                low = int(self.text[self.at:self.at + 4], 16)
                if 0xDC00 <= low <= 0xDFFF:
                    self.at += 4
                    return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
            self.at -= 2
        if 0xD800 <= cp <= 0xDFFF:
            self.beyond("a lone surrogate")
        return cp

    def _hex(self, count: int) -> bool:
        digits = self.text[self.at:self.at + count]
        return len(digits) == count and all(c in _HEX for c in digits)

    def _take_hex(self, count: int) -> int:
        value = int(self.text[self.at:self.at + count], 16)
        self.at += count
        return value

    def property_escape(self, char: str) -> str:
        if self.peek() != "{":
            raise _Untranslatable(f"'\\{char}' without braces")
        end = self.text.find("}", self.at)
        if end < 0:
            raise PatternError(f"an unterminated \\{char}{{...}}")
        body = self.text[self.at + 1:end]
        self.at = end + 1
        if self.dialect.name == BACKTRACKING:
            return f"\\{char}{{{body}}}"
        name, _, value = body.partition("=")
        if value and name in ("General_Category", "gc", "Script", "sc"):
            body = value
        return f"\\{char}{{{body}}}"

    def char_class(self) -> str:
        negated = self.peek() == "^"
        if negated:
            self.at += 1
        members: list[str] = []
        while True:
            char = self.peek()
            if not char:
                raise PatternError("an unterminated character class")
            self.at += 1
            if char == "]":
                break
            if char == "\\":
                members.append(self.escape(in_class=True))
            elif char == "-" and members and self.peek() not in ("]", ""):
                members.append("-")
            else:
                members.append(self.dialect.code_point(ord(char)))
        if not members:  # `[]` never matches; `[^]` matches any code point
            every = self.dialect.ranges(((0, _MAX_CODE_POINT),))
            return f"[{every}]" if negated else f"[^{every}]"
        return "[" + ("^" if negated else "") + "".join(members) + "]"


@dataclass(frozen=True, slots=True, eq=False)
class Pattern:
    """A compiled pattern: `search(text)` answers whether it matches anywhere in `text`."""

    source: str
    engine: str
    """`re2` (linear time) or `backtracking` (bounded by the call's time budget)."""
    reason: str | None
    """Why the backtracking engine runs it (a backreference, a lookahead, ...), or None."""
    _search: Callable[..., Any] = field(repr=False)
    _fallback: Callable[[], Pattern] | None = field(default=None, repr=False)

    def search(self, text: str) -> bool:
        if self.engine == RE2:
            try:
                return bool(self._search(text))
            except UnicodeEncodeError:  # a lone surrogate, which RE2's UTF-8 cannot hold
                assert self._fallback is not None
                return self._fallback().search(text)
        what = f"matching {self.describe()}"
        try:
            return self._search(text, timeout=budget.remaining(what)) is not None
        except TimeoutError:
            raise budget.NotJudged(budget.out_of_time(what)) from None

    def describe(self) -> str:
        return f"pattern {self.source!r} ({self.reason}: beyond RE2)"


def _re2_options() -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True  # only "does it match" is asked
    return options


_RE2_OPTIONS: list[Any] = []
_LOCK = threading.Lock()


def _re2_compile(source: str) -> Callable[[str], bool]:
    """RE2's search, as a yes/no. The binding's `search` builds a match object through a
    Python generator (about 10 µs a call, 40 times Python's `re` on a short text); its
    compiled `_regexp.Match` answers in about 1 µs, so it is used when the binding has it."""
    import re2

    with _LOCK:
        if not _RE2_OPTIONS:
            _RE2_OPTIONS.append(_re2_options())
    compiled = re2.compile(source, _RE2_OPTIONS[0])
    regexp = getattr(compiled, "_regexp", None)
    anchor = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    if regexp is None or anchor is None or not hasattr(regexp, "Match"):
        return lambda text: compiled.search(text) is not None
    match = regexp.Match

    def search(text: str) -> bool:
        encoded = text.encode("utf-8")
        return bool(match(anchor, encoded, 0, len(encoded))[0][0] != -1)

    return search


def _backtracking(source: str, translated: bool) -> Callable[..., Any]:
    import regex

    flags = regex.V0 | (regex.ASCII if translated else 0)
    try:
        return regex.compile(source, flags).search  # type: ignore[no-any-return]
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise PatternError(str(exc)) from None


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str, force_backtracking: bool = False) -> Pattern:
    """`pattern` compiled for RE2 when RE2 can run it, else for the backtracking engine.

    Raises `PatternError` when no engine reads it. `force_backtracking` is for tests: both
    engines must read a translated pattern the same way.
    """
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternError(f"longer than {MAX_PATTERN_LENGTH} characters")
    try:
        fast = _Translator(pattern, _RE2_DIALECT).translate()
        slow = _Translator(pattern, _BACKTRACKING_DIALECT).translate()
    except _Untranslatable as exc:
        return Pattern(pattern, BACKTRACKING, f"Python syntax, {exc}", _backtracking(pattern, False))

    def fallback() -> Pattern:
        return compile_pattern(pattern, True)

    reason = fast.beyond_re2
    if reason is None and not force_backtracking:
        try:
            return Pattern(pattern, RE2, None, _re2_compile(fast.source), fallback)
        except Exception as exc:  # re2.error: RE2 cannot compile it (limits, a name it lacks)
            reason = f"RE2 cannot compile it: {_message(exc)}"
    search = _backtracking(slow.source, True)
    return Pattern(pattern, BACKTRACKING, reason or "forced", search)


def _message(exc: Exception) -> str:
    text = exc.args[0] if exc.args else exc
    return text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)


def pattern_problem(pattern: Any) -> str | None:
    """Why `pattern` cannot be used as a JSON Schema pattern, or None."""
    if type(pattern) is not str:
        return None  # the meta-schema reports the type
    try:
        compile_pattern(pattern)
    except PatternError as exc:
        return f"not a valid pattern {pattern!r}: {exc}"
    return None
