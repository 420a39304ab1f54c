"""Control flow for the tracing API: `scan`, `map`, `while_loop`, `fori_loop`, `cond`, `switch`.

Each traces its Python functions into closed jaxprs and binds one `scan`, `while` or `cond`
equation, staging out what JAX 0.10.2 stages out (jax/_src/lax/control_flow/loops.py and
conditionals.py), so the printed text is JAX's:

- A body's constants (tracers of enclosing traces, non-scalar NumPy arrays) become its leading
  inputs and the equation's leading operands (`hoist_consts`). The branches of a cond share one
  const list (each branch's consts, deduplicated, in branch order), so all take the same operands.
- A weakly typed initial carry whose dtype the body changes (a Python `0` that becomes f64) is
  converted to the joined dtype and the body is traced again. Any other change of a carry's shape
  or dtype is a TypeError naming the carry component. Weak types alone are not compared
  (JAX's `core.typematch`).
- Loop-invariant pass-throughs leave the loop: a carry the scan body returns unchanged becomes a
  const (in `while`, only when cond does not read it); a scanned input returned unchanged as an
  output is forwarded around the scan; a cond output both branches forward from the same operand
  is taken out of the cond.
- cond turns its predicate into an i32 index (`convert_element_type`); switch clamps its index.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ir import dtypes
from ir.core import ClosedJaxpr, Jaxpr, ShapedArray, Var
from ir.tracing import Tracer, TracingError, aval_of, bind, hoist_consts, literal, trace_flat
from ir.tree import LEAF, TreeDef, tree_flatten, tree_unflatten

_NO_OPERAND = object()  # `operand=` not passed (JAX's single-operand calling convention)


def _lax():
    import ir.lax  # imported lazily: ir.lax re-exports this module's functions
    return ir.lax


# --- tracing bodies ----------------------------------------------------------------------------

def _trace_open(fun: Callable, in_tree: TreeDef, in_avals: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, TreeDef]:
    """Trace `fun(*args)` where `args` is `in_tree` (a tuple) with one tracer per aval."""
    return trace_flat(lambda *leaves: fun(*tree_unflatten(in_tree, leaves)), in_avals)


def _trace(fun: Callable, in_tree: TreeDef, in_avals: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, list, TreeDef]:
    """Like `_trace_open`, with the jaxpr's consts moved to leading inputs; returns them too."""
    closed, out_tree = _trace_open(fun, in_tree, in_avals)
    jaxpr, consts = hoist_consts(closed)
    return jaxpr, consts, out_tree


def _const_key(c: Any) -> int:
    """Consts are shared when they are the same outer variable or the same array object."""
    return id(c._var) if isinstance(c, Tracer) else id(c)


def _trace_with_common_consts(funs: Sequence[Callable], in_tree: TreeDef, in_avals: list[ShapedArray]):
    """Trace each function; every jaxpr takes all functions' consts (deduplicated) first.

    Returns the jaxprs, the shared consts and the output trees (JAX's
    `_initial_style_jaxprs_with_common_consts`).
    """
    traced = [_trace_open(fun, in_tree, in_avals) for fun in funs]
    shared: dict[int, tuple[Any, ShapedArray]] = {}
    for closed, _ in traced:
        for v, c in zip(closed.jaxpr.constvars, closed.consts, strict=True):
            shared.setdefault(_const_key(c), (c, v.aval))
    jaxprs = []
    for closed, _ in traced:
        own = {_const_key(c): v for v, c in zip(closed.jaxpr.constvars, closed.consts, strict=True)}
        const_vars = [own.get(key) or Var(aval) for key, (_, aval) in shared.items()]
        j = closed.jaxpr
        jaxprs.append(ClosedJaxpr(Jaxpr([], const_vars + list(j.invars), list(j.outvars), j.eqns), []))
    return jaxprs, [c for c, _ in shared.values()], [tree for _, tree in traced]


# --- jaxpr surgery (JAX's pe._jaxpr_forwarding, prune_closed_jaxpr_outputs, ...) ----------------

