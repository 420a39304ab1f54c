"""The source writer of `compile_numpy`: one Python function per jaxpr, one line per equation.

An equation becomes, in order of preference,
- its inline NumPy expression (`eval.codegen.inline`), writing into a dead operand's buffer through
  `out=` where `eval.codegen.buffers` found one;
- a loop, a branch or a call over the compiled function of its body (`scan`, `while`, `cond`, the
  call-like primitives of `eval.impls.control.CALLS`);
- a direct call of its implementation (`eval/impls`) with its params spelled out.

Variables keep short names (`a`, `b`, ... as JAX prints them, numbered per function); everything else
the source names (NumPy, implementations, constants, params, bodies) is a global starting with `_`.
A 0-d result of an inline expression may be a NumPy scalar rather than a 0-d array: it is wrapped by
`_as_array` where an implementation or the caller receives it.
"""

from __future__ import annotations

import keyword
import re
import time
from typing import Any

import numpy as np
from scipy import special

import eval.impls  # noqa: F401  (every implementation, registered before the first program is compiled)
from eval.codegen import constants, fuse, runtime
from eval.codegen.buffers import Layouts
from eval.codegen.inline import EXPR, UFUNC, VIEW, Op
from eval.impls.arrays import broadcast_copy
from eval.impls.control import CALLS
from eval.interpreter import _impl_of, literal_array, runtime_shape
from ir.core import ClosedJaxpr, DropVar, Eqn, Literal
from ir.inline import called
from ir.primitives import get_primitive
from ir.text.printer import encode_name, literal_value_text

_PLAIN = (int, float, bool, str, type(None))


class Module:
    """The generated module: its globals and its functions' sources (bodies first, the program last)."""

    def __init__(self, fuse: bool = False, profile: bool = False):
        self.fuse, self.profile = fuse, profile
        self.globals: dict[str, Any] = {
            "_np": np, "_expit": special.expit, "_as_array": runtime.as_array, "_range": range, "_int": int,
            "_len": len, "_ignore_fp": runtime.ignore_fp_errors, "_restore_fp": runtime.restore_fp_errors,
            "_coerce": runtime.coerce_arg, "_ndarray": np.ndarray, "_TypeError": _arity_error,
            "_clock": time.perf_counter, "_seconds": [], "_parallel": runtime.parallel,
            "_parallel_reduce": runtime.parallel_reduce, "_dense": runtime.dense,
            "_broadcast_copy": broadcast_copy, "_power": runtime.power}
        self.functions: list[str] = []
        self._names_of: dict[tuple, str] = {}  # (kind, id) -> global name, so each value is bound once
        self._bodies: dict[int, str] = {}
        self._keep: list = []  # objects whose id() keys _names_of

    def bind(self, value: Any, hint: str) -> str:
        """A global name for `value` (the same name for the same object)."""
        key = ("value", id(value))
        name = self._names_of.get(key)
        if name is None:
            if isinstance(value, np.dtype):
                hint = f"{value.name}_"
            name = f"_{re.sub(r'[^0-9a-zA-Z_]', '_', hint)}{len(self._names_of)}"
            self._names_of[key] = name
            self.globals[name] = value
            self._keep.append(value)
        return name

    def body(self, closed: ClosedJaxpr, hint: str) -> str:
        """The name of the compiled function of a nested jaxpr (compiled once per object)."""
        name = self._bodies.get(id(closed))
        if name is None:
            name = self._bodies[id(closed)] = f"_{hint}_{len(self._bodies)}"
            self._keep.append(closed)
            FunctionWriter(self, closed, name, top=False).write()
        return name

    def source(self) -> str:
        return "\n\n".join(self.functions) + "\n"


def _arity_error(n_expected: int, n_given: int):
    from ir.errors import JaxprTypeError
    return JaxprTypeError(f"the program takes {n_expected} arguments, got {n_given}")


