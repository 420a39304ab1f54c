"""Operand preparations, applied before a primitive's own batching rule (see `transforms.batching.rule`)."""

from rewrites.terms import T
from transforms.batching.rule import Aux, VmapBook

V = VmapBook("prepare")


def _ranks(n: int) -> tuple[int, ...]:
    return tuple(range(1, n + 1))


V.prepare("lift:u", lambda x, shape, dims: T.broadcast_in_dim(x, shape, dims),
          aux=Aux("ints ints", lambda e: ((1, *e.in_avals[0].shape), _ranks(e.in_avals[0].ndim))),
          math="x -> x[None]: an unbatched operand of an elementwise op gets a leading axis of size 1")
V.prepare("lift:b", lambda x, shape, dims: T.broadcast_in_dim(x, shape, dims),
          aux=Aux("ints ints", lambda e: ((e.size, *(1,) * e.out_avals[0].ndim), (0,))),
          math="x (B,) -> (B, 1, ..., 1): a batched scalar operand among higher-rank ones")
V.prepare("materialize:u", lambda x, shape, dims: T.broadcast_in_dim(x, shape, dims),
          aux=Aux("ints ints", lambda e: ((e.size, *e.in_avals[0].shape), _ranks(e.in_avals[0].ndim))),
          math="x -> broadcast of x to (B, *x.shape): for ops that need every operand batched")
V.prepare("fill:b", lambda x, shape, dims: T.broadcast_in_dim(x, shape, dims),
          aux=Aux("ints ints", lambda e: ((e.size, *e.out_avals[0].shape), (0,))),
          math="x (B,) -> (B, *result shape): a batched scalar operand of an op that needs equal shapes")