def _forwarding(closed: ClosedJaxpr) -> list[int | None]:
    """For each output, the index of the input it returns unchanged, else None."""
    index = {id(v): i for i, v in enumerate(closed.jaxpr.invars)}
    return [index.get(id(v)) if isinstance(v, Var) else None for v in closed.jaxpr.outvars]


def _rebuilt(closed: ClosedJaxpr, invars=None, outvars=None, eqns=None) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], list(j.invars if invars is None else invars),
                             list(j.outvars if outvars is None else outvars),
                             list(j.eqns if eqns is None else eqns)), [])


def _keep_outputs(closed: ClosedJaxpr, keep: Sequence[bool]) -> ClosedJaxpr:
    return _rebuilt(closed, outvars=[v for v, k in zip(closed.jaxpr.outvars, keep, strict=True) if k])


def _partition(flags: Sequence[bool], xs: Sequence[Any]) -> tuple[list, list]:
    """(the items whose flag is False, those whose flag is True)."""
    return ([x for x, f in zip(xs, flags, strict=True) if not f],
            [x for x, f in zip(xs, flags, strict=True) if f])


def _merge(flags: Sequence[bool], falses: Sequence[Any], trues: Sequence[Any]) -> list:
    """Inverse of `_partition`."""
    falses, trues = iter(falses), iter(trues)
    return [next(trues) if f else next(falses) for f in flags]


def _move_inputs_to_front(closed: ClosedJaxpr, move: Sequence[bool]) -> ClosedJaxpr:
    rest, moved = _partition(move, closed.jaxpr.invars)
    return _rebuilt(closed, invars=moved + rest)


