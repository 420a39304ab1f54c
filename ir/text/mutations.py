"""Deterministic mutations of jaxpr texts, for fuzzing everything that reads user input.

`mutate(sources, seed)` picks a source text and applies one to three mutations chosen by a
`random.Random(seed)`, so a case is reproduced from its seed alone. A mutated text is a str or, when
`non_utf8` was among its mutations, the bytes a file would hold; `decode_source` turns those into text
the way the command line reads a file.

| mutation         | what it does                                                              |
|------------------|---------------------------------------------------------------------------|
| `byte_flip`      | one character replaced by a random character (ASCII or not)               |
| `delete_span`    | up to 40 characters removed                                               |
| `duplicate_span` | up to 80 characters repeated in place                                     |
| `splice`         | a span of another source text inserted                                    |
| `huge_integer`   | a number replaced by one of thousands of digits (or 1e999, -0, 2.5)       |
| `deep_nesting`   | thousands of `{`, `(`, `[` or `let x = {` inserted                        |
| `long_operands`  | one operand or dimension repeated thousands of times                      |
| `non_utf8`       | invalid UTF-8 bytes inserted (the result is bytes)                        |
| `surrogate`      | a lone surrogate inserted (in a param value, a name or anywhere)          |
| `ansi_escape`    | terminal escapes and control characters inserted                          |
| `param_swap`     | a param's value replaced by another param's value or a value of any kind  |
| `token_swap`     | two tokens exchanged                                                      |
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

_TOKENS = re.compile(r"\s+|[^\s]+")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_PARAM = re.compile(r"(?<!\w)(\w++)=([^\s\]]+)")
_OPERAND_LINE = re.compile(r"= ([\w\-]+)(\[[^\n]*?\])? (\w+)")
_DIMS = re.compile(r"\[(\d+)")
_SURROGATES = re.compile("([\ud800-\udfff])")
_ANSI = ["\x1b[31m", "\x1b[2J", "\x1b]0;title\x07", "\x07", "\x00", "\r", "\x08", "\x7f", "\u202e", "\t"]
_VALUES = ["1e999", "-1e999", "2.5", "-1", "-99", "99999999999999999999", "True", "None", "nan", "()",
           "(1, 2, 3)", "float64", "int8", "'str'", "f", "(0,)", "((0, 0),)", "{ lambda ; . let  in () }",
           "np.int64(3)", "Precision.HIGHEST", "-0", "0", "(-1,)", "(5, 5)", "[1]"]

Mutation = Callable[[random.Random, str, Sequence[str]], "str | bytes"]


def _span(rng: random.Random, text: str, longest: int) -> tuple[int, int]:
    i = rng.randrange(len(text) + 1)
    return i, min(len(text), i + rng.randint(0, longest))


def byte_flip(rng, text, sources):
    if not text:
        return text
    i = rng.randrange(len(text))
    c = chr(rng.randrange(32, 127)) if rng.random() < 0.7 else chr(rng.randrange(0x80, 0x3000))
    return text[:i] + c + text[i + 1:]


def delete_span(rng, text, sources):
    i, j = _span(rng, text, 40)
    return text[:i] + text[j:]


def duplicate_span(rng, text, sources):
    i, j = _span(rng, text, 80)
    return text[:j] + text[i:j] + text[j:]


def splice(rng, text, sources):
    other = rng.choice(sources)
    a, b = _span(rng, other, 200)
    i = rng.randrange(len(text) + 1)
    return text[:i] + other[a:b] + text[i:]


def huge_integer(rng, text, sources):
    numbers = list(_NUMBER.finditer(text))
    digits = rng.choice([5000, 20000, 100000])
    big = rng.choice(["9" * digits, "-" + "1" * digits, "1e999", "-1e999", "2.5", "-0", "4294967296",
                      "1" + "0" * 400 + ".5", "0." + "1" * digits])
    if not numbers:
        return text + big
    m = rng.choice(numbers)
    return text[:m.start()] + big + text[m.end():]


def deep_nesting(rng, text, sources):
    opener = rng.choice(["{", "(", "[", "{ lambda ; . let ", "let x = { lambda ; . let  in () } in ", "<"])
    n = rng.choice([200, 2000, 20000])
    i = rng.randrange(len(text) + 1)
    closer = {"{": "}", "(": ")", "[": "]", "<": ">"}.get(opener[0], "")
    tail = closer * n if rng.random() < 0.5 else ""
    return text[:i] + opener * n + tail + text[i:]


def long_operands(rng, text, sources):
    n = rng.choice([1000, 10000, 100000])
    m = rng.choice(list(_OPERAND_LINE.finditer(text)) or [None])
    if m is not None and rng.random() < 0.6:
        return text[:m.end()] + (" " + m.group(3)) * n + text[m.end():]
    dims = list(_DIMS.finditer(text))
    if dims:
        d = rng.choice(dims)
        return text[:d.end()] + ("," + d.group(1)) * n + text[d.end():]
    return text + " a" * n


def non_utf8(rng, text, sources):
    """Bytes that are not UTF-8, held in the text as surrogate escapes until `mutate` encodes it."""
    i = rng.randrange(len(text) + 1)
    junk = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80", b"\xfe\xff", b"\xf8\x88\x80\x80\x80"])
    return text[:i] + junk.decode("utf-8", "surrogateescape") + text[i:]


def surrogate(rng, text, sources):
    s = chr(rng.randrange(0xD800, 0xE000))
    params = list(_PARAM.finditer(text))
    if params and rng.random() < 0.6:
        m = rng.choice(params)
        value = rng.choice([f"'{s}'", s, f"a{s}b"])
        return text[:m.start(2)] + value + text[m.end(2):]
    i = rng.randrange(len(text) + 1)
    return text[:i] + s + text[i:]


def ansi_escape(rng, text, sources):
    i = rng.randrange(len(text) + 1)
    return text[:i] + rng.choice(_ANSI) + text[i:]


def param_swap(rng, text, sources):
    params = list(_PARAM.finditer(text))
    if not params:
        return text
    m = rng.choice(params)
    if rng.random() < 0.4:
        value = rng.choice(params).group(2)
    elif rng.random() < 0.5:
        value = rng.choice(_VALUES)
    else:
        all_params = [p.group(2) for src in rng.sample(list(sources), min(5, len(sources)))
                      for p in _PARAM.finditer(src)]
        value = rng.choice(all_params or _VALUES)
    if rng.random() < 0.15:  # an unknown param name
        return text[:m.start(1)] + rng.choice(["foo", "y", "axes", "shape"]) + text[m.end(1):]
    return text[:m.start(2)] + value + text[m.end(2):]


def token_swap(rng, text, sources):
    pieces = _TOKENS.findall(text)
    words = [k for k, p in enumerate(pieces) if not p.isspace()]
    if len(words) < 2:
        return text
    a, b = rng.sample(words, 2)
    pieces[a], pieces[b] = pieces[b], pieces[a]
    return "".join(pieces)


MUTATIONS: dict[str, Mutation] = {f.__name__: f for f in (
    byte_flip, delete_span, duplicate_span, splice, huge_integer, deep_nesting, long_operands, non_utf8,
    surrogate, ansi_escape, param_swap, token_swap)}


def _encode(piece: str) -> str:
    """UTF-8 bytes (as latin-1 characters) of a piece; surrogates become the invalid bytes they stand for."""
    if _SURROGATES.fullmatch(piece):
        c = ord(piece)
        data = bytes([c - 0xDC00]) if 0xDC80 <= c <= 0xDCFF else piece.encode("utf-8", "surrogatepass")
        return data.decode("latin-1")
    return piece.encode("utf-8").decode("latin-1")


def mutate(sources: Sequence[str], seed: int, max_steps: int = 3) -> tuple[str | bytes, list[str]]:
    """A mutated text from `sources` and the names of the mutations applied, determined by `seed`."""
    rng = random.Random(seed)
    text: str | bytes = rng.choice(sources)
    names = []
    steps = 1 if rng.random() < 0.6 else rng.randint(2, max_steps)  # one mutation often leaves text that parses
    for _ in range(steps):
        name = rng.choice(sorted(MUTATIONS))
        text = MUTATIONS[name](rng, text, sources)
        names.append(name)
    if "non_utf8" in names:
        text = "".join(_encode(piece) for piece in _SURROGATES.split(text)).encode("latin-1")
    return text, names
