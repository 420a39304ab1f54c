"""Building one control-flow node (`scan`, `while`, `cond`) in the e-graph from a transform's builder (AD's
`Builder`, batching's `Batcher`: anything with a `loader` and `bind`): its operands, its bodies over fresh
inputs, its result avals; `results()` binds the results and returns their aliases."""

from __future__ import annotations

from collections.abc import Callable

from egglog import bindings as eb

from ir.core import ShapedArray
from rewrites.encode import Term, body_term, egg_call, egg_int, hcall_term, new_body


class ControlNode:
    """Builds one control-flow node: operands, bodies, result avals; binds its results."""

    def __init__(self, builder, prim: str, params: dict):
        self.b, self.prim, self.params = builder, prim, params
        self.operands: list[eb.Call] = []
        self.bodies: list[eb.Call] = []
        self.out_avals: list[ShapedArray] = []

    def body(self, in_avals: list[ShapedArray], fill: Callable[[list[Term]], list[eb.Call]]) -> None:
        """A body over fresh inputs of `in_avals`; `fill(leaves)` returns its output terms."""
        b, leaves = new_body(self.b.loader, in_avals)
        self.bodies.append(body_term(b, fill(leaves)))

    def results(self) -> list[eb.Call]:
        loader = self.b.loader
        key = loader.enc.hcall_key(self.prim, self.params, self.out_avals)
        tup = hcall_term(self.prim, key, self.operands, self.bodies)
        return [self.b.bind(egg_call("get", tup, egg_int(k)), a) for k, a in enumerate(self.out_avals)]