def _dce(closed: ClosedJaxpr, instantiate: Sequence[bool]) -> tuple[ClosedJaxpr, list[bool]]:
    """Drop equations no output depends on, and the inputs nothing reads unless `instantiate`d."""
    jaxpr = closed.jaxpr
    used = {id(v) for v in jaxpr.outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(isinstance(v, Var) and id(v) in used for v in eqn.outvars):
            kept.append(eqn)
            used.update(id(a) for a in eqn.invars if isinstance(a, Var))
    used_inputs = [id(v) in used or inst for v, inst in zip(jaxpr.invars, instantiate, strict=True)]
    invars = [v for v, u in zip(jaxpr.invars, used_inputs, strict=True) if u]
    return _rebuilt(closed, invars=invars, eqns=kept[::-1]), used_inputs


# --- carry types ---------------------------------------------------------------------------------

def _promote_weak_inputs(vals: list, in_avals: Sequence[ShapedArray],
                         out_avals: Sequence[ShapedArray]) -> tuple[list, bool]:
    """Convert each weakly typed value whose type the body changes to the joined dtype."""
    if not len(vals) == len(in_avals) == len(out_avals):
        return vals, False  # the carry check reports the structure mismatch
    vals, changed = list(vals), False
    for i, (a, b) in enumerate(zip(in_avals, out_avals, strict=True)):
        if a.weak_type and not a.same_type(b):
            dtype, _ = dtypes.promote((a.dtype, True), (b.dtype, b.weak_type))
            vals[i] = _lax().convert_element_type(vals[i], dtype)
            changed = True
    return vals, changed


def _type_name(a: ShapedArray) -> str:
    return f"{a.dtype.name}[{','.join(str(d) for d in a.shape)}]"


def _leaf_paths(tree: TreeDef, prefix: str = "") -> list[str]:
    """JAX's `keystr` of each leaf: `[0]['w']`."""
    if tree.kind == "*":
        return [prefix]
    keys = tree.data if tree.kind == "dict" else range(len(tree.children))
    return [p for k, c in zip(keys, tree.children, strict=True) for p in _leaf_paths(c, f"{prefix}[{k!r}]")]


def _first_param(fun: Callable) -> str | None:
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return None
    return params[0] if params else None


def _check_carry(what: str, fun: Callable, in_tree: TreeDef, in_avals: Sequence[ShapedArray],
                 out_tree: TreeDef, out_avals: Sequence[ShapedArray]) -> None:
    """The carry output must have the input's structure, shapes and dtypes (JAX's `_check_carry_type`)."""
    if in_tree != out_tree:
        raise TypeError(f"{what} function carry input and carry output must have the same pytree "
                        f"structure, but they differ:\n\nthe input tree structure is:\n{in_tree}\n"
                        f"the output tree structure is:\n{out_tree}\n\nRevise the function so that "
                        "the carry output has the same pytree structure as the carry input.")
    name = _first_param(fun)

    def component(path: str) -> str:
        if name:
            return f"the input carry component {name}{path}" if path else f"the input carry {name}"
        return f"the input carry at path {path}" if path else "the input carry"

    diffs = [f"{component(path)} has type {_type_name(a)} but the corresponding output carry component "
             f"has type {_type_name(b)}{_mismatch(a, b)}"
             for path, a, b in zip(_leaf_paths(in_tree), in_avals, out_avals, strict=True) if not a.same_type(b)]
    if diffs:
        if len(diffs) == 1:
            differences = diffs[0][0].upper() + diffs[0][1:] + ".\n"
        else:
            differences = "".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
        raise TypeError(f"{what} function carry input and carry output must have equal types, but they "
                        f"differ:\n\n{differences}\nRevise the function so that all output types match "
                        "the corresponding input types.")


def _mismatch(a: ShapedArray, b: ShapedArray) -> str:
    found = (["the dtypes do not match"] if a.dtype != b.dtype else []) + (
        ["the shapes do not match"] if a.shape != b.shape else [])
    return ", so " + ", and ".join(found) if found else ""


# --- scan and map ------------------------------------------------------------------------------

def _scan_length(length: Any, xs_avals: Sequence[ShapedArray]) -> int:
    lengths = {a.shape[0] for a in xs_avals}
    if length is not None:
        try:
            length = int(length)
        except TracingError:
            raise TracingError("The `length` argument to `scan` expects a concrete `int` value. For "
                               "scan-like iteration with a dynamic length, use `while_loop` or "
                               "`fori_loop`.") from None
        if lengths - {length}:
            raise ValueError(f"scan got `length` argument of {length} which disagrees with leading "
                             f"axis sizes {[a.shape[0] for a in xs_avals]}.")
        return length
    if len(lengths) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(str(a.shape[0]) for a in xs_avals)}.")
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return lengths.pop()


