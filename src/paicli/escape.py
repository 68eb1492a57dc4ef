"""Make model- or server-provided text safe to show in a terminal.

Anything that could move the cursor, clear the screen, reorder or hide characters is shown as a
visible escape (`\\x1b`, `\\u202e`), so what the user reads is what the text contains. Newline
and tab stay (they only lay text out); everything else printable passes unchanged. The output
is ASCII-printable wherever the input was not plain text, and escaping it again changes nothing.
"""

from __future__ import annotations

import json
import unicodedata

__all__ = ["json_for_terminal", "one_line", "terminal_safe"]

_KEPT = frozenset("\n\t")

# Letters that render as nothing although their category says "letter" or "mark": they can
# hide text the way zero-width characters do.
_INVISIBLE = frozenset(
    "\u034f"  # combining grapheme joiner
    "\u115f\u1160"  # Hangul choseong/jungseong fillers
    "\u3164"  # Hangul filler
    "\uffa0"  # halfwidth Hangul filler
    "\u17b4\u17b5"  # Khmer inherent vowels
    "\u2800"  # braille blank
    # Variation selectors: invisible, and a run of them can smuggle hidden bytes. VS15/VS16
    # (U+FE0E/U+FE0F) stay: they choose text or emoji style, and emoji use them everywhere.
    + "".join(chr(c) for c in range(0xFE00, 0xFE0E))
    + "".join(chr(c) for c in range(0xE0100, 0xE01F0))
)

# Cc: C0/C1 controls and DEL. Cf: bidi overrides and isolates, zero-width characters, BOM,
# tag characters (invisible ASCII look-alikes). Zl/Zp: line and paragraph separators, which
# some terminals break lines on. Cs: lone surrogates cannot even be encoded for output.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _is_unsafe(char: str) -> bool:
    if char in _KEPT:
        return False
    return char in _INVISIBLE or unicodedata.category(char) in _UNSAFE_CATEGORIES


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _json_escape(char: str) -> str:
    # JSON spells characters beyond the BMP as a surrogate pair.
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def terminal_safe(text: str) -> str:
    """`text` with every control, bidi, invisible-format and separator character shown as an
    escape (`\\x1b`, `\\x9b`, `\\u202e`, `\\U000e0041`); newline and tab are kept."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(char) if _is_unsafe(char) else char for char in text)


def json_for_terminal(value: object, *, indent: int | None = 2) -> str:
    """`value` as JSON (indented, or on one line with `indent=None`) that is safe to print and
    decodes back to `value` exactly: unsafe characters inside strings become `\\uXXXX` escapes,
    which JSON itself understands."""
    text = json.dumps(value, indent=indent, ensure_ascii=False, default=repr)
    # json.dumps already escapes C0 controls and keeps the layout's newlines outside strings,
    # so anything unsafe left over sits inside a string literal, where \\u escapes are valid.
    return "".join(_json_escape(char) if _is_unsafe(char) else char for char in text)


def one_line(text: str, limit: int = 80) -> str:
    """`text` made safe, on one line (whitespace runs collapsed to a space), at most `limit`
    characters, ending with `…` when cut. An escape is never cut in half."""
    pieces: list[str] = []
    length = 0
    pending_space = False
    for char in text:
        if char.isspace() and not _is_unsafe(char):
            pending_space = bool(pieces)
            continue
        piece = _escape(char) if _is_unsafe(char) else char
        if pending_space:
            piece = " " + piece
            pending_space = False
        if length + len(piece) > limit:
            return _cut(pieces, length, limit)
        pieces.append(piece)
        length += len(piece)
    return "".join(pieces)


def _cut(pieces: list[str], length: int, limit: int) -> str:
    # Make room for the ellipsis by dropping whole pieces, so "\\x1b" never becomes "\\x".
    while pieces and length + 1 > limit:
        length -= len(pieces.pop())
    return "".join(pieces).rstrip() + "…" if limit > 0 else ""
