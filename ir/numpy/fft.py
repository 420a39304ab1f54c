"""`jax.numpy.fft` for traced code: the `fft` primitive over the trailing axes, with axes moved there
and inputs cropped or zero-padded to `n`, as jax.numpy.fft."""

from __future__ import annotations

import numpy as np

from ir import lax
from ir.numpy._base import _canon_axis, _promote_args, complex128, ndim, shape
from ir.numpy.creation import asarray
from ir.numpy.elementwise import multiply
from ir.numpy.layout import roll
from ir.numpy.manipulation import _tracer_like, moveaxis

__all__ = [
    'fft', 'ifft', 'rfft', 'irfft', 'fftn', 'ifftn', 'rfftn', 'irfftn', 'fft2', 'ifft2', 'rfft2', 'irfft2',
    'hfft', 'ihfft', 'fftfreq', 'rfftfreq', 'fftshift', 'ifftshift',
]

_FFT, _IFFT, _RFFT, _IRFFT = 0, 1, 2, 3


def _resize(a, axis: int, n: int):
    size = shape(a)[axis]
    if n < size:
        return lax.slice_in_dim(a, 0, n, axis=axis)
    if n > size:
        config = [(0, 0, 0)] * ndim(a)
        config[axis] = (0, n - size, 0)
        return lax.pad(a, lax_zero(a), config)
    return a


def lax_zero(a):
    from ir.tracing import literal
    return literal(0, a.dtype, False)


def _fftn(a, fft_type: int, s, axes, norm):
    a = _tracer_like(a)
    (a,) = _promote_args("fft", a, kind="inexact")
    if fft_type in (_FFT, _IFFT, _IRFFT) and not a.dtype.is_complex:
        a = lax.convert_element_type(a, complex128 if a.dtype.bits == 64 else lax.to_dtype("complex64"))
    if fft_type == _RFFT and a.dtype.is_complex:
        raise TypeError("rfft needs a real input")
    if axes is None:
        axes = tuple(range(ndim(a))) if s is None else tuple(range(ndim(a) - len(s), ndim(a)))
    axes = tuple(_canon_axis(x, ndim(a)) for x in axes)
    if s is None:
        s = [shape(a)[x] for x in axes]
        if fft_type == _IRFFT:
            s[-1] = 2 * (s[-1] - 1)
    s = list(s)
    for x, n in zip(axes, s, strict=True):
        a = _resize(a, x, n // 2 + 1 if (fft_type == _IRFFT and x == axes[-1]) else n)
    k = len(axes)
    a = moveaxis(a, axes, tuple(range(ndim(a) - k, ndim(a))))
    out = lax.fft(a, fft_type, s)
    out = moveaxis(out, tuple(range(ndim(out) - k, ndim(out))), axes)
    return _normalize(out, fft_type, s, norm)


def _normalize(out, fft_type: int, s, norm):
    n = float(np.prod(s))
    inverse = fft_type in (_IFFT, _IRFFT)
    if norm in (None, "backward"):
        return out
    if norm == "ortho":
        factor = np.sqrt(n) if inverse else 1 / np.sqrt(n)
    elif norm == "forward":
        factor = n if inverse else 1 / n
    else:
        raise ValueError(f"invalid norm {norm!r}")
    return multiply(out, float(factor))


def fft(a, n=None, axis: int = -1, norm=None):
    return _fftn(a, _FFT, None if n is None else [n], (axis,), norm)


def ifft(a, n=None, axis: int = -1, norm=None):
    return _fftn(a, _IFFT, None if n is None else [n], (axis,), norm)


def rfft(a, n=None, axis: int = -1, norm=None):
    return _fftn(a, _RFFT, None if n is None else [n], (axis,), norm)


def irfft(a, n=None, axis: int = -1, norm=None):
    return _fftn(a, _IRFFT, None if n is None else [n], (axis,), norm)


def fftn(a, s=None, axes=None, norm=None):
    return _fftn(a, _FFT, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    return _fftn(a, _IFFT, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    return _fftn(a, _RFFT, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    return _fftn(a, _IRFFT, s, axes, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return fftn(a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return ifftn(a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return irfftn(a, s, axes, norm)


def hfft(a, n=None, axis: int = -1, norm=None):
    """FFT of a Hermitian-symmetric signal: irfft of the conjugate, scaled by n."""
    a = _tracer_like(a)
    n_out = 2 * (shape(a)[axis] - 1) if n is None else n
    conj = lax.conj(a) if a.dtype.is_complex else a
    out = irfft(conj, n_out, axis, None)
    if norm in (None, "backward"):
        return multiply(out, float(n_out))
    return irfft(conj, n_out, axis, {"ortho": "ortho", "forward": "backward"}[norm]) if norm == "ortho" else out


def ihfft(a, n=None, axis: int = -1, norm=None):
    a = _tracer_like(a)
    n_in = shape(a)[axis] if n is None else n
    out = rfft(a, n, axis, None)
    out = lax.conj(out)
    if norm in (None, "backward"):
        return multiply(out, 1.0 / n_in)
    return multiply(out, 1.0 / np.sqrt(n_in)) if norm == "ortho" else out


def fftfreq(n: int, d=1.0, *, dtype=None):
    return asarray(np.fft.fftfreq(n, d), dtype)


def rfftfreq(n: int, d=1.0, *, dtype=None):
    return asarray(np.fft.rfftfreq(n, d), dtype)


def fftshift(x, axes=None):
    x = _tracer_like(x)
    axes = tuple(range(ndim(x))) if axes is None else ((axes,) if isinstance(axes, int) else tuple(axes))
    return roll(x, [shape(x)[a] // 2 for a in axes], axes)


def ifftshift(x, axes=None):
    x = _tracer_like(x)
    axes = tuple(range(ndim(x))) if axes is None else ((axes,) if isinstance(axes, int) else tuple(axes))
    return roll(x, [-(shape(x)[a] // 2) for a in axes], axes)
