"""NumPy implementation of `fft` (eval/impls/fft.py), against the JAX oracle and against dense DFT matrices.

The reference applies the DFT matrix exp(∓2πi jk/n) along each transformed axis in complex128; IRFFT
extends the half spectrum Hermitian-wise after the complex inverse over the leading axes, reading only
the real parts of the zero-frequency and Nyquist entries, as XLA (pocketfft/ducc) and NumPy do.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from eval.oracle import load_fixtures, run_conformance
from eval.registry import get_impl
from ir.params import Symbol
from tests.oracle_paths import ORACLE

FFT, IFFT, RFFT, IRFFT = range(4)


def run(x, fft_type, lengths):
    return get_impl("fft")(x, fft_type=fft_type, fft_lengths=tuple(lengths))


def dft(x, axis: int, inverse: bool) -> np.ndarray:
    n = x.shape[axis]
    k = np.arange(n)
    w = np.exp((2j if inverse else -2j) * np.pi * np.outer(k, k) / n) / (n if inverse else 1)
    return np.moveaxis(np.tensordot(np.moveaxis(x.astype(np.complex128), axis, -1), w, axes=([-1], [0])), -1, axis)


def hermitian_inverse(x, n: int) -> np.ndarray:
    """c2r along the last axis: x_k = (Re X_0 + 2 Σ Re(X_j ω^jk) + [n even] Re(X_{n/2}) (-1)^k) / n."""
    j, k = np.arange(x.shape[-1]), np.arange(n)
    weights = np.where((j == 0) | ((n % 2 == 0) & (j == n // 2)), 1.0, 2.0)
    w = weights[:, None] * np.exp(2j * np.pi * np.outer(j, k) / n) / n
    return np.real(np.tensordot(x.astype(np.complex128), w, axes=([-1], [0])))


def reference(x, kind: int, lengths) -> np.ndarray:
    axes = range(x.ndim - len(lengths), x.ndim)
    if kind in (FFT, IFFT):
        for a in axes:
            x = dft(x, a, kind == IFFT)
        return x
    if kind == RFFT:
        for a in axes:
            x = dft(x, a, False)
        return x[..., :lengths[-1] // 2 + 1]
    for a in list(axes)[:-1]:
        x = dft(x, a, True)
    return hermitian_inverse(x, lengths[-1])


# --- the oracle --------------------------------------------------------------------------------------


def test_oracle_outputs():
    cases = load_fixtures([ORACLE], ["fft"])
    outcomes = run_conformance(cases, ["out"])
    assert len(outcomes) == len(cases) == 16
    assert [f"{o.case}: {o.reason}" for o in outcomes if o.status != "passed"] == []


# --- against the DFT matrices ------------------------------------------------------------------------


@st.composite
def fft_configs(draw):
    """A transform type, 1 to 3 transformed lengths (odd and even, 1 included) and up to 2 batch axes."""
    kind = draw(st.sampled_from((FFT, IFFT, RFFT, IRFFT)))
    lengths = tuple(draw(st.lists(st.integers(1, 7), min_size=1, max_size=3)))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    return kind, lengths, batch


def operand(rng, kind: int, lengths, batch, dtype=np.float64) -> np.ndarray:
    shape = batch + lengths[:-1] + ((lengths[-1] // 2 + 1,) if kind == IRFFT else lengths[-1:])
    x = rng.standard_normal(shape).astype(dtype)
    return x if kind == RFFT else (x + 1j * rng.standard_normal(shape)).astype(np.result_type(dtype, np.complex64))


@given(fft_configs(), st.integers(0, 2**31 - 1))
def test_against_dft_matrices(transform, seed):
    kind, lengths, batch = transform
    x = operand(np.random.default_rng(seed), kind, lengths, batch)
    got = run(x, kind, lengths)
    want = reference(x, kind, lengths)
    assert got.dtype == (np.float64 if kind == IRFFT else np.complex128)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("kind, dtype, out", [(FFT, np.complex64, np.complex64), (IFFT, np.complex64, np.complex64),
                                              (RFFT, np.float32, np.complex64), (IRFFT, np.complex64, np.float32)])
def test_single_precision_stays_single(kind, dtype, out):
    x = operand(np.random.default_rng(kind), kind, (4, 6), (2,), np.float32)
    assert x.dtype == dtype
    got = run(x, kind, (4, 6))
    assert got.dtype == out
    want = reference(x, kind, (4, 6))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


def test_irfft_ignores_imaginary_parts_of_zero_and_nyquist_frequencies():
    rng = np.random.default_rng(0)
    for n in (6, 7):
        x = operand(rng, IRFFT, (n,), (2,))
        y = x.copy()
        y[..., 0] += 5j
        if n % 2 == 0:
            y[..., -1] -= 3j
        np.testing.assert_array_equal(run(x, IRFFT, (n,)), run(y, IRFFT, (n,)))


def test_irfft_inverts_rfft():
    x = np.random.default_rng(1).standard_normal((3, 4, 5))
    np.testing.assert_allclose(run(run(x, RFFT, (4, 5)), IRFFT, (4, 5)), x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", [FFT, IFFT, RFFT, IRFFT])
def test_enum_names_mean_the_codes(kind):
    x = operand(np.random.default_rng(2), kind, (3, 4), ())
    name = Symbol(f"FftType.{('FFT', 'IFFT', 'RFFT', 'IRFFT')[kind]}")
    np.testing.assert_array_equal(run(x, name, (3, 4)), run(x, kind, (3, 4)))


@pytest.mark.parametrize("kind, shape, out_shape", [(FFT, (0, 8), (0, 8)), (RFFT, (0, 8), (0, 5)),
                                                     (IRFFT, (0, 5), (0, 8)), (FFT, (2, 0), (2, 0))])
def test_empty_operands_give_empty_results(kind, shape, out_shape):
    x = np.zeros(shape, np.float64 if kind == RFFT else np.complex128)
    lengths = (8,) if kind != FFT or shape[1] else (0,)
    got = run(x, kind, lengths)
    assert got.shape == out_shape and got.dtype == (np.complex128 if kind != IRFFT else np.float64)


def test_rfft_of_length_zero_is_refused():
    with pytest.raises(ValueError, match="fft"):
        run(np.zeros((2, 0)), RFFT, (0,))