def _scanned_aval(x: Any) -> ShapedArray:
    aval = aval_of(x)
    if not aval.shape:
        raise ValueError(f"scan got value with no leading axis to scan over: {x!r}.")
    return aval


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None, reverse: bool = False,
         unroll: int | bool = 1) -> tuple[Any, Any]:
    """`jax.lax.scan`: `f(carry, x) -> (carry, y)` over the leading axis of the pytree `xs`."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    xs_flat, xs_tree = tree_flatten(xs)
    xs_avals = [_scanned_aval(x) for x in xs_flat]
    length = _scan_length(length, xs_avals)
    x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in xs_avals]

    def create(init):
        init_flat, init_tree = tree_flatten(init)
        carry_avals = [aval_of(x) for x in init_flat]
        jaxpr, consts, out_tree = _trace(f, tree_flatten((init, xs))[1], [*carry_avals, *x_avals])
        if len(out_tree.children) != 2:
            raise TypeError(f"scan body output must be a pair, got {tree_unflatten(out_tree, jaxpr.out_avals)}.")
        carry_out_avals = jaxpr.out_avals[:out_tree.children[0].num_leaves]
        return init_flat, init_tree, carry_avals, carry_out_avals, jaxpr, consts, out_tree

    init_flat, init_tree, carry_avals, carry_out_avals, jaxpr, consts, out_tree = create(init)
    promoted, changed = _promote_weak_inputs(init_flat, carry_avals, carry_out_avals)
    if changed:  # trace again with the weakly typed carries converted
        init_flat, init_tree, carry_avals, carry_out_avals, jaxpr, consts, out_tree = create(
            tree_unflatten(init_tree, promoted))
    _check_carry("scan body", f, init_tree, carry_avals, out_tree.children[0], carry_out_avals)
    unroll = _scan_unroll(unroll, length)

    num_carry, num_xs = len(init_flat), len(xs_flat)
    num_ys = len(jaxpr.out_avals) - num_carry
    in_flat = [*init_flat, *xs_flat]
    fwd = _forwarding(jaxpr)
    carry_fwd, ext_fwd = fwd[:num_carry], fwd[num_carry:]
    # A carry the body returns unchanged is loop-invariant: it becomes a const.
    to_const = [len(consts) + i == fw for i, fw in enumerate(carry_fwd)]
    new_consts = []
    if any(to_const):
        jaxpr = _keep_outputs(jaxpr, [not m for m in to_const] + [True] * num_ys)
        jaxpr = _move_inputs_to_front(jaxpr, [False] * len(consts) + to_const + [False] * num_xs)
        in_flat, new_consts = _partition(to_const + [False] * num_xs, in_flat)
        consts = [*new_consts, *consts]
        num_carry -= len(new_consts)
    # An output that is a slice of a scanned input, returned unchanged, is that input.
    ext_to_ext = [fw - len(consts) if fw is not None and fw >= num_carry + len(consts) else None
                  for fw in ext_fwd]
    jaxpr = _keep_outputs(jaxpr, [True] * num_carry + [fw is None for fw in ext_to_ext])

    out = bind("scan", *consts, *in_flat, jaxpr=jaxpr, length=length, num_carry=num_carry,
               num_consts=len(consts), reverse=bool(reverse), unroll=unroll)
    carry_out, ys = out[:num_carry], iter(out[num_carry:])
    out = [*carry_out, *(next(ys) if fw is None else in_flat[fw] for fw in ext_to_ext)]
    if new_consts:
        out = _merge(to_const + [False] * num_ys, out, new_consts)
    return tree_unflatten(out_tree, out)


def _scan_unroll(unroll: Any, length: int) -> int:
    if isinstance(unroll, Tracer):
        raise TracingError("The `unroll` argument to `scan` expects a concrete `int` or `bool` value.")
    if isinstance(unroll, (bool, np.bool_)):
        return max(length, 1) if unroll else 1
    if int(unroll) < 1:
        raise ValueError("`unroll` must be a `bool` or a positive `int`.")
    return int(unroll)


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001  (JAX's name)
    """`jax.lax.map`: `f` over the leading axis of `xs`, as a scan with no carry."""
    if batch_size is not None:
        raise NotImplementedError("lax.map(batch_size=...) vmaps the function, which eqjax's tracing "
                                  "API does not provide; call lax.map without batch_size")
    _, ys = scan(lambda _, x: ((), f(x)), (), xs)
    return ys


# --- while_loop and fori_loop ------------------------------------------------------------------

def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """`jax.lax.while_loop`: `body_fun` applied to the carry while `cond_fun(carry)` is True."""
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")

    def create(init_val):
        init_vals, in_tree = tree_flatten((init_val,))
        init_avals = [aval_of(x) for x in init_vals]
        cond_jaxpr, cond_consts, cond_tree = _trace(cond_fun, in_tree, init_avals)
        body_jaxpr, body_consts, body_tree = _trace(body_fun, in_tree, init_avals)
        if cond_tree != LEAF:
            raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
        pred = cond_jaxpr.out_avals[0]
        if pred.shape != () or pred.dtype != dtypes.bool_:
            raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) [{pred}].")
        return init_vals, in_tree, init_avals, cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree

    init_vals, in_tree, init_avals, cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree = create(init_val)
    promoted, changed = _promote_weak_inputs(init_vals, init_avals, body_jaxpr.out_avals)
    if changed:  # trace again with the weakly typed carries converted
        init_vals, in_tree, init_avals, cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree = create(
            tree_unflatten(in_tree, promoted)[0])
    _check_carry("while_loop body", body_fun, in_tree.children[0], init_avals, body_tree, body_jaxpr.out_avals)

    # A carry the body returns unchanged and cond does not read is loop-invariant: a body const.
    carry_nofwd = [len(body_consts) + i != fw for i, fw in enumerate(_forwarding(body_jaxpr))]
    cond_dced, keep = _dce(cond_jaxpr, [True] * len(cond_consts) + carry_nofwd)
    to_const = [not k for k in keep[len(cond_consts):]]
    new_consts = []
    if any(to_const):
        cond_jaxpr = cond_dced
        body_jaxpr = _keep_outputs(body_jaxpr, [not m for m in to_const])
        body_jaxpr = _move_inputs_to_front(body_jaxpr, [False] * len(body_consts) + to_const)
        init_vals, new_consts = _partition(to_const, init_vals)
        body_consts = [*new_consts, *body_consts]

    outs = bind("while", *cond_consts, *body_consts, *init_vals, body_jaxpr=body_jaxpr,
                body_nconsts=len(body_consts), cond_jaxpr=cond_jaxpr, cond_nconsts=len(cond_consts))
    if new_consts:
        outs = _merge(to_const, outs, new_consts)
    return tree_unflatten(body_tree, outs)


def _fori_scan_body(body_fun: Callable) -> Callable:
    def scanned_fun(loop_carry, _):
        i, x = loop_carry
        return (i + 1, body_fun(i, x)), None
    return scanned_fun


def _fori_while_body(body_fun: Callable) -> Callable:
    def while_body_fun(loop_carry):
        i, upper, x = loop_carry
        return _lax().add(i, literal(1, i.dtype, weak_type=False)), upper, body_fun(i, x)
    return while_body_fun


def _fori_cond(loop_carry):
    i, upper, _ = loop_carry
    return _lax().lt(i, upper)


def _fori_index_dtype(lower: Any, upper: Any) -> dtypes.DType:
    """The bounds' common dtype; a weak (Python) int bound takes the other signed int's dtype."""
    lo, up = aval_of(lower), aval_of(upper)
    if lo.dtype == up.dtype:
        return lo.dtype
    if lo.dtype.kind == up.dtype.kind == "i" and lo.weak_type != up.weak_type:
        return up.dtype if lo.weak_type else lo.dtype
    raise TypeError("lower and upper arguments to fori_loop must have equal types, "
                    f"got {lo.dtype.name} and {up.dtype.name}")


def _concrete_int(x: Any) -> int | None:
    try:
        return int(x)  # a tracer only has a value when it is a traced constant
    except TracingError:
        return None


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """`jax.lax.fori_loop`: a `scan` of `upper - lower` steps when both bounds are concrete, else a
    `while` whose carry is `(i, upper, val)`."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    dtype = _fori_index_dtype(lower, upper)
    lower_, upper_ = _concrete_int(lower), _concrete_int(upper)
    if lower_ is not None and upper_ is not None:
        (_, result), _ = scan(_fori_scan_body(body_fun), (lower_, init_val), None,
                              length=max(upper_ - lower_, 0), unroll=False if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    lower, upper = (_lax().convert_element_type(b, dtype) if aval_of(b).dtype != dtype else b
                    for b in (lower, upper))
    _, _, result = while_loop(_fori_cond, _fori_while_body(body_fun), (lower, upper, init_val))
    return result


# --- cond and switch ---------------------------------------------------------------------------

def _operands(operands: tuple, operand: Any, fn: str) -> tuple:
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(f"lax.{fn}: if 'operand' keyword is passed then no positional operands can "
                        f"be passed, got operand={operand!r} and positional operands {operands!r}")
    return (operand,)


def _check_branch_outputs(what1: str, tree1: TreeDef, avals1: Sequence[ShapedArray],
                          what2: str, tree2: TreeDef, avals2: Sequence[ShapedArray]) -> None:
    """Branches must return the same structure and types (JAX's `_check_tree_and_avals`)."""
    if tree1 != tree2:
        raise TypeError(f"{what1} must have same type structure as {what2}, but there are differences: "
                        f"{what1} is {tree1} and {what2} is {tree2}")
    if not all(a.same_type(b) for a, b in zip(avals1, avals2, strict=True)):
        diff = tree_unflatten(tree1, [str(a) if a.same_type(b) else f"DIFFERENT {a} vs. {b}"
                                      for a, b in zip(avals1, avals2, strict=True)])
        raise TypeError(f"{what1} and {what2} must have identical types, got\n{diff}.")


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any, operand: Any = _NO_OPERAND) -> Any:
    """`jax.lax.cond`: `true_fun(*operands)` if `pred` else `false_fun(*operands)`, as one `cond`
    equation whose branches are `(false, true)` selected by the predicate as an i32."""
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _operands(operands, operand, "cond")
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, (list, tuple)):
        raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}")
    pred_aval = aval_of(pred)
    if pred_aval.shape:
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {pred_aval.shape}.")
    if pred_aval.dtype.kind != "b":
        if pred_aval.dtype.kind not in "iuf":
            raise TypeError(f"Pred type must be either boolean or number, got {pred_aval.dtype.name}.")
        pred = pred != 0

    ops, ops_tree = tree_flatten(operands)
    (true_jaxpr, false_jaxpr), consts, (out_tree, false_tree) = _trace_with_common_consts(
        (true_fun, false_fun), ops_tree, [aval_of(x) for x in ops])
    _check_branch_outputs("true_fun output", out_tree, true_jaxpr.out_avals,
                          "false_fun output", false_tree, false_jaxpr.out_avals)
    # Outputs both branches forward from the same operand are that operand.
    in_fwd = [t if t == f else None for t, f in zip(_forwarding(true_jaxpr), _forwarding(false_jaxpr), strict=True)]
    keep = [f is None for f in in_fwd]
    true_jaxpr, false_jaxpr = _keep_outputs(true_jaxpr, keep), _keep_outputs(false_jaxpr, keep)

    index = _lax().convert_element_type(pred, dtypes.int32)
    out = iter(bind("cond", index, *consts, *ops, branches=(false_jaxpr, true_jaxpr)))
    inputs = [*consts, *ops]
    return tree_unflatten(out_tree, [next(out) if f is None else inputs[f] for f in in_fwd])


