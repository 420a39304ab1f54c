"""Batching rules of the PRNG primitives: random_seed, random_wrap, random_unwrap, random_clone, random_bits,
random_split, random_fold_in, random_gamma, threefry2x32 and rng_bit_generator.

Forms follow JAX (jax/_src/prng.py, random.py, lax/control_flow/loops.py), the batch axis first:
- the key primitives of one operand act on every key of a key array (JAX's `defvectorized`): the op itself
  on the batched keys (or seeds, or key data), with the same params;
- random_fold_in broadcasts its keys and messages (`defbroadcasting`): an unbatched operand of rank > 0
  gets a leading axis of 1, a batched rank-0 one among higher-rank operands becomes (B, 1, ..., 1);
- random_gamma takes both operands batched (`_gamma_batching_rule`: `bdim_at_front`), an unbatched one
  broadcast to the batch size; batched keys (B, *K) with a (B, *A) draw what each slice draws;
- threefry2x32 is elementwise over its four uint32 operands (`defbroadcasting`), with two results;
- rng_bit_generator with a batched state is JAX's `_rng_bit_generator_batching_rule`: NOT a loop over the
  states: the first state draws bits of shape (B, *shape) and only it is advanced, the others are returned
  unchanged. JAX reads that first state even for a batch of size 0 (an index error), so size 0 is refused.

Key arrays are reshaped and broadcast through their key data (`random_unwrap`, the uint32 op, `random_wrap`),
which every evaluator holds as plain uint32 arrays.
"""

from __future__ import annotations

from ir.errors import UnsupportedPrimitive
from ir.params import Symbol, as_ints
from rewrites.terms import Arr, T, args_list
from transforms.batching.rule import INTS, Site, Values, VmapBook, broadcasting_preparation, node, params

V = VmapBook("random")
_WRAP = {"impl": Symbol("fry")}  # the only PRNG implementation eqjax holds (key<fry>, two words per key)


def _key_broadcast(keys: Arr, wrap, shape, dims) -> Arr:
    """broadcast_in_dim of a key array done on its key data (`shape`/`dims` include the trailing words)."""
    data = T.random_unwrap(keys)
    return T.random_wrap(T.broadcast_in_dim(data, shape, dims), **wrap)


