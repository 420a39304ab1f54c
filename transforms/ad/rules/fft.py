"""JVP and VJP rules of `fft` (jax/_src/lax/fft.py, `ad.deflinear2(fft_p, _fft_transpose_rule)`).

fft is linear in its operand, so its JVP is fft of the tangent (same params). Its VJP is JAX's
`_fft_transpose_rule`, one rule per FFT type, each guarded by the case number the slot's shared values
compute (one node serves every rule of the slot):
    FFT, IFFT  the DFT matrix is symmetric: the transpose is the same transform of the cotangent;
    RFFT       `_rfft_transpose`: N * irfft(conj(ct) / mask), mask 1 at the zero frequency (and at
               the Nyquist frequency for even n) and 2 elsewhere, undoing the Hermitian halving;
    IRFFT      `_irfft_transpose`: conj((mask / N) * rfft(ct)) with the same mask.
N is the product of fft_lengths. The mask is a broadcast 2 padded on the last axis with a 1 before
(and one after for even n): `pad` holds both ends of the mask without a constant array.
"""

from __future__ import annotations

import math

from egglog import Vec, eq, f64, i64

from ir.params import Symbol, as_ints
from ir.shapes.fft import FFT, IFFT, IRFFT, RFFT, fft_type_code
from rewrites.terms import Arr, T
from transforms.ad.rule import INT, INTS, ADBook, Values, dtype, params, require

A = ADBook("fft")
EMPTY = Vec[i64].empty()
_NAMES = ("FFT", "IFFT", "RFFT", "IRFFT")

A.jvp_linear("fft", [0], math="d fft(x) = fft(dx) (linear, same params)")


def _type_like(original, kind: int):
    """fft_type `kind` printed the way the equation prints its own (an int, or `FftType.NAME`)."""
    return Symbol(f"FftType.{_NAMES[kind]}") if isinstance(original, str) else kind


def _transpose_values(params, ins, outs):
    """The case, the params of the fft node the rule builds, the mask's inner shape (the spectrum's shape
    with n - 2 + odd entries on the last axis), its padding, N, the conj params of the spectrum."""
    kind, lengths = fft_type_code(params["fft_type"]), as_ints(params["fft_lengths"])
    spectrum = ins[0] if kind == IRFFT else outs[0]
    case = {FFT: 0, IFFT: 0, RFFT: 1, IRFFT: 2}[kind]
    built = {RFFT: IRFFT, IRFFT: RFFT}.get(kind, kind)
    odd = lengths[-1] % 2
    inner = (*spectrum.shape[:-1], spectrum.shape[-1] - 2 + odd)
    config = ((0, 0, 0),) * (spectrum.ndim - 1) + ((1, 1 - odd, 0),)
    return {"case": case, "params": {**params, "fft_type": _type_like(params["fft_type"], built)}, "inner": inner,
            "pad": {"padding_config": config}, "n": math.prod(lengths), "conj": {"input_dtype": spectrum.dtype}}


def _mask(inner, pad, inside: f64, ends: f64, dt) -> Arr:
    """`inside` on every entry of the last axis but the zero frequency (and the Nyquist one for even
    n), which get `ends`."""
    return T.pad(T.broadcast_in_dim(Arr.scalar(inside, dt), inner, EMPTY), Arr.scalar(ends, dt), **pad)


def _fft(params, x: Arr) -> Arr:
    return T.fft(x, **params)


def _guarded(number: int, f):
    def rule(ct, x, ans, *, case, params, inner, pad, n, conj):
        require(eq(case).to(i64(number)))
        return f(ct, x, params, inner, pad, n, conj)

    return rule


_TRANSPOSE = Values(_transpose_values, case=INT, params=params("fft"), inner=INTS, pad=params("pad"), n=INT,
                    conj=params("conj"))
_CASES = {
    "complex": (lambda ct, x, params, inner, pad, n, conj: _fft(params, ct),
                "fft(x)^T ct = fft(ct) (FFT and IFFT: the DFT matrix is symmetric)"),
    "rfft": (lambda ct, x, params, inner, pad, n, conj: T.mul(
        Arr.scalar(f64.from_i64(n), dtype(x)),
        _fft(params, T.div(T.conj(ct, **conj), _mask(inner, pad, f64(2.0), f64(1.0), dtype(ct))))),
        "rfft(x)^T ct = N irfft(conj(ct) / mask) (JAX's _rfft_transpose)"),
    "irfft": (lambda ct, x, params, inner, pad, n, conj: T.conj(T.mul(
        _mask(inner, pad, f64(2.0) / f64.from_i64(n), f64(1.0) / f64.from_i64(n), dtype(x)),
        _fft(params, ct)), **conj),
        "irfft(x)^T ct = conj((mask / N) rfft(ct)) (JAX's _irfft_transpose)"),
}
for _case, (_name, (_f, _math)) in enumerate(_CASES.items()):
    A.vjp("fft", 0, _guarded(_case, _f), values=_TRANSPOSE, variant=_name, math=_math)
