"""Tokens of JAX's jaxpr text.

The token kinds are context free; the parser decides what a name means where it stands
(`in` is a keyword before the output tuple and a variable elsewhere, `nan` a literal before `:f64[]`).

| kind      | examples                                                                    |
|-----------|-----------------------------------------------------------------------------|
| `name`    | `a`, `_`, `scatter-add`, `Precision.HIGHEST`, `np.int64`, `key<fry>`, `nan` |
| `number`  | `3`, `-1`, `0.95`, `-0.0`, `1e-05`, `-inf`, `0j`, `-2.5j`                   |
| `complex` | `(1+0j)`, `(-0-1j)`, `(nan+infj)`                                           |
| `string`  | `'mosaic'`, `"it's"`                                                        |
| `angle`   | `<lambda>`, `<function nothing_saveable at 0xXXXXXXXXXXXX>`                 |
| `punct`   | `{ } ( ) [ ] , ; : = .`                                                     |
| `eof`     | end of the text                                                             |
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ir.errors import JaxprSyntaxError

_NUM = r"(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|inf|nan)"
_TOKEN = re.compile(
    rf"(?P<complex>\(-?{_NUM}[-+]{_NUM}j\))"
    r"|(?P<number>(?:-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|-inf|-nan)j?(?![\w.]))"
    r"|(?P<name>[A-Za-z_]\w*(?:[.\-][A-Za-z_]\w*)*(?:<\w+>)?)"
    r"|(?P<string>'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")"
    r"|(?P<punct>[{}()\[\],;:=.])"
)
_SPACE = re.compile(r"[ \t\r\n]*")
_SURROGATE = re.compile("[\ud800-\udfff]")
# JAX prints no number longer than a float64 or complex128 repr; far longer ones are rejected before any
# int()/float() sees them (Python refuses int strings of more than 4,300 digits, and big ones are slow).
MAX_NUMBER_CHARS = 400


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    start: int  # offset of the first character
    end: int
    space_before: bool  # whitespace (or the start of the text) separates it from the previous token
    line_start: bool  # first token of its line

    def is_(self, kind: str, text: str | None = None) -> bool:
        return self.kind == kind and (text is None or self.text == text)


class Source:
    """The text being parsed: offsets to 1-based (line, column) and error construction."""

    def __init__(self, text: str):
        self.text = text
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self._line_starts[lo] + 1

    def error(self, message: str, offset: int, expected: str = "") -> JaxprSyntaxError:
        line, column = self.position(offset)
        start = self._line_starts[line - 1]
        end = self.text.find("\n", start)
        source_line = self.text[start:end if end >= 0 else len(self.text)]
        return JaxprSyntaxError(message, line, column, expected, source_line)


def tokenize(src: Source) -> list[Token]:
    return list(iter_tokens(src))


def iter_tokens(src: Source) -> Iterator[Token]:
    """The tokens of the text, made as the parser asks for them (an error early in a huge text stops at once);
    the last one is `eof`."""
    text, pos = src.text, 0
    bad = _SURROGATE.search(text)
    if bad:
        raise src.error(f"lone surrogate {bad.group()!r} in the text", bad.start(), "valid Unicode text")
    while True:
        space_end = _SPACE.match(text, pos).end()
        space = space_end > pos or pos == 0
        line_start = pos == 0 or "\n" in text[pos - 1:space_end]
        pos = space_end
        if pos == len(text):
            yield Token("eof", "", pos, pos, True, line_start)
            return
        if text[pos] == "<":
            end = _angle_end(src, pos)
            yield Token("angle", text[pos:end], pos, end, space, line_start)
            pos = end
            continue
        m = _TOKEN.match(text, pos)
        if m is None:
            raise src.error(f"unexpected character {text[pos]!r}", pos, "a name, number, literal or bracket")
        if m.lastgroup in ("number", "complex") and m.end() - pos > MAX_NUMBER_CHARS:
            raise src.error(f"number of {m.end() - pos} characters", pos,
                            f"a number of at most {MAX_NUMBER_CHARS} characters")
        yield Token(m.lastgroup, m.group(), pos, m.end(), space, line_start)
        pos = m.end()


def _angle_end(src: Source, start: int) -> int:
    """End of a `<...>` repr such as `<function f.<locals>.g at 0x...>` (nesting allowed, one line)."""
    depth = 0
    for i in range(start, len(src.text)):
        c = src.text[i]
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == "\n":
            break
    raise src.error("unterminated '<...>' repr", start, "'>'")
