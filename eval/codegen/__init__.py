"""Generated NumPy: a jaxpr compiled to one Python function of straight-line NumPy calls.

    compiled = compile_numpy(closed)      # cached per program fingerprint
    outs = compiled(*args)                # a list of arrays, bit for bit what eval_jaxpr returns
    print(compiled.source)                # the generated source, one line per equation

Each equation is one line of source: an inline NumPy expression where that computes exactly what its
implementation computes, else a direct call of the implementation (`eval/impls`) with its params
written out; `scan`, `while` and `cond` become Python loops and branches over the compiled functions
of their bodies, and calls (`pjit`, `custom_jvp_call`, ...) calls of them. No per-equation dispatch
remains. An array dead after its last use gives its buffer to an inline ufunc's result (`out=`).

Inputs are taken in C order (others are copied first): the results equal the interpreter's bit for bit
on C-contiguous inputs, and are exactly the interpreter's values otherwise up to the summation order
NumPy picks for other layouts.
"""

from __future__ import annotations

import linecache
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from eval.codegen.emit import FunctionWriter, Module
from ir.core import ClosedJaxpr, Jaxpr
from ir.typecheck import fingerprint

CACHE_SIZE = 256


@dataclass(eq=False)
class CompiledProgram:
    """A program compiled to NumPy source: call it like `eval_jaxpr(closed, *args)`."""

    closed: ClosedJaxpr
    source: str
    fingerprint: str
    fn: Any = field(repr=False)

    def __call__(self, *args) -> list:
        return self.fn(*args)

    def profile(self) -> list[tuple[int, str, float]]:
        """With `compile_numpy(..., profile=True)`: (equation index, primitive, seconds spent) of each
        top-level equation over every call so far (a loop's time is its equation's; fused equations count
        at their tree's root)."""
        seconds = self.fn.__globals__["_seconds"]
        return [(i, e.primitive, seconds[i]) for i, e in enumerate(self.closed.eqns)]

    def reset_profile(self) -> None:
        seconds = self.fn.__globals__["_seconds"]
        seconds[:] = [0.0] * len(seconds)


_CACHE: OrderedDict[str, CompiledProgram] = OrderedDict()


def compile_numpy(closed: ClosedJaxpr | Jaxpr, *, fuse: bool = False, profile: bool = False) -> CompiledProgram:
    """`closed` as a Python function of NumPy calls (compiled once per fingerprint, then cached).

    `fuse=True` computes chains of float elementwise equations as one numexpr call each
    (`eval.codegen.fuse`): faster on large arrays, and bit-identical except for the transcendental
    functions of `fuse.ROUNDS_DIFFERENTLY`, which may differ in the last bits. `profile=True` times every
    top-level equation (`CompiledProgram.profile()`).
    """
    if isinstance(closed, Jaxpr):
        closed = ClosedJaxpr(closed, [])
    key = fingerprint(closed) + ("+fuse" if fuse else "") + ("+profile" if profile else "")
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    compiled = _compile(closed, key, fuse, profile)
    _CACHE[key] = compiled
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return compiled


def _compile(closed: ClosedJaxpr, key: str, fuse: bool, profile: bool) -> CompiledProgram:
    module = Module(fuse, profile)
    FunctionWriter(module, closed, "program", top=True).write()
    header = f"# eqjax generated NumPy, program {key[:16]}\n"
    source = header + module.source()
    filename = f"<eqjax-numpy-{key[:16]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show lines
    exec(compile(source, filename, "exec"), module.globals)
    return CompiledProgram(closed, source, key, module.globals["program"])
