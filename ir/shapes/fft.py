"""Shape/dtype rule of `fft` (jax/_src/lax/fft.py, `fft_abstract_eval`).

`fft_type` prints as an int (0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT) or, in other JAX versions, as an
enum name (`FftType.RFFT`); `fft_lengths` are the sizes of the trailing transformed axes.
"""

from __future__ import annotations

from ir.core import ShapedArray
from ir.dtypes import complex64, complex128, float32, float64
from ir.errors import JaxprTypeError
from ir.params import as_ints
from ir.primitives import shape_rule

FFT, IFFT, RFFT, IRFFT = range(4)
_TYPE_NAMES = {"FFT": FFT, "IFFT": IFFT, "RFFT": RFFT, "IRFFT": IRFFT}
_COMPLEX_OF = {float32: complex64, float64: complex128}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def fft_type_code(value) -> int:
    """The fft_type param as 0..3, from `2` or `FftType.RFFT`."""
    if isinstance(value, int) and not isinstance(value, bool) and value in range(4):
        return int(value)
    if isinstance(value, str) and value.rsplit(".", 1)[-1] in _TYPE_NAMES:
        return _TYPE_NAMES[value.rsplit(".", 1)[-1]]
    raise JaxprTypeError("unknown fft_type", primitive="fft", expected="0..3 (FFT, IFFT, RFFT, IRFFT)",
                         actual=repr(value))


@shape_rule("fft")
def fft_rule(x: ShapedArray, *, fft_type, fft_lengths, **_) -> list[ShapedArray]:
    kind, lengths = fft_type_code(fft_type), as_ints(fft_lengths)
    if not lengths or len(lengths) > x.ndim:
        raise JaxprTypeError("fft_lengths must name between 1 and rank(x) trailing axes", primitive="fft",
                             expected=f"1..{x.ndim} lengths", actual=lengths)
    batch, axes = x.shape[:-len(lengths)], x.shape[-len(lengths):]
    if kind == RFFT:
        if x.dtype not in _COMPLEX_OF:
            raise JaxprTypeError("RFFT takes a real operand", primitive="fft", expected="f32 or f64",
                                 actual=str(x))
        if axes != lengths:
            raise JaxprTypeError("trailing axes must equal fft_lengths", primitive="fft",
                                 expected=lengths, actual=str(x))
        return [ShapedArray(batch + lengths[:-1] + (lengths[-1] // 2 + 1,), _COMPLEX_OF[x.dtype])]
    if x.dtype not in _REAL_OF:
        raise JaxprTypeError(f"{('FFT', 'IFFT', 'RFFT', 'IRFFT')[kind]} takes a complex operand",
                             primitive="fft", expected="c64 or c128", actual=str(x))
    if kind == IRFFT:
        want = lengths[:-1] + (lengths[-1] // 2 + 1,)
        if axes != want:
            raise JaxprTypeError("IRFFT trailing axes must be fft_lengths with the last one n//2+1",
                                 primitive="fft", expected=want, actual=str(x))
        return [ShapedArray(batch + lengths, _REAL_OF[x.dtype])]
    if axes != lengths:
        raise JaxprTypeError("trailing axes must equal fft_lengths", primitive="fft", expected=lengths,
                             actual=str(x))
    return [ShapedArray(x.shape, x.dtype)]
