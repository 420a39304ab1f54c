"""Shape/dtype rules of the PRNG primitives (jax/_src/prng.py, jax/_src/random.py, lax.py).

A typed key is `key<fry>[...]`: one threefry key per element, two uint32 words each
(`random_wrap` / `random_unwrap` convert between the two views).
"""

from __future__ import annotations

from ir.core import ShapedArray
from ir.dtypes import DType, key_fry, uint8, uint16, uint32, uint64
from ir.errors import JaxprTypeError
from ir.params import as_ints
from ir.primitives import shape_rule

# PRNG implementation name → (key dtype, trailing shape of its uint32 key data).
_IMPLS: dict[str, tuple[DType, tuple[int, ...]]] = {"fry": (key_fry, (2,))}
_UINT_OF_BITS = {8: uint8, 16: uint16, 32: uint32, 64: uint64}


def _impl(prim: str, impl) -> tuple[DType, tuple[int, ...]]:
    try:
        return _IMPLS[str(impl)]
    except KeyError:
        raise JaxprTypeError("unsupported PRNG implementation", primitive=prim,
                             expected=" or ".join(_IMPLS), actual=str(impl)) from None


def _key_data_shape(dtype: DType) -> tuple[int, ...]:
    return next(shape for key, shape in _IMPLS.values() if key == dtype)


def _need_keys(prim: str, keys: ShapedArray) -> None:
    if keys.dtype.kind != "key":
        raise JaxprTypeError("operand must be a typed PRNG key array", primitive=prim,
                             expected="key<fry>[...]", actual=str(keys))


def _broadcast(prim: str, *avals: ShapedArray) -> tuple[int, ...]:
    """lax's broadcasting shape rule: rank-0 operands broadcast; others share a rank and 1s stretch."""
    shapes = [a.shape for a in avals if a.shape]
    if not shapes:
        return ()
    if len({len(s) for s in shapes}) != 1:
        raise JaxprTypeError("operands must have the same rank (or be scalars)", primitive=prim,
                             expected="equal ranks", actual=", ".join(map(str, avals)))
    out = []
    for dims in zip(*shapes, strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise JaxprTypeError("operand shapes do not broadcast", primitive=prim,
                                 expected="equal sizes or 1 along each axis",
                                 actual=", ".join(map(str, avals)))
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


@shape_rule("random_seed")
def random_seed_rule(seeds: ShapedArray, *, impl, **_) -> list[ShapedArray]:
    key, _ = _impl("random_seed", impl)
    if not seeds.dtype.is_integer:
        raise JaxprTypeError("seeds must be integers", primitive="random_seed", expected="int or uint array",
                             actual=str(seeds))
    return [ShapedArray(seeds.shape, key)]


@shape_rule("random_wrap")
def random_wrap_rule(data: ShapedArray, *, impl, **_) -> list[ShapedArray]:
    key, trailing = _impl("random_wrap", impl)
    if data.dtype != uint32 or data.shape[data.ndim - len(trailing):] != trailing:
        raise JaxprTypeError("key data must be uint32 with the key shape trailing", primitive="random_wrap",
                             expected=f"u32[..., {', '.join(map(str, trailing))}]", actual=str(data))
    return [ShapedArray(data.shape[:data.ndim - len(trailing)], key)]


@shape_rule("random_unwrap")
def random_unwrap_rule(keys: ShapedArray, **_) -> list[ShapedArray]:
    _need_keys("random_unwrap", keys)
    return [ShapedArray(keys.shape + _key_data_shape(keys.dtype), uint32)]


@shape_rule("random_bits")
def random_bits_rule(keys: ShapedArray, *, bit_width, shape, **_) -> list[ShapedArray]:
    _need_keys("random_bits", keys)
    if bit_width not in _UINT_OF_BITS:
        raise JaxprTypeError("unsupported bit_width", primitive="random_bits", expected="8, 16, 32 or 64",
                             actual=repr(bit_width))
    return [ShapedArray(keys.shape + as_ints(shape), _UINT_OF_BITS[int(bit_width)])]


@shape_rule("random_split")
def random_split_rule(keys: ShapedArray, *, shape, **_) -> list[ShapedArray]:
    _need_keys("random_split", keys)
    return [ShapedArray(keys.shape + as_ints(shape), keys.dtype)]


@shape_rule("random_fold_in")
def random_fold_in_rule(keys: ShapedArray, msgs: ShapedArray, **_) -> list[ShapedArray]:
    _need_keys("random_fold_in", keys)
    if not msgs.dtype.is_integer:
        raise JaxprTypeError("messages must be integers", primitive="random_fold_in", expected="u32[...]",
                             actual=str(msgs))
    return [ShapedArray(_broadcast("random_fold_in", keys, msgs), keys.dtype)]


@shape_rule("random_clone")
def random_clone_rule(keys: ShapedArray, **_) -> list[ShapedArray]:
    return [keys]


@shape_rule("random_gamma")
def random_gamma_rule(keys: ShapedArray, a: ShapedArray, **_) -> list[ShapedArray]:
    _need_keys("random_gamma", keys)
    if not a.dtype.is_float:
        raise JaxprTypeError("the shape parameter a must be floating", primitive="random_gamma",
                             expected="float array", actual=str(a))
    return [a]


@shape_rule("threefry2x32")
def threefry2x32_rule(*avals: ShapedArray, **_) -> list[ShapedArray]:
    if len(avals) != 4 or any(a.dtype != uint32 for a in avals):
        raise JaxprTypeError("takes four uint32 operands (key1, key2, x1, x2)", primitive="threefry2x32",
                             expected="4 x u32", actual=", ".join(map(str, avals)))
    out = ShapedArray(_broadcast("threefry2x32", *avals), uint32)
    return [out, out]


@shape_rule("rng_bit_generator")
def rng_bit_generator_rule(key: ShapedArray, *, shape, dtype, **_) -> list[ShapedArray]:
    if key.ndim != 1 or key.dtype not in (uint32, uint64):
        raise JaxprTypeError("the generator state must be a vector of uint32 or uint64",
                             primitive="rng_bit_generator", expected="u32[n] or u64[n]", actual=str(key))
    if dtype not in _UINT_OF_BITS.values():
        raise JaxprTypeError("dtype must be an unsigned integer type", primitive="rng_bit_generator",
                             expected="uint8/16/32/64", actual=repr(dtype))
    return [ShapedArray(key.shape, key.dtype), ShapedArray(as_ints(shape), dtype)]


@shape_rule("rng_uniform")
def rng_uniform_rule(a: ShapedArray, b: ShapedArray, *, shape, **_) -> list[ShapedArray]:
    if a.shape or b.shape or a.dtype != b.dtype:
        raise JaxprTypeError("bounds must be scalars of one dtype", primitive="rng_uniform",
                             expected="two scalars of one dtype", actual=f"{a}, {b}")
    return [ShapedArray(as_ints(shape), a.dtype)]
