"""Records the library fixture families (schema `jaxpr-oracle/1`, tests/oracle/README.md; the delta is in
tests/library/README.md) from real JAX, flax, optax and equinox. Run it in the side environment:

    /tmp/capture-venv/bin/python tests/library/capture.py --out tests/library/fixtures [--only ID_PREFIX]

The case tables are `cases_functions.py` (jax.nn, jax.scipy, jax.numpy, jnp.linalg, jax.random) and
`cases_models.py` (flax, optax, equinox, ODE integrators, whole programs). Every value is computed by
`jax.jit` of the function or transform on CPU, with x64 on; inputs come from
`numpy.random.default_rng([SEED, crc32(id)])`, drawn in the README's order.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout's eval, for the fixture format
from eval.oracle import encode_array  # noqa: E402

SCHEMA = "jaxpr-oracle/1"
SEED = 20261127
BATCH = 3
SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16", "complex128": "c128",
         "complex64": "c64", "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
         "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64"}
# rtol = atol of each tolerance class (tests/oracle/README.md#tolerances, plus `f32-internal` of the delta).
TOLERANCE = {"exact": 0.0, "f64": 1e-12, "accum": 1e-10, "loose": 1e-9, "f32": 1e-5, "f32-internal": 1e-5,
             "f16": 1e-3, "bf16": 1e-2}
LOW_PRECISION = ("bf16", "f16", "f32")  # lowest first, as the jaxpr text spells them


# ---- input domains: each is a function of the case's generator returning one array -------------------------

Domain = Callable[[np.random.Generator], np.ndarray]


def U(*shape: int, lo: float = -2.0, hi: float = 2.0, dtype: str = "float64") -> Domain:
    return lambda rng: rng.uniform(lo, hi, size=shape).astype(dtype)


def N(*shape: int, scale: float = 1.0, dtype: str = "float64") -> Domain:
    return lambda rng: (scale * rng.standard_normal(size=shape)).astype(dtype)


def P(*shape: int, lo: float = 0.2, hi: float = 3.0) -> Domain:
    return U(*shape, lo=lo, hi=hi)


def I(*shape: int, lo: int = 0, hi: int = 5, dtype: str = "int32") -> Domain:  # noqa: E743
    return lambda rng: rng.integers(lo, hi, size=shape).astype(dtype)


def B(*shape: int) -> Domain:
    return lambda rng: rng.random(size=shape) < 0.5


def KEY() -> Domain:
    """A raw threefry key, `uint32[2]`."""
    return lambda rng: rng.integers(0, 2**32, size=2, dtype=np.uint64).astype(np.uint32)


def SPD(n: int, batch: tuple[int, ...] = ()) -> Domain:
    def draw(rng):
        a = rng.standard_normal(size=(*batch, n, n))
        return a @ np.swapaxes(a, -1, -2) / n + np.eye(n)
    return draw


def WELL(n: int) -> Domain:
    """A well-conditioned square matrix: identity plus a small perturbation."""
    return lambda rng: np.eye(n) * 2.0 + 0.4 * rng.standard_normal(size=(n, n))


def SEPARATED(n: int) -> Domain:
    """A symmetric matrix with a well-separated spectrum (eigenvalues 1, 2.5, 4, ...)."""
    def draw(rng):
        q, _ = np.linalg.qr(rng.standard_normal(size=(n, n)))
        return (q * (1.0 + 1.5 * np.arange(n))) @ q.T
    return draw


def SIMPLEX(*shape: int) -> Domain:
    def draw(rng):
        p = rng.uniform(0.1, 1.0, size=shape)
        return p / p.sum(axis=-1, keepdims=True)
    return draw


def WITH(domain: Domain, points: Sequence[float]) -> Domain:
    """`domain`, with its first flat elements replaced by `points` (kinks, zeros, special values)."""
    def draw(rng):
        a = np.array(domain(rng))
        flat = a.reshape(-1)
        flat[:len(points)] = points
        return flat.reshape(a.shape)
    return draw


# ---- case specs -----------------------------------------------------------------------------------------------

@dataclass
class Spec:
    family: str
    name: str
    fn: Callable
    args: Sequence[Domain]
    tol: str = "f64"
    tags: tuple[str, ...] = ()
    variant: str = ""
    program: bool = False
    vmap_axes: tuple | None = None  # default: every arg mapped (programs: arg 0 only)
    argnums: tuple[int, ...] | None = None  # programs: default every float arg
    hessian: bool = True
    transforms: tuple[str, ...] = ("jvp", "vjp", "vmap")
    extra: dict = field(default_factory=dict)

    def signature(self) -> str:
        rng = np.random.default_rng(0)
        return ",".join(f"{SHORT[np.asarray(a).dtype.name]}{list(np.shape(a))}".replace(" ", "")
                        for a in (d(rng) for d in self.args)) or "()"

    @property
    def id(self) -> str:
        if self.program:
            return f"program/{self.name}"
        middle = f"{self.name}/{self.variant}" if self.variant else self.name
        return f"{middle}/{self.signature()}"


CASES: list[Spec] = []


def case(family: str, name: str, fn: Callable, *args: Domain, **kw) -> Spec:
    spec = Spec(family, name, fn, args, **kw)
    CASES.append(spec)
    return spec


def program(family: str, name: str, fn: Callable, *args: Domain, **kw) -> Spec:
    return case(family, name, fn, *args, program=True, tol=kw.pop("tol", "loose"),
                tags=("program", *kw.pop("tags", ())), **kw)


# ---- encoding -------------------------------------------------------------------------------------------------

def is_float(a) -> bool:
    dt = np.asarray(a).dtype
    return dt.kind in "fc" or dt.name == "bfloat16"


# ---- the jaxpr: primitives and nested constants ---------------------------------------------------------------

class Refused(Exception):
    """A case the schema cannot hold (e.g. a nested jaxpr with constants the text does not show)."""


def _sub_jaxprs(value):
    """(jaxpr, how many constants it holds) of each jaxpr in a param value: a Jaxpr's constvars or a
    ClosedJaxpr's consts, which the text of a nested jaxpr names but never shows."""
    if hasattr(value, "eqns"):
        yield value, len(value.constvars)
    elif hasattr(value, "jaxpr") and hasattr(value, "consts"):
        yield value.jaxpr, len(value.consts) + len(value.jaxpr.constvars)
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _sub_jaxprs(v)


