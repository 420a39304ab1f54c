"""NumPy implementation of `fft` (jax/_src/lax/fft.py): FFT, IFFT, RFFT and IRFFT over the trailing
len(fft_lengths) axes.

`scipy.fft` (pocketfft, the library XLA's CPU FFT descends from) computes float32/complex64 in single
precision as XLA does; `numpy.fft` would compute in double. IRFFT's operand has n//2+1 entries on the
last axis (`jnp.fft.irfft` pads or truncates it before the primitive); like XLA, it reads the
operand as the non-redundant half of a Hermitian spectrum, ignoring the imaginary parts of the
zero-frequency entry (and of the Nyquist entry for even n).
"""

from __future__ import annotations

import numpy as np
import scipy.fft

from eval.registry import impl
from ir.core import ShapedArray
from ir.dtypes import from_numpy
from ir.params import as_ints
from ir.shapes.fft import FFT, IFFT, RFFT, fft_rule, fft_type_code

_TRANSFORMS = {
    FFT: lambda x, lengths, axes: scipy.fft.fftn(x, axes=axes),
    IFFT: lambda x, lengths, axes: scipy.fft.ifftn(x, axes=axes),
    RFFT: lambda x, lengths, axes: scipy.fft.rfftn(x, axes=axes),
}


def _irfft(x, lengths, axes):
    return scipy.fft.irfftn(x, s=lengths, axes=axes)


@impl("fft")
def fft(x, *, fft_type, fft_lengths):
    kind, lengths = fft_type_code(fft_type), as_ints(fft_lengths)
    [out] = fft_rule(ShapedArray(x.shape, from_numpy(x.dtype)), fft_type=fft_type, fft_lengths=fft_lengths)
    dtype = out.dtype.numpy
    if out.size == 0:
        return np.zeros(out.shape, dtype)
    if 0 in lengths:
        raise ValueError(f"fft: a transformed axis of length 0 (fft_lengths={lengths}) has no RFFT")
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    transform = _TRANSFORMS.get(kind, _irfft)
    return np.asarray(transform(x, lengths, axes), dtype=dtype)
