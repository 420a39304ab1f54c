"""Catalogue rows of the control-flow and call-like primitives, whose params hold the jaxprs they run, and of
the placeholders partial evaluation leaves (shape rules: ir/shapes/control.py).

Their operand and result counts are those of the jaxprs they run, so all of them are variadic."""

from __future__ import annotations

from ir.primitives import NO_BATCHING_IN_JAX, NO_OPERANDS, NOT_DIFFERENTIABLE, define, variadic
from ir.primitives.schema import ANY, BOOL, DTYPE, JAXPR, JAXPRS, NAT, RECORD, defaulting

_ANY_COUNT = {"operands": variadic(0), "results": variadic(0)}
_CALLS = {"higher_order"}  # runs the jaxprs its params hold
_CONTROL = {*_CALLS, "control_flow"}  # and the e-graph holds them as bodies it rewrites inside
# jit's params: those JAX prints, and those it hides at their defaults (ir/text/eqn_rules.py)
_JIT = {"jaxpr": JAXPR, "name": ANY, "donated_invars": ANY, "inline": defaulting(ANY, False, printed=False),
        "keep_unused": defaulting(ANY, False, printed=False), "in_shardings": ANY, "out_shardings": ANY,
        "in_layouts": ANY, "out_layouts": ANY, "ctx_mesh": defaulting(ANY, None, printed=False),
        "compiler_options_kvs": defaulting(ANY, (), printed=False)}
_REMAT = {"jaxpr": JAXPR, "prevent_cse": ANY, "differentiated": ANY, "policy": ANY}
_CUSTOM_CALL = {"call_jaxpr": JAXPR, "name": ANY, "num_consts": defaulting(NAT, 0, printed=False),
                "symbolic_zeros": ANY}

define("jit", **_ANY_COUNT, params=_JIT, traits={*_CALLS, "call"})
define("pjit", **_ANY_COUNT, params=_JIT, traits={*_CALLS, "call"})
define("closed_call", **_ANY_COUNT, params={"call_jaxpr": JAXPR}, traits={*_CALLS, "call"})
define("core_call", **_ANY_COUNT, params={"call_jaxpr": JAXPR, "name": ANY}, traits={*_CALLS, "call"})
define("remat2", **_ANY_COUNT, params=_REMAT, traits=_CALLS)
define("checkpoint", **_ANY_COUNT, params=_REMAT, traits=_CALLS)
define("composite", **_ANY_COUNT, params={"jaxpr": JAXPR, "name": ANY, "attributes": ANY, "version": ANY},
       traits=_CALLS, gaps={**NOT_DIFFERENTIABLE, "batching": NO_BATCHING_IN_JAX})
define("custom_jvp_call", **_ANY_COUNT, traits=_CALLS,
       params={**_CUSTOM_CALL, "jvp_jaxpr_fun": ANY, "jvp_jaxpr_thunk": ANY, "jvp": ANY})
define("custom_vjp_call", **_ANY_COUNT, traits=_CALLS,
       params={**_CUSTOM_CALL, "fwd": ANY, "bwd": ANY, "out_trees": ANY, "fwd_jaxpr_thunk": ANY})
define("custom_vjp_call_jaxpr", **_ANY_COUNT, traits=_CALLS,
       params={"fun_jaxpr": JAXPR, "num_consts": NAT, "fwd_jaxpr_thunk": ANY, "bwd": ANY, "out_trees": ANY,
               "symbolic_zeros": ANY})
define("cond", operands=variadic(1), results=variadic(0), params={"branches": JAXPRS, "branches_platforms": ANY},
       traits=_CONTROL)
define("while", **_ANY_COUNT, traits=_CONTROL, gaps={"vjp": "reverse mode through while: JAX has none either"},
       params={"cond_jaxpr": JAXPR, "body_jaxpr": JAXPR, "cond_nconsts": NAT, "body_nconsts": NAT})
define("scan", **_ANY_COUNT, traits=_CONTROL,
       params={"jaxpr": JAXPR, "length": NAT, "reverse": BOOL, "num_consts": NAT, "num_carry": NAT, "linear": ANY,
               "unroll": ANY, "_split_transpose": ANY})
define("custom_linear_solve", **_ANY_COUNT, params={"const_lengths": RECORD, "jaxprs": RECORD}, traits=_CALLS)
define("optimization_barrier", **_ANY_COUNT, traits={"data_movement", "metadata_only", "term"})
define("platform_index", operands=0, params={"platforms": ANY}, traits={"data_movement", "term"},
       gaps={**NOT_DIFFERENTIABLE, "batching": NO_OPERANDS})
# A placeholder for a residual a cond branch does not produce (partial-eval'd gradients).
define("empty2", operands=0, params={"dtype": DTYPE, "memory_space": ANY},
       traits={"data_movement", "zero_derivative", "term"}, gaps={"batching": NO_OPERANDS})