def switch(index: Any, branches: Sequence[Callable], *operands: Any, operand: Any = _NO_OPERAND) -> Any:
    """`jax.lax.switch`: `branches[clamp(0, index, len(branches) - 1)](*operands)`."""
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    operands = _operands(operands, operand, "switch")
    index_aval = aval_of(index)
    if index_aval.shape:
        raise TypeError(f"Branch index must be scalar, got {index} of shape {index_aval.shape}.")
    if index_aval.dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_aval.dtype.name}")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)

    index = _lax().convert_element_type(index, dtypes.int32)
    hi = len(branches) - 1
    if isinstance(index, Tracer):
        index = _lax().clamp(np.int32(0), index, np.int32(hi))
    else:  # a concrete index is clamped now, as JAX computes lax ops on constants eagerly
        index = literal(min(max(int(index.value), 0), hi), dtypes.int32, weak_type=False)

    ops, ops_tree = tree_flatten(operands)
    jaxprs, consts, out_trees = _trace_with_common_consts(branches, ops_tree, [aval_of(x) for x in ops])
    for i, (tree, jaxpr) in enumerate(zip(out_trees[1:], jaxprs[1:], strict=True), start=1):
        _check_branch_outputs("branch 0 output", out_trees[0], jaxprs[0].out_avals,
                              f"branch {i} output", tree, jaxpr.out_avals)
    out = bind("cond", index, *consts, *ops, branches=tuple(jaxprs))
    return tree_unflatten(out_trees[0], out)
