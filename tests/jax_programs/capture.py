"""Capture JAX's own printed gradient programs of every whole-program oracle case (tests/oracle/programs.json).

The oracle records each program's jaxpr text but not its Python source, so the program is rebuilt with
JAX's primitives by eqjax's XLA backend (`eval.to_jax`, each equation bound as the JAX primitive of the
same name, custom rules as tests/oracle_custom_rules.py registers them) and JAX differentiates that
rebuild. For every case and every derivative the oracle has data for, this records JAX's printed program
and the values JAX computes with it:

    grad       str(jax.make_jaxpr(jax.grad(f, argnums))(*args))      at the oracle's argnums
    hessian    str(jax.make_jaxpr(jax.hessian(f, argnums=0))(*args))
    grad_grad  str(jax.make_jaxpr(jax.grad(jax.grad(f)))(x))          (scalar-argument programs)

`EXTRAS` adds a few programs written here with `jax.numpy`, for primitives that only JAX's own gradient
programs use and no oracle program reaches (`unstack`, the transpose of `stack`); their cases also hold
the program's own text (`program`).

Values are computed by `jax.jit` of the same transform on CPU with x64, as the oracle's were; the capture
stops if they disagree with the oracle's. Run from the repository root with JAX installed (the `jax` extra):

    python -m tests.jax_programs.capture            # rewrites tests/jax_programs/gradients.json

The output is deterministic: oracle cases in file order then the extras, derivatives in the order above,
arrays written as the oracle writes them (tests/oracle/README.md, ARRAY), one case per line.
"""

from __future__ import annotations

import json
import runpy
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from eval.oracle import Case, decode_array, encode_array, load_fixtures, mismatch, parse_case
from eval.xla import to_jax
from tests.oracle_paths import ORACLE

OUT = Path(__file__).resolve().parent / "gradients.json"
SCHEMA = "jax-gradient-programs/1"
DERIVATIVES = ("grad", "hessian", "grad_grad")
# The custom derivative rules the oracle programs name (newton_sqrt's JVP, clip_gradient's VJP): the rebuild
# differentiates a custom_jvp_call / custom_vjp_call with the rule registered under its name.
CUSTOM_RULES = Path(__file__).resolve().parents[1] / "oracle_custom_rules.py"
EXTRA_TOL = 1e-9  # the oracle's `loose` class, as for its programs


# --- programs written with jax.numpy -------------------------------------------------------------------


def _stack_features(x, y):
    import jax.numpy as jnp

    z = jnp.stack([x, y, x * y], axis=1)
    return jnp.sum(jnp.sin(z) ** 2) + jnp.sum(jnp.stack([x, jnp.cos(y)]) * z[:, 0])


def _stack_rows(w):
    import jax.numpy as jnp

    rows = jnp.stack([jnp.tanh(w[0]), w[1] * w[2], jnp.exp(-w[3] ** 2)])
    return jnp.sum(rows @ rows.T)


def _stack_scalar(x):
    import jax.numpy as jnp

    return jnp.sum(jnp.stack([jnp.sin(x), x ** 3, jnp.log1p(x * x)]) ** 2)


# id -> (function, argument shapes, the derivatives to capture)
EXTRAS: dict[str, tuple[Callable, tuple[tuple[int, ...], ...], tuple[str, ...]]] = {
    "extra/stack_features": (_stack_features, ((4,), (4,)), ("grad", "hessian")),
    "extra/stack_rows": (_stack_rows, ((4, 3),), ("grad", "hessian")),
    "extra/stack_scalar": (_stack_scalar, ((),), ("grad", "hessian", "grad_grad")),
}


# --- capture ------------------------------------------------------------------------------------------


def transform(jax, program: Callable, derivative: str, argnums: tuple[int, ...]) -> Callable:
    if derivative == "grad":
        return jax.grad(program, argnums=argnums)
    if derivative == "hessian":
        return jax.hessian(program, argnums=0)
    return jax.grad(jax.grad(program))


