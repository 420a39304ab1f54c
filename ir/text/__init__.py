"""JAX's jaxpr text format: `parse_jaxpr(text)` and `print_jaxpr(jaxpr)`.

`parse_jaxpr` reads exactly what `str(jax.make_jaxpr(f)(*args))` prints (JAX 0.10.2) and type
checks the result; `print_jaxpr` prints a jaxpr the way JAX does, so for JAX's own texts
`print_jaxpr(parse_jaxpr(t)) == t`. `canonical_text` is the deterministic printed form used for
fingerprints.

Constants: JAX prints a top-level constvar (`{ lambda a:f64[8]; b:f64[8]. ...`) but not its value.
`parse_jaxpr` fills `ClosedJaxpr.consts` with zeros of each constvar's aval (threefry keys: a
trailing axis of two uint32 words) as placeholders; a caller that knows the values (the oracle
fixtures' `consts`) replaces them. Nested jaxprs with constvars are rejected for the same reason.

Limits: nesting deeper than 100 levels, numbers longer than 400 characters, more than 64 dimensions or a
dimension beyond int64, more than 100,000 items in one list (operands, binders, outputs, param elements),
bytes that are not UTF-8 (`decode_source`) and lone surrogates are `JaxprSyntaxError`s at their place;
messages quote an escaped window of at most 120 characters of the source line.

Hidden params: where JAX's printer leaves params out (`broadcast_in_dim`'s `shape`, `dot_general`'s
`None`s, the custom calls' `num_consts=0`), the parser puts them back so `eqn.params` is complete,
and the printer leaves them out again; see `ir.text.eqn_rules`.
"""

from __future__ import annotations

from ir.core import ClosedJaxpr, Jaxpr
from ir.errors import JaxprSyntaxError, JaxprTypeError, UnsupportedPrimitive
from ir.text.parser import Parser
from ir.text.printer import print_jaxpr

__all__ = ["parse_jaxpr", "parse_jaxpr_untyped", "print_jaxpr", "canonical_text", "decode_source"]


def decode_source(data: bytes) -> str:
    """The text of a jaxpr file's bytes, which must be UTF-8: a `JaxprSyntaxError` at the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        line_start = data.rfind(b"\n", 0, e.start) + 1
        column = len(data[line_start:e.start].decode("utf-8", "replace")) + 1
        raise JaxprSyntaxError(f"the text is not valid UTF-8 (byte {data[e.start:e.start + 1]!r}: {e.reason})",
                               line, column, "UTF-8 text") from None


def parse_jaxpr_untyped(text: str) -> ClosedJaxpr:
    """Parse without type checking: raises only `JaxprSyntaxError`."""
    if not isinstance(text, str):
        raise TypeError(f"parse_jaxpr expects the jaxpr text as a str, got {type(text).__name__}")
    parser = Parser(text)
    try:
        return parser.parse()
    except RecursionError:
        raise parser.error("the text nests too deeply to parse") from None


def parse_jaxpr(text) -> ClosedJaxpr:
    """Parse JAX's printed jaxpr text and type check it.

    A live `jax.core.ClosedJaxpr` (what `jax.make_jaxpr(f)(*args)` returns) is converted from its objects
    instead (`ir.from_jax.convert`), to the program its text parses to, with its constants' values.

    Raises `JaxprSyntaxError` (line, column, what was expected) for malformed text and undefined
    names, `JaxprTypeError` when an equation's declared result types disagree with its
    primitive's shape rule, and `UnsupportedPrimitive` for a primitive without a shape rule.
    """
    from ir.jax_convert import convert, is_live_jaxpr

    if is_live_jaxpr(text):
        return convert(text)
    closed = parse_jaxpr_untyped(text)
    from ir.typecheck import typecheck

    try:
        typecheck(closed)
    except (JaxprSyntaxError, JaxprTypeError, UnsupportedPrimitive):
        raise
    except RecursionError:
        raise JaxprTypeError("the jaxpr nests too deeply to type check") from None
    except Exception as e:  # a shape rule that fails on odd input must still give a typed error
        raise JaxprTypeError(f"type checking failed: {type(e).__name__}: {e}") from e
    return closed


def canonical_text(jaxpr: Jaxpr | ClosedJaxpr) -> str:
    """The deterministic printed form of a jaxpr (JAX's text), the basis of fingerprints."""
    return print_jaxpr(jaxpr)
