"""Typed errors for user mistakes: each names where the problem is and what was expected."""

from __future__ import annotations


class EqjaxError(Exception):
    """Base of every error eqjax raises on purpose."""


def located(where: str, message: str, column: int, expected: str = "", source_line: str = "") -> str:
    """A syntax error's text: where, what, what was expected, and the source line with a caret."""
    text = f"{where}: {message}"
    if expected:
        text += f" (expected {expected})"
    if source_line:
        text += f"\n  {source_line}\n  {' ' * (column - 1)}^"
    return text


class JaxprSyntaxError(EqjaxError):
    """Malformed jaxpr text: `line` and `column` are 1-based, `expected` says what would fit."""

    def __init__(self, message: str, line: int, column: int, expected: str = "", source_line: str = ""):
        self.line, self.column, self.expected, self.source_line = line, column, expected, source_line
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


class UnsupportedPrimitive(EqjaxError, NotImplementedError):
    """A primitive lacks the rule a stage needs: names the primitive and the missing rule."""

    def __init__(self, primitive: str, rule: str, where: str = ""):
        self.primitive, self.rule = primitive, rule
        hint = f" (add it to {where})" if where else ""
        super().__init__(f"primitive {primitive!r} has no {rule} rule{hint}")
