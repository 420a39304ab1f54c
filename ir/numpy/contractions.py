"""ir.numpy contractions: matmul, dot, tensordot, einsum."""

from __future__ import annotations

import numpy as np

from ir import lax
from ir.lax import to_dtype
from ir.numpy._base import _canon_axis, _python_max, ndim, promote_dtypes, result_type, shape, size, uint32
from ir.numpy.elementwise import conj, multiply
from ir.numpy.manipulation import _tracer_like, ravel, reshape

__all__ = [
    'matmul', 'dot', 'vdot', 'inner', 'outer', 'tensordot', 'einsum',
]

def matmul(a, b, precision=None, preferred_element_type=None):
    """JAX's matmul: batch dims broadcast (size-1 ones squeezed), one dot_general, then a transpose."""
    a, b = promote_dtypes(_tracer_like(a), _tracer_like(b))
    for i, x in enumerate((a, b)):
        if ndim(x) < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1")
    pet = result_type(a, b) if preferred_element_type is None else to_dtype(preferred_element_type)
    sa, sb = shape(a), shape(b)
    a_is_mat, b_is_mat = len(sa) > 1, len(sb) > 1
    a_batch = sa[:-2] if a_is_mat else ()
    b_batch = sb[:-2] if b_is_mat else ()
    nbatch = _python_max(len(a_batch), len(b_batch))
    a_batch = (None,) * (nbatch - len(a_batch)) + a_batch
    b_batch = (None,) * (nbatch - len(b_batch)) + b_batch
    a_squeeze, b_squeeze, a_bdims, b_bdims = [], [], [], []
    idx_batch, idx_a_other, idx_b_other = [], [], []
    for i, (ba, bb) in enumerate(zip(a_batch, b_batch, strict=True)):
        if ba is None:
            idx_b_other.append(i)
        elif bb is None:
            idx_a_other.append(i)
        elif ba == 1:
            idx_b_other.append(i)
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
        elif bb == 1:
            idx_a_other.append(i)
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
        elif ba == bb:
            a_bdims.append(len(idx_batch) + len(idx_a_other))
            b_bdims.append(len(idx_batch) + len(idx_b_other))
            idx_batch.append(i)
        else:
            raise ValueError(f"incompatible shapes for matmul: {sa} and {sb}")
    if a_is_mat:
        idx_a_other.append(nbatch)
    if b_is_mat:
        idx_b_other.append(nbatch + a_is_mat)
    perm = tuple(int(p) for p in np.argsort(np.array(idx_batch + idx_a_other + idx_b_other, dtype=np.int64)))
    a = lax.squeeze(a, a_squeeze)
    b = lax.squeeze(b, b_squeeze)
    out = lax.dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 1 - b_is_mat,)), (a_bdims, b_bdims)),
                          precision=precision, preferred_element_type=pet)
    return lax.transpose(out, perm)


def dot(a, b, precision=None, preferred_element_type=None):
    a, b = promote_dtypes(_tracer_like(a), _tracer_like(b))
    pet = result_type(a, b) if preferred_element_type is None else to_dtype(preferred_element_type)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        return multiply(a, b)
    contract = ((na - 1,), (0,)) if nb == 1 else ((na - 1,), (nb - 2,))
    return lax.dot_general(a, b, (contract, ((), ())), precision=precision, preferred_element_type=pet)


def vdot(a, b):
    return dot(ravel(conj(a)), ravel(b))


def inner(a, b):
    a, b = promote_dtypes(_tracer_like(a), _tracer_like(b))
    if ndim(a) == 0 or ndim(b) == 0:
        return multiply(a, b)
    return lax.dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 1,)), ((), ())),
                           preferred_element_type=result_type(a, b))


def outer(a, b):
    return multiply(reshape(a, (size(a), 1)), ravel(b))


def tensordot(a, b, axes=2):
    a, b = promote_dtypes(_tracer_like(a), _tracer_like(b))
    if isinstance(axes, int):
        ca, cb = tuple(range(ndim(a) - axes, ndim(a))), tuple(range(axes))
    else:
        ca, cb = ((axes[0],) if isinstance(axes[0], int) else tuple(axes[0]),
                  (axes[1],) if isinstance(axes[1], int) else tuple(axes[1]))
        ca = tuple(_canon_axis(x, ndim(a)) for x in ca)
        cb = tuple(_canon_axis(x, ndim(b)) for x in cb)
    return lax.dot_general(a, b, ((ca, cb), ((), ())), preferred_element_type=result_type(a, b))


def einsum(subscripts: str, *operands, precision=None, preferred_element_type=None):
    """Explicit or implicit einsum without ellipses; operands are contracted left to right."""
    if "." in subscripts:
        raise NotImplementedError("einsum with ellipsis ('...')")
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        ins, out_names = spec.split("->")
    else:
        ins = spec
        letters = ins.replace(",", "")
        out_names = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    in_names = ins.split(",")
    if len(in_names) != len(operands):
        raise ValueError(f"einsum: {len(in_names)} input specs for {len(operands)} operands")
    ops = promote_dtypes(*(_tracer_like(o) for o in operands))
    pet = result_type(*ops) if preferred_element_type is None else to_dtype(preferred_element_type)
    for names, op in zip(in_names, ops, strict=True):
        if len(names) != ndim(op):
            raise ValueError(f"einsum: spec {names!r} does not match an operand of rank {ndim(op)}")
    terms = list(zip(ops, in_names, strict=True))
    x, xn = _einsum_reduce_single(*terms[0], _keep=set(out_names) | set("".join(in_names[1:])))
    for k in range(1, len(terms)):
        later = set(out_names) | set("".join(in_names[k + 1:]))
        y, yn = _einsum_reduce_single(*terms[k], _keep=later | set(xn))
        x, xn = _einsum_reduce_single(x, xn, _keep=later | set(yn))
        shared = [c for c in xn if c in yn]
        batch = [c for c in shared if c in later]
        contract = [c for c in shared if c not in later]
        dn = (([xn.index(c) for c in contract], [yn.index(c) for c in contract]),
              ([xn.index(c) for c in batch], [yn.index(c) for c in batch]))
        x = lax.dot_general(x, y, dn, precision=precision, preferred_element_type=pet)
        free_x, free_y = (c for c in xn if c not in shared), (c for c in yn if c not in shared)
        xn = "".join(batch) + "".join(free_x) + "".join(free_y)
    x, xn = _einsum_reduce_single(x, xn, _keep=set(out_names))
    if sorted(xn) != sorted(out_names):
        raise ValueError(f"einsum: output spec {out_names!r} does not match the inputs")
    return lax.transpose(x, tuple(xn.index(c) for c in out_names))


def _einsum_reduce_single(x, names: str, _keep: set[str]):
    """Take diagonals of repeated names and sum out names nobody else needs."""
    for c in sorted({c for c in names if names.count(c) > 1}):
        first, second = names.index(c), names.index(c, names.index(c) + 1)
        s = shape(x)
        mask = lax.eq(lax.broadcasted_iota(uint32, s, first), lax.broadcasted_iota(uint32, s, second))
        x = lax.select(mask, x, lax.full_like(x, 0))
        if c in _keep:
            x = lax.reduce_sum(x, (second,))
            names = names[:second] + names[second + 1:]
        else:
            axes = (first, second)
            x = lax.reduce_sum(x, axes)
            names = "".join(n for i, n in enumerate(names) if i not in axes)
    drop = [i for i, c in enumerate(names) if c not in _keep]
    if drop:
        x = lax.reduce_sum(x, drop)
        names = "".join(c for i, c in enumerate(names) if i not in drop)
    return x, names
