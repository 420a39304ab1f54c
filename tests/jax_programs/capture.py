"""Capture JAX's own printed gradient programs of every whole-program oracle case (tests/oracle/programs.json).

The oracle records each program's jaxpr text but not its Python source, so the program is rebuilt with
JAX's primitives by eqjax's XLA backend (`eval.to_jax`, each equation bound as the JAX primitive of the
same name) and JAX differentiates that rebuild. For every case and every derivative the oracle has data
for, this records JAX's printed program and the values JAX computes with it:

    grad       str(jax.make_jaxpr(jax.grad(f, argnums))(*args))      at the oracle's argnums
    hessian    str(jax.make_jaxpr(jax.hessian(f, argnums=0))(*args))
    grad_grad  str(jax.make_jaxpr(jax.grad(jax.grad(f)))(x))          (scalar-argument programs)

Values are computed by `jax.jit` of the same transform on CPU with x64, as the oracle's were. Run from the
repository root with JAX installed (the `jax` extra):

    python -m tests.jax_programs.capture            # rewrites tests/jax_programs/gradients.json

The output is deterministic: cases in oracle order, derivatives in the order above, arrays written as the
oracle writes them (tests/oracle/README.md, ARRAY), one case per line.
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import numpy as np

from eval.oracle import Case, decode_array, load_fixtures, parse_case
from eval.xla import to_jax
from tests.oracle_paths import ORACLE

OUT = Path(__file__).resolve().parent / "gradients.json"
# The custom derivative rules the oracle programs name (newton_sqrt's JVP, clip_gradient's VJP): the rebuild
# differentiates a custom_jvp_call / custom_vjp_call with the rule registered under its name.
CUSTOM_RULES = Path(__file__).resolve().parents[1] / "oracle_custom_rules.py"
SCHEMA = "jax-gradient-programs/1"
DERIVATIVES = ("grad", "hessian", "grad_grad")


def encode_array(x) -> dict:
    """An array in the oracle's ARRAY format (floats as the repr of a Python float, non-finite as strings)."""
    a = np.asarray(x)
    if a.dtype.kind == "f":
        data = [_float(v) for v in a.astype(np.float64).ravel()]
    elif a.dtype.kind == "c":
        data = [[_float(v.real), _float(v.imag)] for v in a.astype(np.complex128).ravel()]
    else:
        data = a.ravel().tolist()
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": data}


def _float(v) -> float | str:
    v = float(v)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def transform(jax, case: Case, derivative: str):
    """`(fn, args, argnums)`: JAX's transform of the rebuilt program and the arguments it is applied to."""
    rebuilt = to_jax(parse_case(case))

    def program(*args):
        return rebuilt(*args)[0]

    args = case.arrays("args")
    if derivative == "grad":
        argnums = tuple(case.raw["grad"]["argnums"])
        return jax.grad(program, argnums=argnums), args, list(argnums)
    if derivative == "hessian":
        return jax.hessian(program, argnums=0), args, [0]
    return jax.grad(jax.grad(program)), args[:1], [0]


def capture_case(jax, case: Case, derivative: str) -> dict:
    fn, args, argnums = transform(jax, case, derivative)
    printed = jax.make_jaxpr(fn)(*args)
    if printed.consts:
        raise SystemExit(f"{case.id} {derivative}: JAX's program has constants; the fixture format has none")
    values = jax.jit(fn)(*args)
    outs = list(values) if derivative == "grad" else [values]
    oracle = case.raw[derivative]
    want = oracle["out"] if derivative == "grad" else [oracle["out"]]
    return {
        "id": case.id,
        "derivative": derivative,
        "argnums": argnums,
        "jaxpr": str(printed),
        # JAX's grad / grad_grad text of the original Python function, as the oracle printed it
        "same_text_as_oracle": str(printed) == oracle["jaxpr"] if "jaxpr" in oracle else None,
        "args": [encode_array(a) for a in args],
        "out": [encode_array(np.asarray(o)) for o in outs],
        "oracle_out": want,
        "rtol": case.raw["rtol"],
        "atol": case.raw["atol"],
    }


def capture() -> dict:
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    runpy.run_path(str(CUSTOM_RULES))
    cases = []
    for case in load_fixtures([ORACLE], ("programs",)):
        for derivative in DERIVATIVES:
            if derivative in case.raw:
                cases.append(capture_case(jax, case, derivative))
    return {"schema": SCHEMA, "jax_version": jax.__version__, "x64": True, "source": "tests/oracle/programs.json",
            "cases": cases}


def write(data: dict, path: Path) -> None:
    header = {k: v for k, v in data.items() if k != "cases"}
    lines = ["{"] + [f"{json.dumps(k)}: {json.dumps(v)}," for k, v in header.items()] + ['"cases": [']
    lines += [json.dumps(c) + ("," if i < len(data["cases"]) - 1 else "") for i, c in enumerate(data["cases"])]
    path.write_text("\n".join(lines + ["]}"]) + "\n")


def load(path: Path = OUT) -> dict:
    return json.loads(path.read_text())


def main(argv: list[str]) -> int:
    data = capture()
    for c in data["cases"]:
        # JAX's values must agree with the oracle's: the rebuild computes the program JAX printed
        for got, want in zip(c["out"], c["oracle_out"], strict=True):
            g, w = decode_array(got), decode_array(want)
            if not np.allclose(g, w, rtol=c["rtol"], atol=c["atol"], equal_nan=True):
                print(f"warning: {c['id']} {c['derivative']}: JAX's value differs from the oracle's", file=sys.stderr)
    path = Path(argv[0]) if argv else OUT
    write(data, path)
    print(f"{len(data['cases'])} gradient programs written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
