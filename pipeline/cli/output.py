"""Printing for people: every string that may come from user data is shown as text.

Record ids, roles, titles, paths and quotes come from exports; they must never be read as rich
markup (``[/]`` crashes, ``[bold]`` restyles) nor reach the terminal as escape codes (``\\x1b[2J``
clears it, a lone ``\\r`` overwrites the line, bidi controls reorder it). Every CLI module prints
through this one module: consoles with markup, emoji and highlighting off, control characters
shown as visible escapes, JSON with C1 controls escaped too.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["console", "emit", "emit_json", "error", "plain", "say", "table"]

# C0 controls but tab and newline, DEL, C1 controls, bidi embeddings/overrides/isolates and
# marks, and lone surrogates (they cannot even be encoded to the terminal).
_UNSAFE = "\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f{_UNSAFE}]")
# JSON escapes C0 itself; the rest is valid unescaped JSON but not safe text.
_JSON_UNSAFE = re.compile(f"[{_UNSAFE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(value: object) -> str:
    """``value`` as text safe for a terminal: controls become visible ``\\xNN`` escapes."""
    return _CONTROL.sub(_escape, str(value))


def console(stderr: bool = False) -> Console:
    """A console that never interprets markup, emoji codes or highlights text."""
    return Console(stderr=stderr, markup=False, emoji=False, highlight=False)


def say(text: object, style: str | None = None, stderr: bool = True) -> None:
    """One line (or block) of text, optionally styled as a whole; stderr by default."""
    console(stderr).print(Text(plain(text), style=style or ""), soft_wrap=True)


def emit(text: object) -> None:
    """Text on stdout (a command's result)."""
    say(text, stderr=False)


def error(message: str, hint: str | None = None) -> None:
    """``Error: message`` and ``hint: ...`` on stderr."""
    out = console(stderr=True)
    out.print(Text.assemble(("Error: ", "bold red"), plain(message)), soft_wrap=True)
    if hint:
        out.print(Text.assemble("  ", ("hint: ", "dim"), plain(hint)), soft_wrap=True)


def _json_safe(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _finite(value: Any) -> Any:
    """NaN and infinities (no JSON for them) as null, in nested lists and dicts too."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def emit_json(data: Any, indent: int | None = None) -> None:
    """Valid JSON on stdout, written as is (no wrapping), every control character escaped."""
    text = json.dumps(_finite(data), ensure_ascii=False, sort_keys=True, indent=indent,
                      allow_nan=False)
    print(_JSON_UNSAFE.sub(_json_safe, text), flush=True)


def table(title: object, columns: Iterable[str], rows: Iterable[Iterable[object]]) -> Table:
    """A rich table whose title and cells are plain text."""
    grid = Table(*columns, title=Text(plain(title)))
    for row in rows:
        grid.add_row(*(Text(plain(cell)) for cell in row))
    return grid
