"""JAX's x64 type promotion table (docs.jax.dev/en/latest/type_promotion.html) against `ir.dtypes.promote`."""

import pytest

from ir import dtypes as D

COLUMNS = "b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c8 c16 i* f* c*".split()
# One row per left operand, copied from JAX's published binary promotion table.
TABLE = """
b1  b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c8 c16 i* f* c*
u1  u1 u1 u2 u4 u8 i2 i2 i4 i8 bf f2 f4 f8 c8 c16 u1 f* c*
u2  u2 u2 u2 u4 u8 i4 i4 i4 i8 bf f2 f4 f8 c8 c16 u2 f* c*
u4  u4 u4 u4 u4 u8 i8 i8 i8 i8 bf f2 f4 f8 c8 c16 u4 f* c*
u8  u8 u8 u8 u8 u8 f* f* f* f* bf f2 f4 f8 c8 c16 u8 f* c*
i1  i1 i2 i4 i8 f* i1 i2 i4 i8 bf f2 f4 f8 c8 c16 i1 f* c*
i2  i2 i2 i4 i8 f* i2 i2 i4 i8 bf f2 f4 f8 c8 c16 i2 f* c*
i4  i4 i4 i4 i8 f* i4 i4 i4 i8 bf f2 f4 f8 c8 c16 i4 f* c*
i8  i8 i8 i8 i8 f* i8 i8 i8 i8 bf f2 f4 f8 c8 c16 i8 f* c*
bf  bf bf bf bf bf bf bf bf bf bf f4 f4 f8 c8 c16 bf bf c8
f2  f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f2 f4 f8 c8 c16 f2 f2 c8
f4  f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c8 c16 f4 f4 c8
f8  f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c16 c16 f8 f8 c16
c8  c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c16 c8 c16 c8 c8 c8
"""
SHORT = {"b1": "bool", "u1": "u8", "u2": "u16", "u4": "u32", "u8": "u64", "i1": "i8", "i2": "i16",
         "i4": "i32", "i8": "i64", "bf": "bf16", "f2": "f16", "f4": "f32", "f8": "f64", "c8": "c64",
         "c16": "c128"}
WEAK = {"i*": D.int64, "f*": D.float64, "c*": D.complex128}


def node(name):
    """A table label as the (dtype, weak_type) pair it stands for."""
    return (WEAK[name], True) if name in WEAK else (D.from_short(SHORT[name]), False)


def entries():
    for line in TABLE.strip().splitlines():
        left, *row = line.split()
        for right, want in zip(COLUMNS, row, strict=True):
            yield left, right, want
    for right in COLUMNS:  # the c16 row: everything joins to complex128
        yield "c16", right, "c16"


@pytest.mark.parametrize("left,right,want", list(entries()))
def test_promotion_table(left, right, want):
    assert D.promote(node(left), node(right)) == node(want)
    assert D.promote(node(right), node(left)) == node(want)  # the join is symmetric


@pytest.mark.parametrize("weak", ["i*", "f*", "c*"])
def test_weak_with_weak(weak):
    assert D.promote(node(weak), node(weak)) == node(weak)


def test_weak_float32_stays_float32_when_all_weak():
    assert D.promote((D.float32, True), (D.float32, True)) == (D.float32, True)


def test_names_round_trip():
    for d in D.ALL:
        assert D.from_short(d.short) is d and D.from_name(d.name) is d
    assert D.from_numpy("float32") is D.float32 and D.bfloat16.numpy.name == "bfloat16"
    with pytest.raises(KeyError):
        D.from_short("f128")
