"""ir.numpy.linalg and ir.numpy.fft against jax.numpy.linalg and jax.numpy.fft."""

import jax
import numpy as np
import pytest

import ir.numpy as inp
from tests.ir.test_numpy_surface import check

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

RNG = np.random.default_rng(11)
A = RNG.uniform(-1, 1, (4, 4)) + 3 * np.eye(4)
BATCH = RNG.uniform(-1, 1, (2, 3, 3)) + 2 * np.eye(3)
SPD = A @ A.T
RECT = RNG.uniform(-1, 1, (5, 3))
B = RNG.uniform(-1, 1, (4, 2))
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
CPLX = A + 1j * RNG.uniform(-1, 1, (4, 4))

LINALG = {
    "inv": (lambda m, a: m.linalg.inv(a), (A,)),
    "inv_batched": (lambda m, a: m.linalg.inv(a), (BATCH,)),
    "det": (lambda m, a: (m.linalg.det(a), m.linalg.det(a[:2, :2] * 0)), (A,)),
    "det_batched_complex": (lambda m, a, c: (m.linalg.det(a), m.linalg.det(c)), (BATCH, CPLX)),
    "slogdet": (lambda m, a: m.linalg.slogdet(a), (A,)),
    "slogdet_singular": (lambda m, a: m.linalg.slogdet(a), (SINGULAR,)),
    "solve": (lambda m, a, b: (m.linalg.solve(a, b), m.linalg.solve(a, b[:, 0])), (A, B)),
    "cholesky": (lambda m, a: (m.linalg.cholesky(a), m.linalg.cholesky(a, upper=True)), (SPD,)),
    "qr_r": (lambda m, a: m.abs(m.linalg.qr(a, mode="r")), (RECT,)),
    "qr_reconstructs": (lambda m, a: m.matmul(*m.linalg.qr(a)), (RECT,)),
    "svdvals": (lambda m, a: (m.linalg.svdvals(a), m.linalg.svd(a, compute_uv=False)), (RECT,)),
    "svd_reconstructs": (lambda m, a: (lambda u, s, vh: (u * s) @ vh)(*m.linalg.svd(a, full_matrices=False)),
                         (RECT,)),
    "eigh_values": (lambda m, a: (m.linalg.eigvalsh(a), m.linalg.eigh(a)[0]), (SPD,)),
    "eigh_reconstructs": (lambda m, a: (lambda w, v: (v * w) @ v.T)(*m.linalg.eigh(a)), (SPD,)),
    "norm_vector": (lambda m, x: [m.linalg.norm(x, o) for o in (None, 1, 2, np.inf, -np.inf, 0, 3)], (B[:, 0],)),
    "norm_matrix": (lambda m, a: [m.linalg.norm(a, o) for o in (None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc")],
                    (A,)),
    "norm_axis": (lambda m, a: (m.linalg.norm(a, axis=1), m.linalg.norm(a, axis=0, keepdims=True)), (RECT,)),
    "vector_and_matrix_norm": (lambda m, a: (m.linalg.vector_norm(a), m.linalg.matrix_norm(a)), (RECT,)),
    "pinv": (lambda m, a: m.linalg.pinv(a), (RECT,)),
    "matrix_power": (lambda m, a: [m.linalg.matrix_power(a, n) for n in (0, 1, 3, -2)], (A,)),
    "matrix_rank": (lambda m, a, s: (m.linalg.matrix_rank(a), m.linalg.matrix_rank(s)), (RECT, SINGULAR)),
    "lstsq": (lambda m, a, b: m.linalg.lstsq(a, b), (RECT, RNG.uniform(-1, 1, (5, 2)))),
    "cond": (lambda m, a: (m.linalg.cond(a), m.linalg.cond(a, "fro")), (A,)),
    "multi_dot": (lambda m, a, b: m.linalg.multi_dot([a, a, b]), (A, B)),
    "array_api_aliases": (lambda m, a: (m.linalg.trace(a), m.linalg.diagonal(a, offset=1),
                                        m.linalg.matrix_transpose(a), m.linalg.outer(a[0], a[1]),
                                        m.linalg.vecdot(a, a), m.linalg.cross(a[:, :3], a[:, 1:]),
                                        m.linalg.tensordot(a, a, axes=1)), (A,)),
    "tensorinv": (lambda m, a: m.linalg.tensorinv(m.reshape(a, (4, 2, 2)), ind=1), (A,)),
    "tensorsolve": (lambda m, a, b: m.linalg.tensorsolve(m.reshape(a, (2, 2, 4)), m.reshape(b[:, 0], (2, 2))),
                    (A, B)),
    "eigvals_of_symmetric": (lambda m, a: m.sort(m.real(m.linalg.eigvals(a))), (SPD,)),
}

X = RNG.uniform(-1, 1, (4, 6))
XC = X + 1j * RNG.uniform(-1, 1, (4, 6))

FFT = {
    "fft": (lambda m, x: (m.fft.fft(x), m.fft.fft(x, n=8), m.fft.fft(x, n=4, axis=0)), (XC,)),
    "ifft": (lambda m, x: (m.fft.ifft(x), m.fft.ifft(x, norm="ortho")), (XC,)),
    "fft_real_input": (lambda m, x: m.fft.fft(x, norm="forward"), (X,)),
    "rfft_irfft": (lambda m, x: (m.fft.rfft(x), m.fft.irfft(m.fft.rfft(x)), m.fft.irfft(m.fft.rfft(x), n=7)),
                   (X,)),
    "fftn_ifftn": (lambda m, x: (m.fft.fftn(x), m.fft.ifftn(x, s=(3, 5)), m.fft.fft2(x), m.fft.ifft2(x)), (XC,)),
    "rfftn_irfftn": (lambda m, x: (m.fft.rfftn(x), m.fft.irfftn(m.fft.rfftn(x), s=(4, 6)), m.fft.rfft2(x),
                                   m.fft.irfft2(m.fft.rfft2(x))), (X,)),
    "hfft_ihfft": (lambda m, x, r: (m.fft.hfft(x[0]), m.fft.ihfft(r[0])), (XC, X)),
    "freqs": (lambda m, x: (m.fft.fftfreq(8, 0.5), m.fft.rfftfreq(7)), (X,)),
    "shifts": (lambda m, x: (m.fft.fftshift(x), m.fft.ifftshift(x, axes=1)), (X,)),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg_matches_jax(name):
    check(name, LINALG, inp, jnp, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", sorted(FFT))
def test_fft_matches_jax(name):
    check(name, FFT, inp, jnp, rtol=1e-10, atol=1e-12)
