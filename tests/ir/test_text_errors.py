"""Malformed jaxpr text raises JaxprSyntaxError at the right place; ill-typed text raises JaxprTypeError.

Each snippet marks the offending position with `§` (removed before parsing): the error must point at
that line and column and say what was expected there.
"""

import pytest

from ir.errors import JaxprSyntaxError, JaxprTypeError, UnsupportedPrimitive
from ir.text import parse_jaxpr, parse_jaxpr_untyped

MARK = "§"
ONE = "{ lambda ; a:f64[3]. let b:f64[3] = "  # a one-equation jaxpr up to its primitive

SYNTAX_ERRORS = [
    # (snippet with § at the error, text the error must contain)
    ("§", "'{'"),
    ("{ §lam ; a:f64[3]. let  in (a,) }", "'lambda'"),
    ("{ lambda ; a:§f65[3]. let  in (a,) }", "unknown dtype 'f65'"),
    ("{ lambda ; a:f64[§x]. let  in (a,) }", "dimension size"),
    ("{ lambda ; a:f64[§-1]. let  in (a,) }", "dimension size"),
    ("{ lambda ; a:f64[3] §let  in (a,) }", "'.'"),
    ("{ lambda ; §1:f64[]. let  in () }", "binder"),
    ("{ lambda ; a:f64[3]. let b:f64[3] §sin a in (b,) }", "'=' after binders"),
    ("{ lambda ; a:f64[]. let b:f64[] = §[x=1] a in (b,) }", "primitive name"),
    (ONE + "sin §c in (b,) }", "undefined variable 'c'"),
    (ONE + "sin a in (b,)§", "'}'"),
    (ONE + "sin a in (b,) } §}", "end of text"),
    (ONE + "sin a in (§c,) }", "undefined variable 'c'"),
    (ONE + "sin a in (b §a) }", "','"),
    (ONE + "sin a; §b:f64[3] = cos a in (b,) }", "'b' is bound twice"),
    (ONE + "sin a §@ in (b,) }", "unexpected character '@'"),
    (ONE + "add a §300:u8[] in (b,) }", "u8 literal"),
    (ONE + "add a §1.5:i32[] in (b,) }", "i32 literal"),
    (ONE + "add a §2.0:f64[3] in (b,) }", "scalar type"),
    (ONE + "foo a §1:key<fry>[] in (b,) }", "key<fry> literal"),
    (ONE + "reduce_sum[axes=(0,) §axes=(0,)] a in (b,) }", "param 'axes' given twice"),
    (ONE + "reduce_sum[axes§(0,)] a in (b,) }", "'='"),
    (ONE + "foo[x=§] a in (b,) }", "param value"),
    (ONE + "cond[branches=§(1 2)] a in (b,) }", "jaxprs only"),
    (ONE + "foo[f=§<function f] a in (b,) }", "'>'"),
    (ONE + "foo[s=§'\\N{nope}'] a in (b,) }", "string"),
    (ONE + "jit[name=f jaxpr=§{ lambda c:f64[]; d:f64[3]. let  in (d,) }] a in (b,) }", "constvars"),
    ("{ lambda ; a:f64[3]. let\n    b:f64[3] = sin a\n    c:f64[3] = cos §d\n  in (c,) }", "undefined variable 'd'"),
    ("{ lambda ; a:f64[3]. let\n    b:f64[3] = sin a\n§}", "'in ('"),
    ("let j = §{ lambda ; a:f64[]. let b:f64[] = jit[name=g jaxpr=j] a in (b,) } in\n"
     "{ lambda ; a:f64[]. let b:f64[] = jit[name=g jaxpr=j] a in (b,) }", "'j' refers to itself"),
    ("let j = { lambda ; a:f64[]. let  in (a,) } in\nlet §j = { lambda ; a:f64[]. let  in (a,) } in\n"
     "{ lambda ; a:f64[]. let  in (a,) }", "'j' is defined twice"),
    ("let j = { lambda ; a:f64[]. let  in (a,) } §", "'in'"),
    ("let j = { lambda ; a:f64[]. let  in (a,) §", "unterminated jaxpr"),
]


def _locate(snippet: str) -> tuple[str, int, int]:
    offset = snippet.index(MARK)
    before = snippet[:offset]
    line = before.count("\n") + 1
    column = offset - (before.rfind("\n") + 1) + 1
    return snippet.replace(MARK, ""), line, column


@pytest.mark.parametrize("snippet, says", SYNTAX_ERRORS)
def test_syntax_error_points_at_the_problem(snippet, says):
    text, line, column = _locate(snippet)
    with pytest.raises(JaxprSyntaxError) as info:
        parse_jaxpr(text)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert says in str(err)
    assert err.source_line == text.split("\n")[line - 1]


NESTED_JIT = "{ lambda ; a:f64[]. let b:f64[] = jit[name=f jaxpr="


@pytest.mark.parametrize("text", [
    "{ lambda ; . let a:f64[] = f[x=" + "(" * 5000 + "1" + ")" * 5000 + "] in (a,) }",
    "{ lambda ; . let a:f64[] = f[x=" + "[" * 5000 + "]" * 5000 + "] in (a,) }",
    NESTED_JIT * 5000 + "{ lambda ; a:f64[]. let  in (a,) }" + "] a in (b,) }" * 5000,
])
def test_deep_nesting_is_a_syntax_error_not_a_recursion_error(text):
    with pytest.raises(JaxprSyntaxError, match="nesting deeper"):
        parse_jaxpr(text)


def test_non_string_input_is_a_type_error():
    with pytest.raises(TypeError):
        parse_jaxpr(b"{ lambda ; . let  in () }")


TYPE_ERRORS = [
    # (text, index of the ill-typed equation in its jaxpr, its primitive)
    ("{ lambda ; a:f64[3] b:f64[4]. let c:f64[3] = add a b in (c,) }", 0, "add"),
    ("{ lambda ; a:f64[3]. let b:f64[4] = sin a in (b,) }", 0, "sin"),
    ("{ lambda ; a:f64[3]. let b:f32[3] = sin a in (b,) }", 0, "sin"),
    ("{ lambda ; a:f64[3]. let b:f64[3] = sin a; c:f64[3] = mul b 2:i32[] in (c,) }", 1, "mul"),
    ("{ lambda ; a:f64[3]. let b:f64[] = reduce_sum[axes=(1,) out_sharding=None] a in (b,) }", 0, "reduce_sum"),
    ("{ lambda ; a:f64[3]. let b:f64[3] = jit[name=f jaxpr={ lambda ; c:f64[3]. let\n"
     "    d:f32[3] = sin c in (d,) }] a in (b,) }", 0, "sin"),
]


@pytest.mark.parametrize("text, index, primitive", TYPE_ERRORS)
def test_ill_typed_text_raises_a_type_error_naming_the_equation(text, index, primitive):
    with pytest.raises(JaxprTypeError) as info:
        parse_jaxpr(text)
    assert (info.value.eqn_index, info.value.primitive) == (index, primitive)


def test_a_primitive_without_a_shape_rule_is_refused_typed_and_read_as_declared_untyped():
    text = "{ lambda ; a:f64[3]. let b:f32[7] = my_custom_op[k=1] a in (b,) }"
    with pytest.raises(UnsupportedPrimitive, match="'my_custom_op' has no shape/dtype rule"):
        parse_jaxpr(text)
    closed = parse_jaxpr_untyped(text)
    eqn = closed.eqns[0]
    assert (eqn.primitive, eqn.params, str(eqn.outvars[0].aval)) == ("my_custom_op", {"k": 1}, "f32[7]")
