"""A Wadler–Lindig pretty printer: the layout algorithm of JAX's `jax/_src/pretty_printer.py`.

A document is text, breaks, concatenations, nesting and groups. A group is laid out flat (every
break prints as its text) when the whole group fits in the rest of the line, otherwise its breaks
become newlines indented by the enclosing nesting. Only the part JAX's jaxpr printer uses is here:
no colours and no annotations (JAX prints neither by default), so the layout is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH = 80  # JAX's default `Doc.format(width=80)`


class Doc:
    __slots__ = ()

    def __add__(self, other: Doc) -> Doc:
        return concat([self, other])

    def format(self, width: int = WIDTH) -> str:
        return _format(self, width)


@dataclass(frozen=True, slots=True)
class Text(Doc):
    text: str


@dataclass(frozen=True, slots=True)
class Break(Doc):
    text: str


@dataclass(frozen=True, slots=True)
class Concat(Doc):
    children: tuple[Doc, ...]


@dataclass(frozen=True, slots=True)
class Nest(Doc):
    n: int
    child: Doc


@dataclass(frozen=True, slots=True)
class Group(Doc):
    child: Doc


NIL = Concat(())
_FLAT, _BREAK = False, True


def text(s: str) -> Doc:
    return Text(s)


def brk(s: str = " ") -> Doc:
    """A break: prints as `s` when its group is flat, as a newline otherwise."""
    return Break(s)


def concat(docs: Sequence[Doc]) -> Doc:
    docs = tuple(docs)
    return docs[0] if len(docs) == 1 else Concat(docs)


def nest(n: int, doc: Doc) -> Doc:
    return Nest(n, doc)


def group(doc: Doc) -> Doc:
    return Group(doc)


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
    docs = list(docs)
    if not docs:
        return NIL
    out = [docs[0]]
    for d in docs[1:]:
        out += [sep, d]
    return concat(out)


def _fits(doc: Doc, width: int, indent: int) -> bool:
    """Whether `doc` laid out flat takes at most `width` columns (JAX checks the group alone)."""
    agenda = [(indent, _FLAT, doc)]
    while width >= 0 and agenda:
        i, mode, d = agenda.pop()
        if isinstance(d, Text):
            width -= len(d.text)
        elif isinstance(d, Concat):
            agenda.extend((i, mode, c) for c in reversed(d.children))
        elif isinstance(d, Break):
            if mode is _BREAK:
                return True
            width -= len(d.text)
        elif isinstance(d, Nest):
            agenda.append((i + d.n, mode, d.child))
        elif isinstance(d, Group):
            agenda.append((i, _FLAT, d.child))
    return width >= 0


def _format(doc: Doc, width: int) -> str:
    lines: list[str] = []
    line: list[str] = []
    column = 0
    agenda = [(0, _BREAK, doc)]
    while agenda:
        i, mode, d = agenda.pop()
        if isinstance(d, Text):
            line.append(d.text)
            column += len(d.text)
        elif isinstance(d, Concat):
            agenda.extend((i, mode, c) for c in reversed(d.children))
        elif isinstance(d, Break):
            if mode is _BREAK:
                lines.append("".join(line))
                line, column = [" " * i], i
            else:
                line.append(d.text)
                column += len(d.text)
        elif isinstance(d, Nest):
            agenda.append((i + d.n, mode, d.child))
        elif isinstance(d, Group):
            flat = _fits(d.child, width - column, i)
            agenda.append((i, _FLAT if flat else _BREAK, d.child))
    lines.append("".join(line))
    return "\n".join(lines)