def primitives(jaxpr, nested: bool = False) -> set[str]:
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for value in eqn.params.values():
            for sub, consts in _sub_jaxprs(value):
                if consts:
                    raise Refused(f"{eqn.primitive.name} holds a sub-jaxpr with {consts} constants")
                names |= primitives(sub, True)
    return names


# ---- recording one case ---------------------------------------------------------------------------------------

def _leaves(tree) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def _float0(a) -> np.ndarray:
    return np.zeros(np.shape(a), dtype=jax.dtypes.float0)


def _tolerance(args, outs, text: str, tol: str) -> tuple[float, dict | None]:
    floats = [np.asarray(a).dtype.name for a in [*args, *outs] if is_float(a)]
    if not floats:
        return TOLERANCE["exact"], None
    for short, names in (("bf16", ("bfloat16",)), ("f16", ("float16",)), ("f32", ("float32", "complex64"))):
        if any(n in names for n in floats):
            return TOLERANCE[short], None
    for short in LOW_PRECISION:
        if f"{short}[" in text:
            reason = f"float64 in and out, but XLA computes some steps in {short} (the jaxpr holds {short} values)"
            return TOLERANCE["f32-internal"], {"class": "f32-internal", "reason": reason}
    return TOLERANCE[tol], None


def record(spec: Spec) -> dict:
    f = spec.fn
    rng = np.random.default_rng([SEED, zlib.crc32(spec.id.encode())])
    args = [np.asarray(d(rng)) for d in spec.args]
    closed = jax.make_jaxpr(f)(*args)
    prims = primitives(closed.jaxpr)
    text = str(closed)
    outs = _leaves(jax.jit(f)(*args))
    out_tree = jax.tree_util.tree_structure(jax.eval_shape(f, *args))
    fin = [is_float(a) for a in args]
    fout = [is_float(o) for o in outs]

    tangents = [np.asarray(rng.standard_normal(size=a.shape)).astype(a.dtype) if fl else None
                for a, fl in zip(args, fin, strict=True)]
    cotangents = [np.asarray(rng.standard_normal(size=o.shape)).astype(o.dtype) if fl else None
                  for o, fl in zip(outs, fout, strict=True)]
    axes = list(spec.vmap_axes) if spec.vmap_axes is not None else (
        [0] + [None] * (len(args) - 1) if spec.program else [0] * len(args))
    vmap_args = [np.stack([np.asarray(spec.args[i](rng)) for _ in range(BATCH)]) if ax == 0 else a
                 for i, (a, ax) in enumerate(zip(args, axes, strict=True))]
    if spec.program:
        vg_args = [np.stack([np.asarray(spec.args[0](rng)) for _ in range(BATCH)]), *args[1:]]

    dtypes = sorted({a.dtype.name for a in args})
    tags = sorted(f"primitive:{p}" for p in prims) + list(spec.tags) + [f"dtype:{d}" for d in dtypes]
    result: dict = {"id": spec.id, "tags": tags, "jaxpr": text}
    if closed.consts:
        result["consts"] = [encode_array(c) for c in closed.consts]
    result["args"] = [encode_array(a) for a in args]
    result["out"] = [encode_array(o) for o in outs]
    refused: list[str] = []

    def attempt(key: str, compute: Callable[[], dict]) -> None:
        try:
            result[key] = compute()
        except Exception as e:  # JAX refuses the transform: the key is absent, as in the oracle
            refused.append(f"{key}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")

    def jvp() -> dict:
        def run(primals, float_tangents):
            it = iter(float_tangents)
            full = [next(it) if fl else _float0(a) for a, fl in zip(args, fin, strict=True)]
            return jax.jvp(f, tuple(primals), tuple(full))[1]
        got = _leaves(jax.jit(run)(args, [t for t in tangents if t is not None]))
        return {"tangents": [encode_array(t) for t in tangents],
                "out_tangents": [encode_array(g) if fl else None for g, fl in zip(got, fout, strict=True)]}

    def vjp() -> dict:
        def run(primals, float_cts):
            it = iter(float_cts)
            full = [next(it) if fl else _float0(o) for o, fl in zip(outs, fout, strict=True)]
            _, pullback = jax.vjp(f, *primals)
            return pullback(jax.tree_util.tree_unflatten(out_tree, full))
        got = list(jax.jit(run)(args, [c for c in cotangents if c is not None]))
        return {"cotangents": [encode_array(c) for c in cotangents],
                "arg_cotangents": [encode_array(g) if fl else None for g, fl in zip(got, fin, strict=True)]}

    def vmap() -> dict:
        got = _leaves(jax.jit(jax.vmap(f, in_axes=tuple(axes)))(*vmap_args))
        return {"in_axes": axes, "args": [encode_array(a) for a in vmap_args], "out": [encode_array(o) for o in got]}

    for key, compute in (("jvp", jvp), ("vjp", vjp), ("vmap", vmap)):
        if key in spec.transforms:
            attempt(key, compute)
    if spec.program:
        _record_program(spec, args, vg_args, fin, result, attempt)
    rtol, tolerance = _tolerance(args, outs, text, spec.tol)
    result["rtol"] = result["atol"] = rtol
    if tolerance:
        result["tolerance"] = tolerance
    if refused:
        print(f"  {spec.id}: JAX refuses {'; '.join(refused)}", file=sys.stderr)
    return result


