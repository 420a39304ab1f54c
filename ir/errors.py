"""Typed errors for user mistakes: each names where the problem is and what was expected."""

from __future__ import annotations


class EqjaxError(Exception):
    """Base of every error eqjax raises on purpose."""


MESSAGE_CHARS = 300  # an error message quotes at most this much of what it is about
WINDOW_CHARS = 120  # and at most this much of the source line around the column


def escaped(text: str) -> str:
    """`text` with control characters, terminal escapes and lone surrogates shown as `repr` shows them."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def clipped(text: str, limit: int = MESSAGE_CHARS) -> str:
    """`text` escaped and cut to about `limit` characters, keeping its start and end around a '…'."""
    if len(text) > limit:
        text = text[:limit // 2] + "…" + text[len(text) - limit // 2:]
    return escaped(text)


def source_window(line: str, column: int, width: int = WINDOW_CHARS) -> tuple[str, int]:
    """At most `width` characters of `line` around the 1-based `column`, escaped, with '…' where cut,
    and the 1-based column of the same character in that window."""
    start = max(0, min(column - 1 - width // 2, len(line) - width))
    end = min(len(line), start + width)
    before, after = escaped(line[start:column - 1]), escaped(line[column - 1:end])
    head, tail = ("…" if start > 0 else ""), ("…" if end < len(line) else "")
    return head + before + after + tail, len(head) + len(before) + 1


def located(where: str, message: str, column: int, expected: str = "", source_line: str = "") -> str:
    """A syntax error's text: where, what, what was expected, and a window of the source line with a caret."""
    text = f"{where}: {clipped(message)}"
    if expected:
        text += f" (expected {clipped(expected)})"
    if source_line:
        window, caret = source_window(source_line, column)
        text += f"\n  {window}\n  {' ' * (caret - 1)}^"
    return text


class JaxprSyntaxError(EqjaxError):
    """Malformed jaxpr text: `line` and `column` are 1-based, `expected` says what would fit."""

    def __init__(self, message: str, line: int, column: int, expected: str = "", source_line: str = ""):
        self.line, self.column, self.expected = line, column, expected
        self.source_line = source_window(source_line, column)[0] if source_line else ""
        super().__init__(located(f"line {line}, column {column}", message, column, expected, source_line))


class JaxprTypeError(EqjaxError):
    """An ill-typed jaxpr: which equation, which primitive, expected vs actual avals."""

    def __init__(self, message: str, eqn_index: int | None = None, primitive: str | None = None,
                 expected=None, actual=None):
        self.eqn_index, self.primitive, self.expected, self.actual = eqn_index, primitive, expected, actual
        self.detail = message
        where = ""
        if eqn_index is not None:
            where = f"equation {eqn_index}" + (f" ({primitive})" if primitive else "") + ": "
        elif primitive:
            where = f"{primitive}: "
        text = where + message
        if expected is not None or actual is not None:
            text += f"; expected {expected}, got {actual}"
        super().__init__(text)


class JaxprEvalError(JaxprTypeError):
    """A type-checked equation its implementation cannot run on these operands or params (a shape too big
    to allocate, an index out of range, params the type checker cannot see are inconsistent, ...)."""


class UnsupportedEvaluation(JaxprEvalError, NotImplementedError):
    """An implementation that does not support a param value or operand dtype of a type-checked equation
    (`svd[algorithm=JACOBI]` on CPU): still a NotImplementedError for callers that skip what is unsupported."""


class UnsupportedPrimitive(EqjaxError, NotImplementedError):
    """A primitive lacks the rule a stage needs: names the primitive and the missing rule."""

    def __init__(self, primitive: str, rule: str, where: str = ""):
        self.primitive, self.rule = primitive, rule
        hint = f" (add it to {where})" if where else ""
        super().__init__(f"primitive {primitive!r} has no {rule} rule{hint}")
