"""Bounds on hostile JSON while it streams: nesting depth, record size, lone surrogates.

ijson builds a prefix string per nesting level, so memory grows with depth squared (100,000
nested ``[`` took 24 GB), and ``json`` recurses until ``RecursionError``. :class:`GuardedReader`
sits between the file and ijson and scans each chunk's bytes before ijson sees them:

* **Depth.** Brackets outside strings are counted with C-speed byte operations (escapes
  dropped, then strings, then everything but brackets); only a chunk that nests deeper than
  ``max_depth`` is walked token by token. The too-deep value is replaced in the stream by a
  placeholder string, so ijson never goes deeper; the record holding it is quarantined
  (:func:`~pipeline.importers.settle.settle` finds the placeholder).
* **Size.** A record (array item, or the whole object) larger than ``max_record_bytes`` stops
  the file with :class:`RecordTooLarge` (the bytes already given to ijson cannot be taken back).
* **Lone surrogates.** ijson's C backend turns ``\\ud800`` into ``?`` and ``\\udc80`` into
  invalid UTF-8. A lone surrogate escape is rewritten to a tagged marker that
  :func:`~pipeline.importers.settle.settle` turns into U+FFFD, recording the original code
  point.

:func:`too_deep` serves JSON lines too (``json.loads`` keeps lone surrogates as they are;
``settle`` replaces them the same way).
"""

from __future__ import annotations

import itertools
import re
import secrets
from dataclasses import dataclass, field
from typing import IO

__all__ = [
    "DEFAULT_LIMITS",
    "MAX_DEPTH",
    "MAX_RECORD_BYTES",
    "Edits",
    "GuardedReader",
    "Limits",
    "RecordTooLarge",
    "too_deep",
]

MAX_DEPTH = 128
"""Deepest nesting kept (real exports stay under ~20 levels)."""
MAX_RECORD_BYTES = 256 << 20
"""Largest record (conversation, or JSON line) read into memory."""

_KEEP = b'"[]{}'
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_FOLD = bytes.maketrans(b"{}", b"[]")  # only the depth matters, not the bracket kind
_DELTA = [0] * 256
_DELTA[ord("[")] = 1
_DELTA[ord("]")] = -1
_OUTSIDE = re.compile(rb'"|[\[{]+|[\]}]+')  # a quote, or a run of openers or of closers
_INSIDE = re.compile(rb'["\\]')
# a trailing backslash run, a partial \u escape, or a high surrogate whose low half may follow
_TAIL = re.compile(
    rb"\\+u[dD][89abAB][0-9a-fA-F]{2}(?:\\+(?:u[0-9a-fA-F]{0,3})?)?\Z"
    rb"|\\+(?:u[0-9a-fA-F]{0,3})?\Z"
)
_SURROGATE = re.compile(
    rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    rb"|\\u([dD][89a-fA-F][0-9a-fA-F]{2})"
)
_STRING_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_QUOTE_OR_NUMBER = re.compile(
    rb'"|(?<![0-9.eE+\-])-?[0-9]{19,}(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?'
    rb"|(?<![0-9.eE+\-])-?[0-9]+(?:\.[0-9]+)?[eE][+-]?[0-9]{3,}"
)
_SURROGATE_HINT = re.compile(rb"\\u[dD]")  # a fast literal search, unlike bytes.__contains__
_CHECK_FROM = 1 << 20


@dataclass(frozen=True)
class Limits:
    max_depth: int = MAX_DEPTH
    max_record_bytes: int = MAX_RECORD_BYTES


DEFAULT_LIMITS = Limits()


class RecordTooLarge(ValueError):
    """A record is larger than ``Limits.max_record_bytes``."""

    def __init__(self, limit: int) -> None:
        self.reason = f"record larger than {limit:,} bytes (the limit for one record)"
        super().__init__(self.reason)


@dataclass
class _State:
    depth: int = 0
    in_string: bool = False
    escaped: bool = False
    skip_to: int | None = None  # while cutting a too-deep value: the depth that ends it


def _brackets(chunk: bytes, state: _State) -> bytes:
    """The brackets of ``chunk`` that are outside strings; advances the string state."""
    if state.escaped and chunk:
        chunk = chunk[1:]
    state.escaped = False
    if b"\\" in chunk:
        chunk = chunk.replace(b"\\\\", b"")
        state.escaped = chunk.endswith(b"\\")
        chunk = chunk.replace(b'\\"', b"")
    small = chunk.translate(_FOLD, _DROP).replace(b'""', b"")
    if b'"' in small:
        pieces = small.split(b'"')
        outside = pieces[1::2] if state.in_string else pieces[::2]
        state.in_string ^= bool((len(pieces) - 1) & 1)
        small = b"".join(outside)
    elif state.in_string:  # the whole chunk is inside one string
        return b""
    return small