def capture_one(jax, case_id: str, program: Callable, derivative: str, args: list, argnums: tuple[int, ...],
                tol: tuple[float, float]) -> dict:
    fn = transform(jax, program, derivative, argnums)
    args = args[:1] if derivative == "grad_grad" else args
    printed = jax.make_jaxpr(fn)(*args)
    if printed.consts:
        raise SystemExit(f"{case_id} {derivative}: JAX's program has constants; this fixture format has none")
    values = jax.jit(fn)(*args)
    outs = list(values) if derivative == "grad" else [values]
    return {"id": case_id, "derivative": derivative, "argnums": list(argnums if derivative == "grad" else (0,)),
            "jaxpr": str(printed), "args": [encode_array(a) for a in args],
            "out": [encode_array(np.asarray(o)) for o in outs], "rtol": tol[0], "atol": tol[1]}


def oracle_values(case: Case, derivative: str) -> list[np.ndarray]:
    spec = case.raw[derivative]
    return [decode_array(a) for a in (spec["out"] if derivative == "grad" else [spec["out"]])]


def capture_oracle_case(jax, case: Case, derivative: str) -> dict:
    rebuilt = to_jax(parse_case(case))

    def program(*args):
        return rebuilt(*args)[0]

    argnums = tuple(case.raw["grad"]["argnums"]) if derivative == "grad" else (0,)
    entry = capture_one(jax, case.id, program, derivative, case.arrays("args"), argnums, (case.rtol, case.atol))
    for got, want in zip(entry["out"], oracle_values(case, derivative), strict=True):
        problem = mismatch(decode_array(got), want, case.rtol, case.atol)
        if problem:
            raise SystemExit(f"{case.id} {derivative}: JAX's value on the rebuild differs from the oracle: {problem}")
    # whether the text equals what JAX printed for the original Python function (the oracle's grad/grad_grad)
    printed = case.raw[derivative].get("jaxpr")
    entry["same_text_as_oracle"] = None if printed is None else entry["jaxpr"] == printed
    return entry


def capture_extra(jax, case_id: str) -> list[dict]:
    fn, shapes, derivatives = EXTRAS[case_id]
    rng = np.random.default_rng([2026, sum(map(ord, case_id))])
    args = [rng.uniform(-1.5, 1.5, shape) for shape in shapes]
    argnums = tuple(range(len(args)))
    text = str(jax.make_jaxpr(fn)(*args))
    entries = [capture_one(jax, case_id, fn, d, args, argnums, (EXTRA_TOL, EXTRA_TOL)) for d in derivatives]
    return [{**e, "program": text} for e in entries]


def capture() -> dict:
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    runpy.run_path(str(CUSTOM_RULES))
    cases = []
    for case in load_fixtures([ORACLE], ("programs",)):
        cases += [capture_oracle_case(jax, case, d) for d in DERIVATIVES if d in case.raw]
    for case_id in EXTRAS:
        cases += capture_extra(jax, case_id)
    return {"schema": SCHEMA, "jax_version": jax.__version__, "x64": True,
            "source": "tests/oracle/programs.json, tests/jax_programs/capture.py EXTRAS", "cases": cases}


def write(data: dict, path: Path) -> None:
    header = [f"{json.dumps(k)}: {json.dumps(v)}," for k, v in data.items() if k != "cases"]
    cases = [json.dumps(c) + ("," if i < len(data["cases"]) - 1 else "") for i, c in enumerate(data["cases"])]
    path.write_text("\n".join(["{", *header, '"cases": [', *cases, "]}"]) + "\n")


def load(path: Path = OUT) -> dict:
    return json.loads(path.read_text())


def main(argv: list[str]) -> int:
    data = capture()
    path = Path(argv[0]) if argv else OUT
    write(data, path)
    print(f"{len(data['cases'])} gradient programs written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
