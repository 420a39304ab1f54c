"""Batching rules of elementwise primitives: the op applied to the batched operands as it is, the
unbatched ones given a leading axis of size 1 (see `transforms.batching.rule`)."""

from ir.primitives import primitives_with
from transforms.batching.rule import Site, VmapBook

V = VmapBook("elementwise")

# Every elementwise primitive that broadcasts its operands (the three below have rules of their own), and
# bitcast_convert_type, which acts per element as well.
_OWN_RULES = {"select_n", "clamp", "add_any"}
V.elementwise(*(p for p in primitives_with("elementwise") if p not in _OWN_RULES), "bitcast_convert_type",
              math="f(x, y)[b] = f(x[b], y) for an unbatched y: the op broadcasts y's leading axis of 1")


def _equal_shapes(scalars_stay: tuple[int, ...]):
    """Preparation for ops whose operands must have the result's shape, except rank-0 ones at the
    positions `scalars_stay` (select_n's predicate, clamp's bounds)."""

    def prepare(e: Site, i: int) -> str | None:
        rank, out_rank = e.in_avals[i].ndim, e.out_avals[0].ndim
        if e.batched[i]:
            return "fill:b" if rank < out_rank else None
        return None if rank == 0 and i in scalars_stay else "materialize:u"

    return prepare


V.elementwise("select_n", variadic=True, prepare=_equal_shapes((0,)),
              math="select_n(p, *cases)[b] = select_n(p[b], *cases[b]); unbatched cases are broadcast "
                   "(the cases must have one shape), an unbatched scalar predicate stays")
V.elementwise("clamp", prepare=_equal_shapes((0, 2)),
              math="clamp(lo, x, hi)[b] = clamp(lo[b], x[b], hi[b]); unbatched scalar bounds stay")
V.elementwise("add_any", prepare=_equal_shapes(()),
              math="add_any(x, y)[b] = x[b] + y[b]; both operands must have one type, so y is broadcast")