def _exact(depth: int, brackets: bytes) -> tuple[int, int]:
    running = list(itertools.accumulate(map(_DELTA.__getitem__, brackets), initial=depth))
    return min(running), max(running)


def _extremes(depth: int, brackets: bytes) -> tuple[int, int]:
    """(lowest depth, a bound on the highest) over ``brackets`` (``[``/``]`` only) from
    ``depth``.

    Removing matched ``[]`` pairs pass after pass leaves ``]]..[[``: the lowest point is the
    start minus those closers, and every removed group sits at most ``passes`` above the
    start or the end. Real chunks need a handful of C-speed passes; deep ones are walked.
    """
    rest, passes = brackets, 0
    while b"[]" in rest:
        rest, passes = rest.replace(b"[]", b""), passes + 1
        if passes > 12:
            return _exact(depth, brackets)
    closers = rest.find(b"[")
    closers = len(rest) if closers < 0 else closers
    end = depth + len(rest) - 2 * closers
    return depth - closers, max(depth, end) + passes


def too_deep(text: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether one JSON text nests deeper than ``limit`` (brackets in strings do not count)."""
    if text.count(b"[") + text.count(b"{") <= limit:  # an upper bound on the depth
        return False
    brackets = _brackets(text, _State())
    return _extremes(0, brackets)[1] > limit and _exact(0, brackets)[1] > limit


@dataclass
class Edits:
    """What the reader changed in the stream, until :func:`settle` finds it in a record."""

    token: str = field(default_factory=lambda: secrets.token_hex(8))
    cuts: list[int] = field(default_factory=list)  # file offsets of cut values
    surrogates: int = 0
    numbers: int = 0

    @property
    def cut_text(self) -> str:
        return f"\ue000{self.token}:cut"

    @property
    def number_prefix(self) -> str:
        return f"\ue000{self.token}:num:"

    @property
    def pending(self) -> bool:
        return bool(self.cuts or self.surrogates or self.numbers)


class GuardedReader:
    """A binary reader that bounds depth and record size and tags lone surrogates.

    ``record_depth`` is the depth at which records live: 1 for an array of records, 0 for a
    file that is one record. With ``tag_numbers``, numbers yajl cannot hold (integers beyond
    64 bits, exponents of three digits) are passed as tagged strings that :func:`settle` turns
    back into the exact Python int or float; it walks every token, so it is only for a second
    pass over a file whose first pass hit such a number.
    """

    def __init__(
        self, raw: IO[bytes], limits: Limits, record_depth: int, tag_numbers: bool = False
    ) -> None:
        self.raw, self.limits, self.record_depth = raw, limits, record_depth
        self.tag_numbers = tag_numbers
        self.edits = Edits()
        self._state = _State()
        self._held = b""
        self._offset = 0  # bytes of the file scanned so far
        self._record_bytes = 0

    def tell(self) -> int:
        return self.raw.tell()

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        while True:
            data = self.raw.read(size if size > 0 else 1 << 16)
            chunk = self._held + data
            if not data:
                self._held = b""
                return self._process(chunk) if chunk else b""
            self._held = b""
            start = self._hold_from(chunk)
            chunk, self._held = chunk[:start], chunk[start:]
            out = self._process(chunk) if chunk else b""
            if out:
                return out

    def _hold_from(self, chunk: bytes) -> int:
        """Where the bytes to keep for the next chunk start: an escape (or surrogate pair) or,
        when tagging numbers, a number may go on in the next chunk."""
        start = len(chunk)
        match = _TAIL.search(chunk, max(0, len(chunk) - 16))
        if match is not None:
            start = match.start()
            while start > 0 and chunk[start - 1] == 0x5C:  # the whole backslash run
                start -= 1
        if self.tag_numbers:
            digits = len(chunk) - len(chunk.rstrip(b"0123456789.eE+-"))
            if 0 < digits <= 4096:  # (a longer run is passed on: yajl will refuse it)
                start = min(start, len(chunk) - digits)
        return start

    def _process(self, chunk: bytes) -> bytes:
        if self.tag_numbers:
            chunk = self._tag_numbers(chunk)
        if b"\\" in chunk and _SURROGATE_HINT.search(chunk):
            chunk = self._tag_surrogates(chunk)
        state = self._state
        scan = _State(state.depth, state.in_string, state.escaped, state.skip_to)
        brackets = _brackets(chunk, scan)
        opens = brackets.count(b"[")
        scan.depth = state.depth + 2 * opens - len(brackets)
        self._track_size(len(chunk), state.depth, scan.depth, brackets)
        calm = state.skip_to is None and state.depth + opens <= self.limits.max_depth
        if not calm:
            low, high = _extremes(state.depth, brackets)
            if state.skip_to is not None and low > state.skip_to:  # all inside the cut value
                self._state, self._offset = scan, self._offset + len(chunk)
                return b""
            calm = state.skip_to is None and high <= self.limits.max_depth
        if calm:
            self._state, self._offset = scan, self._offset + len(chunk)
            return chunk
        out = self._cut(chunk)
        self._offset += len(chunk)
        return out

    def _track_size(self, size: int, start: int, end: int, brackets: bytes) -> None:
        """Bytes of the current record; checked per chunk once it passes 1 MiB."""
        self._record_bytes += size
        if end <= self.record_depth:
            self._record_bytes = 0
        elif self._record_bytes > _CHECK_FROM:
            if _extremes(start, brackets)[0] <= self.record_depth:  # a record ended in here
                self._record_bytes = size
            elif self._record_bytes > self.limits.max_record_bytes:
                raise RecordTooLarge(self.limits.max_record_bytes)

    def _tag_numbers(self, chunk: bytes) -> bytes:
        """Numbers outside strings that yajl would refuse, as tagged strings."""
        pos, in_string = (1 if self._state.escaped else 0), self._state.in_string
        tag = b'"\\ue000' + self.edits.token.encode() + b":num:"
        pieces, last = [], 0
        while True:
            if in_string:
                match = _STRING_REST.match(chunk, pos)
                if match is None:
                    break  # the string goes on in the next chunk
                pos, in_string = match.end(), False
                continue
            match = _QUOTE_OR_NUMBER.search(chunk, pos)
            if match is None:
                break
            pos = match.end()
            if match.group() == b'"':
                in_string = True
                continue
            pieces += [chunk[last:match.start()], tag, match.group(), b'"']
            last = pos
            self.edits.numbers += 1
        pieces.append(chunk[last:])
        return b"".join(pieces)

    def _tag_surrogates(self, chunk: bytes) -> bytes:
        tag = b"\\ue000" + self.edits.token.encode()

        def replace(match: re.Match[bytes]) -> bytes:
            if match.group(1) is None:
                return match.group(0)
            self.edits.surrogates += 1
            return tag + match.group(1)

        head = 1 if self._state.escaped else 0
        return chunk[:head] + _SURROGATE.sub(replace, chunk[head:])

    def _cut(self, chunk: bytes) -> bytes:
        """Token walk of one chunk: replace values deeper than the limit by a placeholder."""
        state, pieces = self._state, []
        emit_from: int | None = None if state.skip_to is not None else 0
        pos, end = 0, len(chunk)
        while pos < end:
            if state.escaped:
                state.escaped, pos = False, pos + 1
            elif state.in_string:
                match = _INSIDE.search(chunk, pos)
                if match is None:
                    break
                pos = match.end()
                state.escaped = match.group() == b"\\"
                state.in_string = state.escaped
            else:
                match = _OUTSIDE.search(chunk, pos)
                if match is None:
                    break
                pos, emit_from = match.end(), self._structural(chunk, match, emit_from, pieces)
        if emit_from is not None:
            pieces.append(chunk[emit_from:])
        return b"".join(pieces)

    def _structural(
        self, chunk: bytes, match: re.Match[bytes], emit_from: int | None, pieces: list[bytes]
    ) -> int | None:
        """One token of :meth:`_cut`: a quote, or a run of openers or closers."""
        state, run, at = self._state, match.group(), match.start()
        if run == b'"':
            state.in_string = True
        elif run[0] in b"[{":
            room = self.limits.max_depth - state.depth  # openers that still fit
            state.depth += len(run)
            if state.skip_to is None and len(run) > room:
                assert emit_from is not None
                start = at + room  # the first opener too deep
                pieces += [chunk[emit_from:start], f'"{self.edits.cut_text}"'.encode()]
                self.edits.cuts.append(self._offset + start)
                state.skip_to = self.limits.max_depth
                return None
        else:
            before = state.depth
            state.depth -= len(run)
            if state.skip_to is not None and state.depth <= state.skip_to:
                end = at + before - state.skip_to  # just after the closer that ends the cut
                state.skip_to = None
                return end
        return emit_from
