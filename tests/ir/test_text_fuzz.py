"""Mutated oracle texts: the parser raises only JaxprSyntaxError/JaxprTypeError (or UnsupportedPrimitive for a
name that is no primitive, a mutated one), or succeeds.

A text that still parses must also print, and its printed form must parse and print the same again.
The hypothesis profile (`ci` or `nightly`, see tests/conftest.py) sets the number of examples.
"""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ir.errors import JaxprSyntaxError, JaxprTypeError, UnsupportedPrimitive
from ir.text import parse_jaxpr, print_jaxpr
from tests.ir.test_text_roundtrip import TEXTS

SOURCES = [TEXTS[k] for k in sorted(TEXTS)]
JUNK = ["{", "}", "(", ")", "[", "]", ",", ";", ":", "=", ".", "_", "-", "<", ">", "'", '"', "\\", "\n", " ",
        "in", "let", "lambda", "nan", "inf", "True", "None", "f64[]", ":f64[3]", "key<fry>[]", "1e999", "-0",
        "np.int64(", "jaxpr", "0x", "(1+0j)", "j", "_:f64[] ", "b:f64[] = sin a\n", "{ lambda ; . let  in () }"]


def _span(draw, text: str) -> tuple[int, int]:
    i = draw(st.integers(0, len(text)))
    return i, draw(st.integers(i, min(len(text), i + 40)))


@st.composite
def delete_span(draw, text):
    i, j = _span(draw, text)
    return text[:i] + text[j:]


@st.composite
def insert_junk(draw, text):
    i = draw(st.integers(0, len(text)))
    junk = draw(st.sampled_from(JUNK) | st.text(max_size=4))
    return text[:i] + junk + text[i:]


@st.composite
def swap_tokens(draw, text):
    pieces = re.findall(r"\s+|[^\s]+", text)
    words = [k for k, p in enumerate(pieces) if not p.isspace()]
    if not words:
        return text
    a, b = draw(st.sampled_from(words)), draw(st.sampled_from(words))
    pieces[a], pieces[b] = pieces[b], pieces[a]
    return "".join(pieces)


@st.composite
def duplicate_line(draw, text):
    lines = text.split("\n")
    k = draw(st.integers(0, len(lines) - 1))
    return "\n".join(lines[:k + 1] + lines[k:])


@st.composite
def truncate(draw, text):
    return text[:draw(st.integers(0, len(text)))]


MUTATIONS = [delete_span, insert_junk, swap_tokens, duplicate_line, truncate]


@st.composite
def mutated(draw, mutations=tuple(MUTATIONS), max_steps=3):
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, max_steps))):
        text = draw(draw(st.sampled_from(mutations))(text))
    return text


# Four times the profile's budget per test: thousands of mutated texts in `ci`, tens of thousands nightly.
FUZZ = settings(deadline=None, max_examples=4 * settings.default.max_examples)


def check(text: str) -> None:
    try:
        closed = parse_jaxpr(text)
    except (JaxprSyntaxError, JaxprTypeError, UnsupportedPrimitive):
        return
    printed = print_jaxpr(closed)
    assert print_jaxpr(parse_jaxpr(printed)) == printed


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.__name__)
@FUZZ
@given(data=st.data())
def test_one_kind_of_mutation(mutation, data):
    check(data.draw(mutated(mutations=(mutation,), max_steps=1)))


@FUZZ
@given(text=mutated())
def test_mixed_mutations(text):
    check(text)


@FUZZ
@given(text=st.text(alphabet=st.sampled_from("{}()[],;:=._- \nabf0123456789lambdeintj'<>") | st.characters(),
                    max_size=200))
def test_arbitrary_text(text):
    check(text)