class FunctionWriter:
    """Writes one jaxpr as one Python function of `Module`."""

    def __init__(self, module: Module, closed: ClosedJaxpr, name: str, top: bool):
        self.module, self.closed, self.jaxpr, self.name, self.top = module, closed, closed.jaxpr, name, top
        self.names: dict[int, str] = {}
        self.lines: list[str] = []
        self.scalars: set[int] = set()  # vars that may hold a NumPy scalar
        self.constants, self.constant_eqns = constants.fold(closed)
        self.trees, self.folded = fuse.plan(self.jaxpr, self.constant_eqns) if module.fuse else ({}, set())
        self.layouts = Layouts(self.jaxpr, inputs_c=top, special_forms=_SPECIAL_FORMS, trees=self.trees,
                               folded=self.folded, constants=self.constants, constant_eqns=self.constant_eqns)
        self._temps = 0

    # --- names ---------------------------------------------------------------------------------------------

    def define(self, v) -> str:
        if isinstance(v, DropVar):
            return "_"
        name = encode_name(len(self.names))
        if keyword.iskeyword(name) or keyword.issoftkeyword(name):
            name += "_"
        self.names[id(v)] = name
        return name

    def temp(self, hint: str) -> str:
        self._temps += 1
        return f"_{hint}{self._temps}"

    def atom(self, x, as_array: bool = False) -> str:
        """An operand's text; `as_array` wraps a value that may be a NumPy scalar."""
        if isinstance(x, Literal):
            return self.module.bind(literal_array(x), "k")
        name = self.names[id(x)]
        return f"_as_array({name})" if as_array and id(x) in self.scalars else name

    def emit(self, line: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + line)

    # --- the function ------------------------------------------------------------------------------------

    def write(self) -> None:
        jaxpr = self.jaxpr
        for v in jaxpr.constvars:
            self.names[id(v)] = self.module.bind(self.constants[id(v)], "const")
        params = [self.define(v) for v in jaxpr.invars]
        if self.top:
            self.module.globals["_seconds"] = [0.0] * len(jaxpr.eqns)
        else:
            self.scalars.update(id(v) for v in jaxpr.invars if v.aval.shape == ())
        for i, eqn in enumerate(jaxpr.eqns):
            self.equation(i, eqn)
        outs = []
        for x in jaxpr.outvars:
            text = self.atom(x, as_array=self.top)
            known = isinstance(x, Literal) or id(x) in self.constants
            outs.append(f"{text}.copy()" if known and self.top else text)  # the caller may write into it
        if self.top:
            self._write_top(params, outs)
        else:
            head = f"def {self.name}({', '.join(params)}):"
            self.module.functions.append("\n".join([head, *self.lines, f"    return ({', '.join(outs)},)"]))

    def _write_top(self, params: list[str], outs: list[str]) -> None:
        n = len(params)
        head = [f"def {self.name}(*args):",
                f"    if _len(args) != {n}:",
                f"        raise _TypeError({n}, _len(args))"]
        if params:
            head.append(f"    {_unpack(params)} = args")
        for i, (p, v) in enumerate(zip(params, self.jaxpr.invars, strict=True)):
            dtype = self.module.bind(v.aval.dtype.numpy, "dtype")
            aval = self.module.bind(v.aval, "aval")
            shape = runtime_shape(v.aval)
            head.append(f"    if not (type({p}) is _ndarray and {p}.dtype == {dtype} and {p}.shape == {shape!r} "
                        f"and {p}.flags.c_contiguous):")
            head.append(f"        {p} = _coerce({i}, {p}, {aval})")
        body = ["    _fp = _ignore_fp()", "    try:", *("    " + line for line in self.lines),
                f"        return [{', '.join(outs)}]", "    finally:", "        _restore_fp(_fp)"]
        self.module.functions.append("\n".join(head + body))

    # --- one equation --------------------------------------------------------------------------------------

    def equation(self, i: int, eqn: Eqn) -> None:
        """Emit equation `i`; with profiling (top level only), between two reads of the clock."""
        if i in self.folded:
            return
        if i in self.constant_eqns:
            names = [self.module.bind(r, "const") for r in self.constant_eqns[i]]
            for v, name in zip(eqn.outvars, names, strict=True):
                self.names[id(v)] = name
            self.emit(f"# {', '.join(names)} = {self.comment(eqn)}  (computed when compiled)")
            return
        start = len(self.lines)
        self._equation(i, eqn)
        if self.module.profile and self.top:
            self.lines.insert(start, "    _t = _clock()")
            self.emit(f"_seconds[{i}] += _clock() - _t")

    def _equation(self, i: int, eqn: Eqn) -> None:
        special_form = _SPECIAL_FORMS.get(eqn.primitive)
        op = self.layouts.ops[i]
        if i in self.trees:
            self._fused(eqn, self.trees[i])
        elif special_form is not None and not _has_keys(eqn):
            special_form(self, eqn)
        elif op is not None:
            self._inline(i, eqn, op)
        else:
            self._call_impl(eqn)

    def _inline(self, i: int, eqn: Eqn, op: Op) -> None:
        raw = op.kind in (UFUNC, EXPR)
        operands = [self.atom(x, as_array=not raw) for x in eqn.invars]
        consts = {f"c{k}": self.module.bind(c, "k") for k, c in enumerate(op.consts)}
        text = op.template.format(*operands, **consts)
        out = eqn.outvars[0]
        if op.operator and out.aval.shape == () and self._scalar_kind(eqn):
            text = op.operator.format(*(self._scalar(x) for x in eqn.invars))
        elif op.kind == UFUNC:
            reuse = self.layouts.reusable_operand(i, eqn)
            aval = out.aval
            if aval.size >= runtime.PARALLEL_MIN and aval.shape[0] > 1 and self.layouts.natural_c(eqn):
                buffer = self.names[id(reuse)] if reuse is not None else "None"
                dtype = self.module.bind(aval.dtype.numpy, "dtype")
                text = f"_parallel({op.ufunc}, {buffer}, {aval.shape!r}, {dtype}, {', '.join(operands)})"
            elif reuse is not None:
                text = text[:-1] + f", out={self.names[id(reuse)]})"
        elif op.axes is not None and self._parallel_reduction(eqn, op.axes):
            dtype, initial = (self.module.bind(c, "k") for c in op.consts)
            text = (f"_parallel_reduce({op.ufunc}, {operands[0]}, {op.axes!r}, {dtype}, {initial}, "
                    f"{out.aval.shape!r})")
        checks = self.layouts.checks.get(i)
        if checks:
            test = " and ".join(f"_dense({self.atom(x)})" for x in checks)
            text = f"({text} if {test} else {self._impl_text(eqn)})"
        name = self.define(out)
        if out.aval.shape == () and op.kind != VIEW or (op.kind == VIEW and id(eqn.invars[0]) in self.scalars):
            self.scalars.add(id(out))
        self.emit(f"{name} = {text}  # {self.comment(eqn)}")

    def _fused(self, eqn: Eqn, tree: fuse.Tree) -> None:
        program = self.module.bind(fuse.compile_tree(tree), "numexpr")
        args = ", ".join(self.atom(x, as_array=True) for x in tree.leaves)
        name = self.define(eqn.outvars[0])
        leaves = ", ".join(f"v{k}={literal_value_text(x) if isinstance(x, Literal) else self.names[id(x)]}"
                           for k, x in enumerate(tree.leaves))
        self.emit(f"{name} = {program}({args})  # numexpr: {tree.text} with {leaves}")

    @staticmethod
    def _scalar_kind(eqn: Eqn) -> bool:
        """Rank-0 operands of a float, complex or integer dtype: NumPy's scalar arithmetic applies."""
        return all(x.aval.shape == () and x.aval.dtype.kind in "fciu" for x in eqn.invars)

    def _scalar(self, x) -> str:
        """An operand for scalar arithmetic: a literal as a NumPy scalar of its dtype."""
        if isinstance(x, Literal):
            return self.module.bind(literal_array(x)[()], "s")
        return self.names[id(x)]

    def _parallel_reduction(self, eqn: Eqn, axes: tuple[int, ...]) -> bool:
        """A reduction keeping axis 0 of a large C-contiguous operand: rows can be reduced on threads."""
        x = eqn.invars[0]
        return (0 not in axes and x.aval.size >= runtime.PARALLEL_MIN and x.aval.ndim > 1 and x.aval.shape[0] > 1
                and self.layouts.natural_c(eqn))

    def comment(self, eqn: Eqn) -> str:
        """The equation as JAX prints it, without params: `sin c`, `add c 1.0`."""
        operands = [literal_value_text(x) if isinstance(x, Literal) else self.names[id(x)] for x in eqn.invars]
        return " ".join([eqn.primitive, *operands])

    def _call_impl(self, eqn: Eqn) -> None:
        self._assign(eqn, self._impl_text(eqn))

    def _impl_text(self, eqn: Eqn) -> str:
        """A direct call of the equation's implementation, its params written out."""
        fn, params = _impl_of(eqn)
        fn_name = self.module.bind(fn, f"impl_{eqn.primitive}_")
        args = [self.atom(x, as_array=True) for x in eqn.invars]
        args += [f"{k}={self._param(v)}" for k, v in params.items()]
        return f"{fn_name}({', '.join(args)})"

    def _param(self, value: Any) -> str:
        if _is_plain(value):
            return repr(value)
        return self.module.bind(value, "p")

    def _assign(self, eqn: Eqn, text: str) -> None:
        multiple = get_primitive(eqn.primitive).multiple_results
        targets = [self.define(v) for v in eqn.outvars]
        if multiple:
            lhs = ", ".join(targets) + ("," if len(targets) == 1 else "")
            if not targets:
                lhs = "_"
        else:
            lhs = targets[0]
        self.emit(f"{lhs} = {text}  # {self.comment(eqn)}")

    def _results(self, eqn: Eqn, outs: list[str]) -> None:
        """Bind the equation's results to `outs` (temporaries of a loop or branch)."""
        for v, text in zip(eqn.outvars, outs, strict=True):
            if not isinstance(v, DropVar):
                name = self.define(v)
                if v.aval.shape == ():
                    self.scalars.add(id(v))
                self.emit(f"{name} = {text}")


