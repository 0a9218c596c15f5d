"""How kneepoint says things: one place for the command line, the pages and the report.

Labels are the users' own text and may hold anything; what reaches a terminal goes through `printable`.
"""

from __future__ import annotations

import re

# Characters that change what a terminal shows rather than being shown: C0 and C1 controls (escape sequences,
# carriage returns, the bell), and the bidirectional overrides and isolates that reorder the rest of a line.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNPRINTABLE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")


def printable(text: object) -> str:
    """`text` safe to print on a terminal: control and bidi characters shown as escapes (`\\x1b`, `\\u202e`),
    the rest as it is, so a label holding `ESC]0;...` can neither retitle the window nor recolour the output."""
    return _UNPRINTABLE.sub(_escape, str(text))


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    code = ord(c)
    return _NAMED.get(c) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")