def _record_program(spec: Spec, args, vg_args, fin, result: dict, attempt) -> None:
    f = spec.fn
    out = jax.eval_shape(f, *args)
    if getattr(out, "shape", None) != () or out.dtype != np.float64:
        raise Refused("a program has one float64 scalar output")
    argnums = tuple(spec.argnums if spec.argnums is not None else (i for i, fl in enumerate(fin) if fl))

    def grad() -> dict:
        got = _leaves(jax.jit(jax.grad(f, argnums=argnums))(*args))
        closed = jax.make_jaxpr(jax.grad(f, argnums=argnums))(*args)
        d = {"argnums": list(argnums), "out": [encode_array(g) for g in got], "jaxpr": str(closed)}
        if closed.consts:
            d["consts"] = [encode_array(c) for c in closed.consts]
        return d

    def hessian() -> dict:
        return {"argnum": 0, "out": encode_array(jax.jit(jax.hessian(f, argnums=0))(*args))}

    def vmap_grad() -> dict:
        axes = [0] + [None] * (len(args) - 1)
        got = _leaves(jax.jit(jax.vmap(jax.grad(f, argnums=argnums), in_axes=tuple(axes)))(*vg_args))
        return {"argnums": list(argnums), "in_axes": axes, "args": [encode_array(a) for a in vg_args],
                "out": [encode_array(g) for g in got]}

    def grad_grad() -> dict:
        gg = jax.grad(jax.grad(f))
        closed = jax.make_jaxpr(gg)(*args)
        d = {"out": encode_array(jax.jit(gg)(*args)), "jaxpr": str(closed)}
        if closed.consts:
            d["consts"] = [encode_array(c) for c in closed.consts]
        return d

    attempt("grad", grad)
    if spec.hessian and fin[0] and args[0].size <= 16:
        attempt("hessian", hessian)
    attempt("vmap_grad", vmap_grad)
    if len(args) == 1 and args[0].shape == () and args[0].dtype == np.float64:
        attempt("grad_grad", grad_grad)