def _is_plain(value: Any) -> bool:
    if type(value) in (tuple, list):
        return all(_is_plain(v) for v in value)
    if type(value) is float:
        return value == value and value not in (float("inf"), float("-inf"))
    return type(value) in _PLAIN


def _has_keys(eqn: Eqn) -> bool:
    return any(x.aval.dtype.kind == "key" for x in (*eqn.invars, *eqn.outvars))


# --- control flow and calls ---------------------------------------------------------------------------------


def _unpack(names: list[str]) -> str:
    return ", ".join(names) + ("," if len(names) == 1 else "") if names else "_"


def _call(w: FunctionWriter, eqn: Eqn) -> None:
    """A call of the compiled body (for custom_linear_solve: its `solve` jaxpr on b, as its implementation)."""
    closed, operands = called(eqn, list(eqn.invars))
    body = w.module.body(closed, eqn.primitive)
    args = ", ".join(w.atom(x) for x in operands)
    outs = [w.temp("r") for _ in eqn.outvars]
    w.emit(f"{_unpack(outs)} = {body}({args})  # {eqn.primitive}")
    w._results(eqn, outs)


def _scan(w: FunctionWriter, eqn: Eqn) -> None:
    p = eqn.params
    n_consts, n_carry, length = int(p["num_consts"]), int(p["num_carry"]), int(p["length"])
    body = w.module.body(p["jaxpr"], "scan_body")
    operands = [w.atom(x) for x in eqn.invars]
    consts, init, xs = operands[:n_consts], operands[n_consts:n_consts + n_carry], operands[n_consts + n_carry:]
    carry = [w.temp("carry") for _ in range(n_carry)]
    y_avals = p["jaxpr"].out_avals[n_carry:]
    ys = [w.temp("ys") for _ in y_avals]
    ys_now = [w.temp("y") for _ in y_avals]
    w.emit(f"# scan: length={length} reverse={bool(p['reverse'])}")
    for c, x in zip(carry, init, strict=True):
        w.emit(f"{c} = {x}")
    for y, a in zip(ys, y_avals, strict=True):
        dtype = w.module.bind(a.dtype.numpy, "dtype")
        w.emit(f"{y} = _np.empty({(length,) + runtime_shape(a)!r}, {dtype})")
    t = w.temp("t")
    steps = f"_range({length - 1}, -1, -1)" if p["reverse"] else f"_range({length})"
    w.emit(f"for {t} in {steps}:")
    args = ", ".join([*consts, *carry, *(f"{x}[{t}]" for x in xs)])
    w.emit(f"{_unpack(carry + ys_now)} = {body}({args})", 2)
    for y, y_now in zip(ys, ys_now, strict=True):
        w.emit(f"{y}[{t}] = {y_now}", 2)
    w._results(eqn, carry + ys)


