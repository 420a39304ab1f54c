"""Operand preparations, applied before a primitive's own batching rule (see `transforms.batching.rule`)."""

from rewrites.terms import T
from transforms.batching.rule import INTS, Values, VmapBook

V = VmapBook("prepare")


def _ranks(n: int) -> tuple[int, ...]:
    return tuple(range(1, n + 1))


def _broadcast(x, *, shape, dims):
    return T.broadcast_in_dim(x, shape, dims)


def _to(fn) -> Values:
    """The broadcast's shape and dims, `fn(site)`."""
    return Values(lambda e: dict(zip(("shape", "dims"), fn(e), strict=True)), shape=INTS, dims=INTS)


V.prepare("lift:u", _broadcast, values=_to(lambda e: ((1, *e.in_avals[0].shape), _ranks(e.in_avals[0].ndim))),
          math="x -> x[None]: an unbatched operand of an elementwise op gets a leading axis of size 1")
V.prepare("lift:b", _broadcast, values=_to(lambda e: ((e.size, *(1,) * e.out_avals[0].ndim), (0,))),
          math="x (B,) -> (B, 1, ..., 1): a batched scalar operand among higher-rank ones")
V.prepare("materialize:u", _broadcast,
          values=_to(lambda e: ((e.size, *e.in_avals[0].shape), _ranks(e.in_avals[0].ndim))),
          math="x -> broadcast of x to (B, *x.shape): for ops that need every operand batched")
V.prepare("fill:b", _broadcast, values=_to(lambda e: ((e.size, *e.out_avals[0].shape), (0,))),
          math="x (B,) -> (B, *result shape): a batched scalar operand of an op that needs equal shapes")