def _lifted(e: Site, i: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(shape, broadcast dims) that bring operand i of a broadcasting op to the batched result's rank, or None
    when it has it: `lift:u` or `lift:b` of the elementwise policy (`broadcasting_preparation`)."""
    a, out_rank = e.in_avals[i], e.out_avals[0].ndim
    how = broadcasting_preparation(e, i)
    if how == "lift:u":
        return (1, *a.shape), tuple(range(1, a.ndim + 1))
    if how == "lift:b":
        return (e.size, *(1,) * out_rank), (0,)
    return None


# --- the key primitives of one operand: the op on every key ------------------------------------------------

VECTORIZED = {
    "random_seed": "one key per seed: seeds (B, *S) give keys (B, *S)",
    "random_wrap": "key data (B, *K, 2) wrap to keys (B, *K)",
    "random_unwrap": "keys (B, *K) unwrap to key data (B, *K, 2)",
    "random_clone": "the identity on keys",
    "random_bits": "bits of each key: keys (B, *K) give (B, *K, *shape)",
    "random_split": "each key split: keys (B, *K) give (B, *K, *shape)",
}
for _prim, _math in VECTORIZED.items():
    V.batch(_prim, "b", lambda x, *, op: op(x), values=Values(lambda e: {"op": e.params}, op=node(_prim)), math=_math)


# --- random_fold_in: keys and messages broadcast --------------------------------------------------------


def _fold_in_values(e: Site) -> dict:
    keys, msgs = _lifted(e, 0), _lifted(e, 1)
    case = {(False, False): "as-is", (True, False): "lift-keys", (False, True): "lift-msgs",
            (True, True): "lift-both"}[keys is not None, msgs is not None]
    key_shape, key_dims = keys or ((), ())
    msg_shape, msg_dims = msgs or ((), ())
    key_data = ((*key_shape, 2), (*key_dims, len(key_shape))) if keys else ((), ())
    return {"case": case, "wrap": _WRAP, "ks": key_data[0], "kd": key_data[1], "ms": msg_shape, "md": msg_dims}


def _fold_in(k: Arr, m: Arr) -> Arr:
    return T.random_fold_in(k, m)


_FOLD_IN_CASES = {
    "as-is": lambda k, m, *, wrap, ks, kd, ms, md: _fold_in(k, m),
    "lift-keys": lambda k, m, *, wrap, ks, kd, ms, md: _fold_in(_key_broadcast(k, wrap, ks, kd), m),
    "lift-msgs": lambda k, m, *, wrap, ks, kd, ms, md: _fold_in(k, T.broadcast_in_dim(m, ms, md)),
    "lift-both": lambda k, m, *, wrap, ks, kd, ms, md: _fold_in(_key_broadcast(k, wrap, ks, kd),
                                                                       T.broadcast_in_dim(m, ms, md)),
}
for _flags in ("bu", "ub", "bb"):
    V.cases("random_fold_in", _flags, _FOLD_IN_CASES, fn=_fold_in_values, wrap=params("random_wrap"), ks=INTS,
            kd=INTS, ms=INTS, md=INTS,
            math="fold_in(k, m)[b] = fold_in(k[b], m[b]): the operands broadcast as the op's size-1 axes do; "
                 "an unbatched rank > 0 operand gets a leading axis of 1, a batched scalar one (B, 1, ..., 1)")


# --- random_gamma: both operands batched ----------------------------------------------------------------


def _materialized(e: Site, i: int) -> dict:
    """Shape and dims broadcasting unbatched operand i to the batch size (keys: their key data)."""
    shape = e.in_avals[i].shape + ((2,) if e.in_avals[i].dtype.kind == "key" else ())
    return {"shape": (e.size, *shape), "dims": tuple(range(1, len(shape) + 1))}


V.batch("random_gamma", "bb", lambda k, a, *, op: op(k, a),
        values=Values(lambda e: {"op": e.params}, op=node("random_gamma")),
        math="gamma(k, a)[b] = gamma(k[b], a[b]): each key's samples as the slice draws them")
V.batch("random_gamma", "bu", lambda k, a, *, op, shape, dims: op(k, T.broadcast_in_dim(a, shape, dims)),
        values=Values(lambda e: {"op": e.params, **_materialized(e, 1)}, op=node("random_gamma"), shape=INTS,
                      dims=INTS),
        math="a broadcast to the batch size, as JAX's bdim_at_front does")
V.batch("random_gamma", "ub", lambda k, a, *, op, wrap, shape, dims: op(_key_broadcast(k, wrap, shape, dims), a),
        values=Values(lambda e: {"op": e.params, "wrap": _WRAP, **_materialized(e, 0)}, op=node("random_gamma"),
                      wrap=params("random_wrap"), shape=INTS, dims=INTS),
        math="the keys broadcast to the batch size (through their key data), as JAX's bdim_at_front does")


# --- threefry2x32: elementwise with two results ------------------------------------------------------------
# The default operand preparation (it broadcasts like the arithmetic ops); the operand count is given as the
# primitive has no typed term to take it from.

V.elementwise("threefry2x32", arity=4, results=2,
              math="threefry2x32(k1, k2, x1, x2)[b] = threefry2x32 of the slices: elementwise, the operands "
                   "broadcast (an unbatched one gets a leading axis of 1, a batched scalar one (B, 1, ..., 1))")


# --- rng_bit_generator: JAX's rule, the first state draws for the whole batch -------------------------------


def _rng_values(e: Site) -> dict:
    if e.size == 0:
        raise UnsupportedPrimitive("rng_bit_generator", "batching with a batch of size 0 (JAX's rule reads the "
                                   "first state)", "transforms/batching/rules/random.py")
    n = e.in_avals[0].shape[0]
    shape = as_ints(e.params["shape"])
    return {"op": {**e.params, "shape": (e.size, *shape)}, "start0": (0, 0), "limit0": (1, n), "vector": (n,),
            "row": (1, n), "start_rest": (1, 0), "limit_rest": (e.size, n), "concat": {"dimension": 0}}


def _rng_batched(states, *, op, start0, limit0, vector, row, start_rest, limit_rest, concat):
    first = T.reshape(T.slice(states, start0, limit0), vector)
    rest = T.slice(states, start_rest, limit_rest)
    advanced = T.reshape(op.result(0, first), row)
    return [T.concatenate(args_list([advanced, rest]), **concat), op.result(1, first)]


V.batch("rng_bit_generator", "b", _rng_batched,
        values=Values(_rng_values, op=node("rng_bit_generator"), start0=INTS, limit0=INTS, vector=INTS, row=INTS,
                      start_rest=INTS, limit_rest=INTS, concat=params("concatenate")), results=2,
        math="JAX's rule: (new, bits) = rng_bit_generator(states[0], shape=(B, *shape)); the states are "
             "states[0] replaced by new, the others unchanged")
