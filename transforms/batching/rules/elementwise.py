"""Batching rules of elementwise primitives: the op applied to the batched operands as it is, the
unbatched ones given a leading axis of size 1 (see `transforms.batching.rule`)."""

from ir.shapes.elementwise import NARY, UNARY
from transforms.batching.rule import VmapBook

V = VmapBook("elementwise")

V.elementwise(*sorted(UNARY), *sorted(NARY), "pow", "integer_pow", "round", "reduce_precision",
              "convert_element_type", "bitcast_convert_type",
              math="f(x, y)[b] = f(x[b], y) for an unbatched y: the op broadcasts y's leading axis of 1")