def _while(w: FunctionWriter, eqn: Eqn) -> None:
    p = eqn.params
    nc, nb = int(p["cond_nconsts"]), int(p["body_nconsts"])
    cond = w.module.body(p["cond_jaxpr"], "while_cond")
    body = w.module.body(p["body_jaxpr"], "while_body")
    operands = [w.atom(x) for x in eqn.invars]
    cond_consts, body_consts, init = operands[:nc], operands[nc:nc + nb], operands[nc + nb:]
    carry = [w.temp("carry") for _ in init]
    w.emit("# while")
    for c, x in zip(carry, init, strict=True):
        w.emit(f"{c} = {x}")
    w.emit(f"while {cond}({', '.join([*cond_consts, *carry])})[0]:")
    w.emit(f"{_unpack(carry)} = {body}({', '.join([*body_consts, *carry])})", 2)
    w._results(eqn, carry)


def _cond(w: FunctionWriter, eqn: Eqn) -> None:
    branches = eqn.params["branches"]
    index, *operands = [w.atom(x) for x in eqn.invars]
    names = [w.module.body(b, f"branch{k}") for k, b in enumerate(branches)]
    outs = [w.temp("r") for _ in eqn.outvars]
    if len(names) == 1:
        w.emit(f"{_unpack(outs)} = {names[0]}({', '.join(operands)})  # cond")
        w._results(eqn, outs)
        return
    i = w.temp("branch")
    w.emit(f"{i} = _int(_np.clip(_int({index}), 0, {len(branches) - 1}))  # cond")
    for k, name in enumerate(names):
        test = "else:" if k == len(names) - 1 else f"{'if' if k == 0 else 'elif'} {i} == {k}:"
        w.emit(test)
        w.emit(f"{_unpack(outs)} = {name}({', '.join(operands)})", 2)
    w._results(eqn, outs)


_SPECIAL_FORMS = {**dict.fromkeys((*CALLS, "custom_linear_solve"), _call), "scan": _scan, "while": _while,
                  "cond": _cond}
