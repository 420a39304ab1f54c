"""What the source writer knows about the arrays of one function: which are C-contiguous (or dense: a
transpose of a C array), which it allocated itself, and which dead operand's buffer an inline ufunc may
write its result into. An inline expression valid only on dense operands checks those whose layout only
the run knows (a body's inputs, an implementation's results), falling back to the implementation.

Layout matters for bit-identity: NumPy's summation order, and whether `matmul` calls BLAS, depend
on the memory layout of the operands, so generated code must hand every implementation arrays laid out
as the interpreter's would be. Inline expressions are chosen so that they do: a ufunc's result takes the
layout of its operands (NumPy's order "K"), as in the implementation; `out=` is used only where the
buffer has the layout NumPy would have allocated (both C-contiguous).

A buffer is reused at equation `e` when its variable
- was allocated by an inline expression of this function (not an input, constant, view or result of an
  implementation, which may alias something else),
- is read only by inline expressions that never return a view of it, `e` being the last of them,
- is not a result of the function, and has the result's shape and dtype (and is not 0-d).
"""

from __future__ import annotations

from eval.codegen.inline import EXPR, FRESH, UFUNC, Op, inline_op
from ir.core import Eqn, Jaxpr, Literal, Var


class Layouts:
    """The inline decision of every equation of `jaxpr` and the facts about its arrays. With fusion,
    `trees` are the fused trees by root equation and `folded` the equations inside them: those read
    their operands where their root runs. `constants` are the values known when compiling (by var id),
    `constant_eqns` the equations computed then."""

    def __init__(self, jaxpr: Jaxpr, inputs_c: bool, special_forms=(), trees=None, folded=frozenset(),
                 constants: dict | None = None, constant_eqns=frozenset()):
        self.c: set[int] = {id(v) for v in jaxpr.invars} if inputs_c else set()
        self.c.update(k for k, value in (constants or {}).items() if value.flags.c_contiguous)
        self.dense: set[int] = set(self.c)  # C order, or a permutation of it (a transpose of a C array)
        self.unknown: set[int] = set() if inputs_c else {id(v) for v in jaxpr.invars}  # layout known when run
        self.owned: set[int] = set()
        self.last_use: dict[int, int] = {}
        self.readers_ok: dict[int, bool] = {}
        self.outputs = {id(x) for x in jaxpr.outvars if isinstance(x, Var)}
        self.ops: list[Op | None] = []
        self.checks: dict[int, list] = {}  # operands of a `needs_dense` op to check when it runs
        trees = trees or {}
        for i, eqn in enumerate(jaxpr.eqns):
            if i in constant_eqns:  # computed when compiled: a global, never written into
                self.ops.append(None)
                continue
            op = None if eqn.primitive in special_forms or i in folded or i in trees else inline_op(eqn)
            if op is not None and op.needs_dense:
                if any(not self._is_dense(x) and id(x) not in self.unknown for x in eqn.invars):
                    op = None
                else:
                    self.checks[i] = [x for x in eqn.invars if not self._is_dense(x)]
            self.ops.append(op)
            if i in trees:
                self._record_tree(eqn, trees[i].leaves)
            else:
                self._record(eqn, op)
            if i in folded:
                continue
            reads = trees[i].leaves if i in trees else eqn.invars
            for x in reads:
                if isinstance(x, Var):
                    self.last_use[id(x)] = i
                    ok = i in trees or (op is not None and op.kind in (UFUNC, EXPR, FRESH))
                    self.readers_ok[id(x)] = self.readers_ok.get(id(x), True) and ok

    def _record_tree(self, eqn: Eqn, leaves: list) -> None:
        """numexpr allocates its result in the order of its operands, as a ufunc."""
        out = id(eqn.outvars[0])
        self.owned.add(out)
        if all(self._is_c(x) for x in leaves):
            self.c.add(out)

    def _is_c(self, x) -> bool:
        return isinstance(x, Literal) or x.aval.shape == () or id(x) in self.c

    def _is_dense(self, x) -> bool:
        return self._is_c(x) or id(x) in self.dense

    def _record(self, eqn: Eqn, op: Op | None) -> None:
        if op is None or len(eqn.outvars) != 1:
            self.unknown.update(id(v) for v in eqn.outvars)  # an implementation's result may be a view
            return
        out = id(eqn.outvars[0])
        if op.kind == FRESH:
            self.c.add(out)
        elif op.kind in (UFUNC, EXPR):
            if all(self._is_c(x) for x in eqn.invars):
                self.c.add(out)
        elif op.keeps_c and self._is_c(eqn.invars[0]):
            self.c.add(out)
        elif op.permutes and self._is_dense(eqn.invars[0]):
            self.dense.add(out)
        elif id(eqn.invars[0]) in self.unknown:
            self.unknown.add(out)
        if op.kind in (UFUNC, EXPR) and not self._is_c(eqn.outvars[0]) and any(
                id(x) in self.unknown for x in eqn.invars):
            self.unknown.add(out)
        if op.kind in (UFUNC, EXPR, FRESH) and eqn.outvars[0].aval.shape != ():
            self.owned.add(out)

    def natural_c(self, eqn: Eqn) -> bool:
        """Whether NumPy lays the result of this elementwise equation out in C order."""
        return all(self._is_c(x) for x in eqn.invars)

    def reusable_operand(self, i: int, eqn: Eqn):
        """The operand of inline ufunc equation `i` whose buffer can hold its result, or None."""
        out = eqn.outvars[0].aval
        if not all(self._is_c(x) for x in eqn.invars):
            return None
        for x in eqn.invars:
            if (isinstance(x, Var) and id(x) in self.owned and self.last_use.get(id(x)) == i
                    and self.readers_ok.get(id(x)) and id(x) not in self.outputs and x.aval.shape == out.shape
                    and x.aval.dtype == out.dtype):
                return x
        return None
