"""Building one control-flow node (`scan`, `while`, `cond`) in the e-graph from a transform's builder (AD's
`Builder`, batching's `Batcher`: anything with a `loader`, `enc` and `bind`): its operands, its bodies over
fresh inputs, its result avals; `results()` binds the results and returns their aliases. Also what AD and
batching of control flow share: the carry fixpoint, a barrier node, results placed by position."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from egglog import bindings as eb

from ir.core import ShapedArray
from rewrites.build_terms import B
from rewrites.encode import Term, body_term, closed_over, control_term, new_body, without_closed_over


class ControlNode:
    """Builds one control-flow node: operands, bodies, result avals; binds its results. `params` are the
    primitive's params but its jaxprs (the bodies stand for them). Set the operands before the bodies: a
    body's leading inputs that are consts are the operands' own terms (`rewrites.encode.closed_over`), so the
    algebra and decoding see what is loop-invariant. The result avals are the facts its results are bound
    with; the node itself holds none (they follow from its bodies)."""

    def __init__(self, builder, prim: str, params: dict):
        self.b, self.prim, self.params = builder, prim, params
        self.operands: list[eb.Call] = []
        self.bodies: list[eb.Call] = []
        self.out_avals: list[ShapedArray] = []

    def body(self, in_avals: list[ShapedArray], fill: Callable[[list[Term]], list[eb.Call]]) -> None:
        """A body over inputs of `in_avals`; `fill(leaves)` returns its output terms. The leaves are the
        operands the body closes over, then fresh inputs."""
        closures = closed_over(self.prim, self.params, self.b.enc)
        closure = [Term.of(self.operands[j]) for j in closures[len(self.bodies)]] if closures else []
        b, leaves = new_body(self.b.loader, in_avals[len(closure):])
        self.bodies.append(body_term(b, fill(closure + leaves)))

    def results(self) -> list[eb.Call]:
        loader = self.b.loader
        params, operands = without_closed_over(self.prim, self.params, self.operands, loader.enc)
        tup = control_term(self.prim, params, operands, self.bodies)
        return [self.b.bind(B.get(tup, k), a) for k, a in enumerate(self.out_avals)]


def carry_fixpoint(outputs: Callable[[list[bool]], list[bool]], before: list[bool], carry: list[bool],
                   after: list[bool]) -> list[bool]:
    """Which loop carries have a property (a tangent, the batch axis): those whose init has it, or whose
    update does when the body's inputs (`before`, the carries, `after`) have it; `outputs(inputs)` says
    which body outputs have it."""
    while True:
        out = outputs(before + carry + after)[:len(carry)]
        grown = [a or b for a, b in zip(carry, out, strict=True)]
        if grown == carry:
            return carry
        carry = grown


def barrier(builder, terms: list[eb.Call], avals: list[ShapedArray]) -> list[eb.Call]:
    """The results of one `optimization_barrier` over `terms`."""
    tup = B.optimization_barrier(B.args(terms))
    return [builder.bind(B.get(tup, k), a) for k, a in enumerate(avals)]


def placed(positions: Sequence[int], results: Sequence, n: int) -> list:
    """`results` at `positions` of a list of `n`, None elsewhere."""
    found = dict(zip(positions, results, strict=True))
    return [found.get(i) for i in range(n)]
