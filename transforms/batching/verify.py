"""The batching rules checked as `eqjax rules verify --set vmap` runs them: vmap of one primitive's
equation against a loop over slices.

    verify_batching_rules() -> [Verdict("vmap-cumsum", ...), ...]

Every primitive with a batching rule is checked on the oracle's equations of it (`eval.samples`), under
each operand batched alone at axis 0 and all operands batched at their last axis, with three slices: a
float operand's slice k is the sample scaled by 1 + k/8 (sign, order and definiteness survive), an integer
or boolean one is the sample's values rolled by k (indices stay in range). The batched program (the
batching rules alone, no algebra) must give, per slice, what the unbatched program gives on that slice:
integers and booleans exactly, floats to a rounding error.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from eval.interpreter import eval_jaxpr
from eval.samples import Sample
from ir.core import ClosedJaxpr
from ir.errors import UnsupportedPrimitive
from rewrites.options import Options
from rewrites.verify import Verdict
from transforms.batching.programs import vmap_program, vmap_rules
from transforms.batching.rule import BATCH, POLICY
from transforms.sample_check import sample_verdicts

SLICES = 3
# Primitives whose batching JAX defines otherwise than as a loop over slices: not checked against one.
NOT_A_LOOP = {"rng_bit_generator": "JAX's rule draws (B, *shape) bits from the first state alone: not a loop"}


@dataclass(frozen=True)
class Config:
    """One way of batching a program: an axis or None per input, an axis per output, the batch size."""

    in_axes: tuple[int | None, ...]
    out_axes: tuple[int, ...]
    size: int

    def __str__(self) -> str:
        return f"in_axes={self.in_axes} out_axes={self.out_axes} size={self.size}"


def loop_reference(closed: ClosedJaxpr, args: Sequence, config: Config) -> list[np.ndarray]:
    """The unbatched program on each slice, its outputs stacked at `out_axes`."""
    per_slice = []
    for b in range(config.size):
        xs = [x if a is None else np.take(x, b, axis=a) for x, a in zip(args, config.in_axes, strict=True)]
        per_slice.append(eval_jaxpr(closed, *xs))
    outs = []
    for j, (aval, axis) in enumerate(zip(closed.out_avals, config.out_axes, strict=True)):
        stacked = (np.stack([np.asarray(r[j]) for r in per_slice]) if per_slice
                   else np.zeros((0, *aval.shape), aval.dtype.numpy))
        outs.append(np.moveaxis(stacked, 0, axis))
    return outs


def difference(got, want) -> str | None:
    """None when `got` is `want`: integers and booleans exactly; floats to a rounding error (a batched sum
    may associate differently from the slice's), nan where nan, infinities exactly."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"got {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}"
    if want.dtype.kind not in "fc" and want.dtype.name != "bfloat16":
        return None if np.array_equal(got, want) else f"{np.sum(got != want)} of {want.size} elements differ"
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    rtol = 1e-12 if want.dtype.itemsize >= 8 and want.dtype.kind == "f" or want.dtype.itemsize >= 16 else 1e-5
    g, w = got.astype(wide), want.astype(wide)
    scale = float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0))
    close = np.isclose(g, w, rtol=rtol, atol=rtol * max(scale, 1e-300), equal_nan=True)
    if close.all():
        return None
    k = int(np.flatnonzero(~close)[0])
    return f"{np.sum(~close)} of {want.size} elements differ, e.g. {g.flat[k]!r} vs {w.flat[k]!r}"


def sample_configs(closed: ClosedJaxpr) -> list[Config]:
    ranks = [a.ndim for a in closed.in_avals]
    outs = (0,) * len(closed.out_avals)
    alone = [tuple(0 if k == i else None for k in range(len(ranks))) for i in range(len(ranks))]
    return [Config(axes, outs, SLICES) for axes in [*alone, *([tuple(ranks)] if len(ranks) > 1 else [])]]


def _slices(x: np.ndarray, axis: int | None) -> np.ndarray:
    if axis is None:
        return x
    if x.dtype.kind in "fc":
        stacked = [x * x.dtype.type(1 + k / 8) for k in range(SLICES)]
    else:
        stacked = [np.roll(x.ravel(), k).reshape(x.shape) for k in range(SLICES)]
    return np.moveaxis(np.stack(stacked), 0, axis)


def _batching_problem(sample: Sample) -> str | None:
    prim = sample.closed.eqns[0].primitive
    if prim in NOT_A_LOOP:
        raise UnsupportedPrimitive(prim, f"a loop-over-slices check ({NOT_A_LOOP[prim]})",
                                   "transforms/batching/verify.py")
    for config in sample_configs(sample.closed):
        args = [_slices(x, a) for x, a in zip(sample.args, config.in_axes, strict=True)]
        program, _ = vmap_program(sample.closed, list(config.in_axes), list(config.out_axes), config.size,
                                  Options(rules="none"))
        got = eval_jaxpr(program, *args, check=True)
        want = loop_reference(sample.closed, args, config)
        for j, (g, w) in enumerate(zip(got, want, strict=True)):
            problem = difference(g, w)
            if problem is not None:
                return f"{config}, output {j}: {problem}"
    return None


def verify_batching_rules(per_primitive: int = 2, names: Collection[str] = ()) -> list[Verdict]:
    """One verdict per primitive with batching rules (named `vmap-<prim>`), on oracle equation samples."""
    vmap_rules()
    return sample_verdicts("vmap", set(BATCH) | set(POLICY), _batching_problem, "a loop over slices", per_primitive,
                           applies=lambda sample: bool(sample.args), names=names)
