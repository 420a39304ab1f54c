"""AD rules of `fft` (transforms/ad/rules/fft.py): JVP vs central differences and the transpose identity
⟨v, J u⟩ = ⟨Jᵀ v, u⟩ for the four transform types over 1 to 3 trailing axes (odd and even lengths, single
precision, the `FftType.NAME` spelling), the nodes each VJP builds (JAX's `_fft_transpose_rule`), then the
`fft` oracle family against JAX."""

from __future__ import annotations

import pytest

from ir.params import Symbol
from ir.tracing import bind
from rewrites.options import Options
from tests.transforms.ad_helpers import Dom, Spec, assert_oracle, program_of, spec_test
from transforms.ad.build import float_positions
from transforms.ad.programs import jvp_program, vjp_program

FFT, IFFT, RFFT, IRFFT = range(4)
C128, C64, F32 = "complex128", "complex64", "float32"


def fft(kind, lengths):
    return lambda x: bind("fft", x, fft_type=kind, fft_lengths=tuple(lengths))


def rows(name, kind, lengths, shape, dtype, **kw):
    return Spec(f"{name}/{'x'.join(map(str, lengths))}", fft(kind, lengths), [Dom(shape, dtype=dtype)], **kw)


# Single precision: a linear map's central difference is exact whatever the step, so a large step keeps
# the rounding of x ± εu small.
SINGLE = dict(eps=0.5, rtol=1e-4, transpose_rtol=1e-5)

SPECS = [
    rows("fft", FFT, (8,), (3, 8), C128),
    rows("fft", FFT, (7,), (7,), C128),
    rows("fft", FFT, (2, 3, 4), (2, 3, 4), C128),
    rows("ifft", IFFT, (8,), (2, 8), C128),
    rows("ifft", IFFT, (3, 5), (2, 3, 5), C128),
    rows("rfft", RFFT, (8,), (3, 8), "float64"),
    rows("rfft", RFFT, (7,), (2, 7), "float64"),
    rows("rfft", RFFT, (1,), (3, 1), "float64"),
    rows("rfft", RFFT, (4, 6), (4, 6), "float64"),
    rows("rfft", RFFT, (3, 2, 5), (3, 2, 5), "float64"),
    rows("irfft", IRFFT, (8,), (3, 5), C128),
    rows("irfft", IRFFT, (7,), (2, 4), C128),
    rows("irfft", IRFFT, (2,), (3, 2), C128),
    rows("irfft", IRFFT, (4, 6), (2, 4, 4), C128),
    rows("irfft", IRFFT, (3, 5), (3, 3), C128),
    rows("fft-c64", FFT, (8,), (3, 8), C64, **SINGLE),
    rows("rfft-f32", RFFT, (6,), (2, 6), F32, **SINGLE),
    rows("irfft-c64", IRFFT, (5,), (2, 3), C64, **SINGLE),
    Spec("rfft-enum-name", fft(Symbol("FftType.RFFT"), (6,)), [Dom((2, 6))]),
    Spec("irfft-enum-name", fft(Symbol("FftType.IRFFT"), (6,)), [Dom((2, 4), dtype=C128)]),
    Spec("rfft-then-irfft", lambda x: fft(IRFFT, (6,))(fft(RFFT, (6,))(x)), [Dom((2, 6))]),
]

test_spec = spec_test(SPECS)


# --- the nodes the rules build -----------------------------------------------------------------------

RAW = Options(rules="none")


def built(spec: Spec, mode: str):
    args = spec.draw(0)
    closed = program_of(spec, args)
    if mode == "jvp":
        return jvp_program(closed, [0], RAW)[0]
    outs = float_positions(closed.jaxpr.outvars)
    return vjp_program(closed, [0], seed="inputs", cotangent_outputs=outs, options=RAW)[0]


def equations(program) -> list[tuple[str, dict]]:
    return [(e.primitive, e.params) for e in program.jaxpr.eqns]


@pytest.mark.parametrize("kind", [FFT, IFFT, RFFT, IRFFT])
def test_jvp_is_the_same_transform_of_the_tangent(kind):
    spec = next(s for s in SPECS if s.name == f"{('fft', 'ifft', 'rfft', 'irfft')[kind]}/8")
    ffts = [p for prim, p in equations(built(spec, "jvp")) if prim == "fft"]
    assert [p["fft_type"] for p in ffts] == [kind, kind]  # the primal and the tangent


@pytest.mark.parametrize("name, kind", [("fft/8", FFT), ("ifft/3x5", IFFT)])
def test_vjp_of_a_complex_transform_is_the_same_transform(name, kind):
    spec = next(s for s in SPECS if s.name == name)
    assert [(prim, p["fft_type"]) for prim, p in equations(built(spec, "vjp"))] == [("fft", kind)]


@pytest.mark.parametrize("name, kind, built_type, also", [
    ("rfft/8", RFFT, IRFFT, {"conj", "div", "mul", "pad", "broadcast_in_dim"}),
    ("irfft/7", IRFFT, RFFT, {"conj", "mul", "pad", "broadcast_in_dim"}),
    ("rfft-enum-name", Symbol("FftType.RFFT"), Symbol("FftType.IRFFT"), {"conj", "div", "mul", "pad"}),
])
def test_vjp_of_a_real_transform_is_the_other_one_masked(name, kind, built_type, also):
    spec = next(s for s in SPECS if s.name == name)
    eqns = equations(built(spec, "vjp"))
    assert [p["fft_type"] for prim, p in eqns if prim == "fft"] == [built_type]
    assert also <= {prim for prim, _ in eqns}


# --- the oracle --------------------------------------------------------------------------------------


def test_oracle():
    """Every case of the `fft` family, nothing skipped (JAX differentiates all of them)."""
    outcomes = assert_oracle("fft", ("jvp", "vjp"), stride=1)
    assert len(outcomes) == 32
    assert [o for o in outcomes if o.status == "skipped"] == []