# ---- writing --------------------------------------------------------------------------------------------------

def write_family(path: Path, family: str, cases: list[dict]) -> None:
    header = [f'"schema": {json.dumps(SCHEMA)}', f'"jax_version": {json.dumps(jax.__version__)}', '"x64": true',
              f'"family": {json.dumps(family)}']
    body = ",\n".join(json.dumps(c, allow_nan=False) for c in cases)
    path.write_text("{\n" + ",\n".join(header) + ',\n"cases": [\n' + body + "\n]}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", default="", help="record only cases whose id starts with this")
    opts = parser.parse_args(argv)
    import cases_functions  # noqa: F401  (fill CASES)
    import cases_models  # noqa: F401

    ids = [s.id for s in CASES]
    oracle = Path(__file__).resolve().parents[1] / "oracle"
    taken = {c["id"] for f in oracle.glob("*.json") for c in json.loads(f.read_text())["cases"]}
    duplicates = sorted({i for i in ids if ids.count(i) > 1 or i in taken})
    if duplicates:
        raise SystemExit(f"case ids repeated or already in tests/oracle: {duplicates}")
    by_family: dict[str, list[dict]] = {}
    refused = []
    for spec in CASES:
        if not spec.id.startswith(opts.only):
            continue
        try:
            by_family.setdefault(spec.family, []).append(record(spec))
        except Refused as e:
            refused.append(f"{spec.id}: {e}")
    opts.out.mkdir(parents=True, exist_ok=True)
    for family, cases in sorted(by_family.items()):
        write_family(opts.out / f"{family}.json", family, cases)
        print(f"{family}: {len(cases)} cases")
    for r in refused:
        print(f"refused {r}", file=sys.stderr)
    print(f"{sum(map(len, by_family.values()))} cases written, {len(refused)} refused")
    return 0


if __name__ == "__main__":
    # The case tables import this module as `capture`; run that one, not a second copy as __main__.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import capture

    raise SystemExit(capture.main())
