"""ir.numpy against real jax.numpy: the coverage of jax.numpy's public names (gaps printed), and the value of
every function added for the surface, traced with `make_jaxpr`, evaluated by eqjax's interpreter and compared
with jax.numpy on the same inputs (x64)."""

import types

import jax
import numpy as np
import pytest

import ir.numpy as inp
from eval.interpreter import eval_jaxpr
from ir.tracing import make_jaxpr

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

RNG = np.random.default_rng(7)


def public_callables(module) -> list[str]:
    return sorted(n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))
                  and not isinstance(getattr(module, n), types.ModuleType))


def test_coverage_of_jax_numpy_names():
    names = public_callables(jnp)
    missing = [n for n in names if not hasattr(inp, n)]
    coverage = 1 - len(missing) / len(names)
    print(f"\nir.numpy covers {len(names) - len(missing)}/{len(names)} = {coverage:.1%} of jax.numpy's callables")
    print("gaps:", " ".join(missing))
    assert coverage >= 0.80


def run(fn, *args):
    closed = make_jaxpr(fn)(*args)
    return eval_jaxpr(closed, *args)


def u(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape)


SPECIAL = np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 2.5])
I8 = np.array([3, -4, 0, 7, 12, -9, 5, 6], np.int64)
M = u(4, 4) + 4 * np.eye(4)
SPD = M @ M.T
C = u(8) + 1j * u(8)

# name -> (function of the namespace `m`, arguments)
CASES = {
    "angle": (lambda m, x: m.angle(x), (C,)),
    "bitwise_count": (lambda m, x: m.bitwise_count(x), (I8,)),
    "copysign": (lambda m, x, y: m.copysign(x, y), (SPECIAL, SPECIAL[::-1].copy())),
    "deg2rad": (lambda m, x: m.deg2rad(x), (u(5),)),
    "rad2deg": (lambda m, x: m.rad2deg(x), (u(5),)),
    "fabs": (lambda m, x: m.fabs(x), (SPECIAL,)),
    "fmax": (lambda m, x, y: m.fmax(x, y), (SPECIAL, SPECIAL[::-1].copy())),
    "fmin": (lambda m, x, y: m.fmin(x, y), (SPECIAL, SPECIAL[::-1].copy())),
    "hypot": (lambda m, x, y: m.hypot(x, y), (SPECIAL, u(8))),
    "i0": (lambda m, x: m.i0(x), (u(6),)),
    "isclose": (lambda m, x, y: m.isclose(x, y), (SPECIAL, SPECIAL + 1e-9)),
    "allclose": (lambda m, x, y: m.allclose(x, y), (u(4), u(4))),
    "iscomplex": (lambda m, x: m.iscomplex(x), (np.array([1 + 0j, 1j]),)),
    "isreal": (lambda m, x: m.isreal(x), (np.array([1 + 0j, 1j]),)),
    "isneginf": (lambda m, x: m.isneginf(x), (SPECIAL,)),
    "isposinf": (lambda m, x: m.isposinf(x), (SPECIAL,)),
    "ldexp": (lambda m, x, e: m.ldexp(x, e), (u(8), I8 % 5)),
    "frexp": (lambda m, x: m.frexp(x), (np.array([0.0, 1.0, 0.75, -8.0, 3.1, 1e-3, 1024.0, 5.5]),)),
    "logaddexp2": (lambda m, x, y: m.logaddexp2(x, y), (u(6), u(6))),
    "modf": (lambda m, x: m.modf(x), (u(6, lo=-5, hi=5),)),
    "nan_to_num": (lambda m, x: m.nan_to_num(x), (SPECIAL,)),
    "reciprocal": (lambda m, x: m.reciprocal(x), (u(5, lo=0.5),)),
    "rint": (lambda m, x: m.rint(x), (np.array([0.5, 1.5, -2.5, 2.6]),)),
    "signbit": (lambda m, x: m.signbit(x), (SPECIAL,)),
    "sinc": (lambda m, x: m.sinc(x), (np.array([0.0, 0.5, -1.5, 2.0]),)),
    "spacing": (lambda m, x: m.spacing(x), (np.array([1.0, -2.0, 1e10]),)),
    "trunc": (lambda m, x: m.trunc(x), (u(6, lo=-5, hi=5),)),
    "gcd": (lambda m, x, y: m.gcd(x, y), (I8, I8[::-1].copy())),
    "lcm": (lambda m, x, y: m.lcm(x, y), (I8, I8[::-1].copy())),
    "nansum": (lambda m, x: m.nansum(x, axis=0), (np.array([[1.0, np.nan], [2.0, 3.0]]),)),
    "nanprod": (lambda m, x: m.nanprod(x), (np.array([[1.0, np.nan], [2.0, 3.0]]),)),
    "nanmax": (lambda m, x: m.nanmax(x, axis=1), (np.array([[1.0, np.nan], [2.0, 3.0]]),)),
    "nanmin": (lambda m, x: m.nanmin(x, axis=0), (np.array([[1.0, np.nan], [2.0, 3.0]]),)),
    "nanargmax": (lambda m, x: m.nanargmax(x), (np.array([1.0, np.nan, 4.0, 2.0]),)),
    "nanargmin": (lambda m, x: m.nanargmin(x), (np.array([1.0, np.nan, -4.0, 2.0]),)),
    "nancumsum": (lambda m, x: m.nancumsum(x), (np.array([1.0, np.nan, 4.0, 2.0]),)),
    "nancumprod": (lambda m, x: m.nancumprod(x), (np.array([1.0, np.nan, 4.0, 2.0]),)),
    "nanmean": (lambda m, x: m.nanmean(x, axis=1), (np.array([[1.0, np.nan], [2.0, 3.0]]),)),
    "nanvar": (lambda m, x: m.nanvar(x, axis=1), (np.array([[1.0, np.nan, 5.0], [2.0, 3.0, 7.0]]),)),
    "nanstd": (lambda m, x: m.nanstd(x), (np.array([[1.0, np.nan, 5.0], [2.0, 3.0, 7.0]]),)),
    "count_nonzero": (lambda m, x: m.count_nonzero(x, axis=0), (np.array([[0, 1], [2, 0], [3, 4]]),)),
    "cumulative_sum": (lambda m, x: m.cumulative_sum(x, axis=1, include_initial=True), (u(2, 3),)),
    "cumulative_prod": (lambda m, x: m.cumulative_prod(x, axis=0), (u(2, 3),)),
    "diff": (lambda m, x: m.diff(x, n=2, axis=0, prepend=1.0), (u(4, 3),)),
    "ediff1d": (lambda m, x: m.ediff1d(x, to_begin=np.array([9.0])), (u(5),)),
    "ptp": (lambda m, x: m.ptp(x, axis=1), (u(3, 4),)),
    "trace": (lambda m, x: m.trace(x, offset=1), (u(3, 4),)),
    "average": (lambda m, x, w: m.average(x, axis=1, weights=w, returned=True), (u(3, 4), u(4, lo=0.1))),
    "quantile": (lambda m, x: m.quantile(x, np.array([0.1, 0.5, 0.9]), axis=1), (u(3, 7),)),
    "quantile_methods": (lambda m, x: [m.quantile(x, 0.3, method=k) for k in
                                       ("lower", "higher", "nearest", "midpoint")], (u(9),)),
    "percentile": (lambda m, x: m.percentile(x, 30.0, axis=0, keepdims=True), (u(5, 2),)),
    "nanquantile": (lambda m, x: m.nanquantile(x, 0.25), (np.array([1.0, np.nan, 3.0, 2.0, 7.0]),)),
    "nanpercentile": (lambda m, x: m.nanpercentile(x, 75.0), (np.array([1.0, np.nan, 3.0, 2.0, 7.0]),)),
    "median": (lambda m, x: m.median(x, axis=0), (u(6, 3),)),
    "nanmedian": (lambda m, x: m.nanmedian(x), (np.array([1.0, np.nan, 3.0, 2.0]),)),
    "trapezoid": (lambda m, y, x: m.trapezoid(y, x), (u(6), np.sort(u(6)))),
    "cov": (lambda m, x: m.cov(x), (u(3, 6),)),
    "corrcoef": (lambda m, x: m.corrcoef(x), (u(3, 6),)),
    "array_equal": (lambda m, x: m.array_equal(x, x), (u(3),)),
    "array_equiv": (lambda m, x: m.array_equiv(x, x[:1]), (np.ones((2, 3)),)),
    "roll": (lambda m, x: m.roll(x, (1, -2), (0, 1)), (u(3, 4),)),
    "roll_flat": (lambda m, x: m.roll(x, 5), (u(3, 4),)),
    "rot90": (lambda m, x: [m.rot90(x, k) for k in (1, 2, 3)], (u(3, 4),)),
    "fliplr_flipud": (lambda m, x: (m.fliplr(x), m.flipud(x)), (u(3, 4),)),
    "rollaxis": (lambda m, x: m.rollaxis(x, 2), (u(2, 3, 4),)),
    "permute_dims": (lambda m, x: m.permute_dims(x, (2, 0, 1)), (u(2, 3, 4),)),
    "matrix_transpose": (lambda m, x: m.matrix_transpose(x), (u(2, 3, 4),)),
    "atleast_3d": (lambda m, x: m.atleast_3d(x), (u(4),)),
    "column_stack": (lambda m, x: m.column_stack([x, x]), (u(4),)),
    "dstack": (lambda m, x: m.dstack([x, x]), (u(2, 3),)),
    "concat": (lambda m, x: m.concat([x, x], axis=1), (u(2, 3),)),
    "append": (lambda m, x: m.append(x, x), (u(2, 3),)),
    "array_split": (lambda m, x: m.array_split(x, 3), (u(7),)),
    "hsplit_vsplit_dsplit": (lambda m, x: (m.hsplit(x, 2), m.vsplit(x, 2), m.dsplit(x, 2)), (u(2, 4, 2),)),
    "block": (lambda m, x: m.block([[x, x], [x, x]]), (u(2, 2),)),
    "resize": (lambda m, x: m.resize(x, (3, 5)), (u(2, 3),)),
    "unstack": (lambda m, x: m.unstack(x, axis=1), (u(2, 3),)),
    "delete": (lambda m, x: m.delete(x, np.array([0, 2]), axis=1), (u(3, 4),)),
    "insert": (lambda m, x: m.insert(x, 1, 5.0, axis=1), (u(3, 4),)),
    "insert_column_and_flat": (lambda m, x: (m.insert(x, -1, np.array([1.0, 2, 3]), axis=1), m.insert(x, 2, 7.0)),
                               (u(3, 4),)),
    "diag": (lambda m, x: (m.diag(x, 1), m.diag(x, -2)), (u(3),)),
    "diag_2d": (lambda m, x: m.diag(x, -1), (u(3, 4),)),
    "diagflat": (lambda m, x: m.diagflat(x), (u(2, 2),)),
    "diagonal": (lambda m, x: m.diagonal(x, 1, 0, 2), (u(3, 2, 4),)),
    "copy": (lambda m, x: m.copy(x), (u(3),)),
    "empty_like": (lambda m, x: m.empty_like(x).shape == (3,), (u(3),)),
    "meshgrid": (lambda m, x, y: m.meshgrid(x, y), (u(3), u(4))),
    "meshgrid_ij_sparse": (lambda m, x, y: m.meshgrid(x, y, indexing="ij", sparse=True), (u(3), u(4))),
    "indices": (lambda m, x: m.indices((2, 3)) + x, (np.ones(()),)),
    "ix_": (lambda m, x, y: m.ix_(x, y), (u(3), u(2))),
    "tri_indices": (lambda m, x: (m.tril_indices(3), m.triu_indices(3, 1, 4), m.tril_indices_from(x),
                                  m.triu_indices_from(x)), (u(3, 3),)),
    "diag_indices": (lambda m, x: (m.diag_indices(3), m.diag_indices_from(x)), (u(3, 3),)),
    "mask_indices": (lambda m, x: m.mask_indices(3, np.triu), (u(1),)),
    "geomspace_logspace": (lambda m, x: (m.geomspace(1.0, 100.0, 5), m.logspace(0.0, 2.0, 4)), (u(1),)),
    "fromfunction": (lambda m, x: m.fromfunction(lambda i, j: i * 10 + j, (2, 3)), (u(1),)),
    "vander": (lambda m, x: (m.vander(x), m.vander(x, 3, increasing=True)), (u(4),)),
    "fill_diagonal": (lambda m, x: m.fill_diagonal(x, 9.0, inplace=False), (u(3, 4),)),
    "kron": (lambda m, x, y: m.kron(x, y), (u(2, 3), u(3, 2))),
    "cross": (lambda m, x, y: m.cross(x, y), (u(4, 3), u(4, 3))),
    "vecdot": (lambda m, x, y: m.vecdot(x, y), (u(3, 4), u(3, 4))),
    "matvec_vecmat": (lambda m, a, v: (m.matvec(a, v), m.vecmat(v, a.T)), (u(3, 4), u(4))),
    "convolve": (lambda m, x, y: [m.convolve(x, y, mode) for mode in ("full", "same", "valid")], (u(6), u(3))),
    "convolve_short_first": (lambda m, x, y: [m.convolve(y, x, k) for k in ("full", "same", "valid")], (u(6), u(3))),
    "correlate": (lambda m, x, y: [m.correlate(x, y, mode) for mode in ("full", "same", "valid")], (u(6), u(3))),
    "polyval": (lambda m, p, x: m.polyval(p, x), (u(4), u(5))),
    "polyadd_sub_mul": (lambda m, p, q: (m.polyadd(p, q), m.polysub(p, q), m.polymul(p, q)), (u(4), u(2))),
    "polyder_int": (lambda m, p: (m.polyder(p, 2), m.polyint(p, 1, k=3.0)), (u(5),)),
    "polyfit": (lambda m, x, y: m.polyfit(x, y, 2), (u(8), u(8))),
    "poly": (lambda m, z: m.poly(z), (u(3),)),
    "windows": (lambda m, x: (m.bartlett(5), m.blackman(6), m.hamming(5), m.hanning(4), m.kaiser(6, 3.0)), (u(1),)),
    "searchsorted": (lambda m, a, v: (m.searchsorted(a, v), m.searchsorted(a, v, side="right")),
                     (np.array([1.0, 2.0, 2.0, 5.0]), np.array([0.0, 2.0, 3.0, 9.0]))),
    "digitize": (lambda m, x, b: (m.digitize(x, b), m.digitize(x, b, right=True)),
                 (np.array([0.0, 1.0, 2.5, 6.0]), np.array([1.0, 2.5, 5.0]))),
    "interp": (lambda m, x, xp, fp: m.interp(x, xp, fp), (u(6, lo=-3, hi=3), np.sort(u(5)), u(5))),
    "isin": (lambda m, x, t: m.isin(x, t, invert=True), (I8, np.array([3, 7, 1]))),
    "nonzero_size": (lambda m, x: m.nonzero(x, size=5, fill_value=-1), (np.array([[0, 1, 0], [2, 0, 3]]),)),
    "argwhere_size": (lambda m, x: m.argwhere(x, size=4), (np.array([[0, 1, 0], [2, 0, 3]]),)),
    "flatnonzero": (lambda m, x: m.flatnonzero(x, size=2), (np.array([0, 1, 0, 2]),)),
    "extract": (lambda m, c, x: m.extract(c, x, size=3), (np.array([1, 0, 1, 0]), u(4))),
    "compress": (lambda m, x: m.compress(np.array([True, False, True]), x, axis=0), (u(3, 2),)),
    "bincount": (lambda m, x, w: m.bincount(x, w, length=5), (np.array([0, 1, 1, 3, 9]), u(5))),
    "lexsort": (lambda m, a, b: m.lexsort((a, b)), (np.array([1, 5, 1, 4]), np.array([2, 2, 1, 1]))),
    "piecewise": (lambda m, x: m.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * v, 7.0]), (u(8),)),
    "apply_along_axis": (lambda m, x: m.apply_along_axis(lambda r: r.sum() * r, 1, x), (u(2, 3),)),
    "apply_over_axes": (lambda m, x: m.apply_over_axes(m.sum, x, [0, 2]), (u(2, 3, 4),)),
    "ravel_multi_index": (lambda m, i, j: m.ravel_multi_index((i, j), (3, 4)), (np.array([0, 2]), np.array([3, 1]))),
    "unravel_index": (lambda m, i: m.unravel_index(i, (3, 4)), (np.array([0, 7, 11]),)),
    "choose": (lambda m, a, x, y: m.choose(a, [x, y]), (np.array([0, 1, 1]), u(3), u(3))),
    "histogram": (lambda m, x: m.histogram(x, 4), (u(20),)),
    "histogram_bin_edges": (lambda m, x: m.histogram_bin_edges(x, 3, range=(-1.0, 1.0)), (u(5),)),
    "gradient": (lambda m, x: m.gradient(x, 0.5), (u(3, 5),)),
    "unwrap": (lambda m, x: m.unwrap(x), (np.cumsum(u(8, lo=0, hi=3)),)),
    "sort_complex": (lambda m, x: m.sort_complex(x), (np.array([3.0, 1.0, 2.0]),)),
    "put": (lambda m, x: m.put(x, np.array([0, 5]), np.array([9.0, 8.0]), inplace=False), (u(2, 3),)),
    "vectorize": (lambda m, x, y: m.vectorize(lambda a, b: a * b + 1)(x, y), (u(2, 3), u(3))),
    "take": (lambda m, x: (m.take(x, np.array([0, 2, -1]), axis=1), m.take(x, np.array([5, 1]))), (u(3, 4),)),
    "take_along_axis": (lambda m, x: m.take_along_axis(x, np.array([[3, 0], [1, 1], [-1, 2]]), axis=1),
                        (u(3, 4),)),
    "put_along_axis": (lambda m, x: m.put_along_axis(x, np.array([[1], [0], [2]]), 9.0, axis=1, inplace=False),
                       (u(3, 4),)),
    "unique": (lambda m, x: m.unique(x, True, True, True, size=7), (np.array([3.0, 1, 3, 2, 7, 1]),)),
    "unique_2d_fill": (lambda m, x: m.unique(x, return_inverse=True, size=5, fill_value=-1.0),
                       (np.array([[5.0, 3], [1, 5]]),)),
    "unique_array_api": (lambda m, x: (tuple(m.unique_all(x, size=4)), tuple(m.unique_counts(x, size=4)),
                                       tuple(m.unique_inverse(x, size=4)), m.unique_values(x, size=4)),
                         (np.array([2, 2, 0, 9]),)),
    "set_ops": (lambda m, a, b: (m.intersect1d(a, b, size=3), m.setdiff1d(a, b, size=4), m.union1d(a, b, size=6),
                                 m.setxor1d(a, b, size=5)), (np.array([5.0, 3, 1, 3]), np.array([3.0, 6, 5]))),
    "unpackbits": (lambda m, x: (m.unpackbits(x), m.unpackbits(x, bitorder="little"), m.unpackbits(x, count=5)),
                   (np.array([3, 255, 16], np.uint8),)),
    "unpackbits_axis": (lambda m, x: m.unpackbits(x, axis=1), (np.array([[3, 255], [1, 128]], np.uint8),)),
    "packbits": (lambda m, x: (m.packbits(x), m.packbits(x, bitorder="little")),
                 (np.array([1, 0, 1, 1, 0, 0, 0, 0, 1], np.uint8),)),
    "packbits_axis": (lambda m, x: m.packbits(x, axis=0), (np.array([[1, 0], [0, 1], [1, 1]], np.uint8),)),
    "polydiv": (lambda m, u, v: m.polydiv(u, v), (np.array([1.0, -3, 2, 5]), np.array([1.0, 2]))),
    "roots": (lambda m, p: m.sort_complex(m.roots(p, strip_zeros=False)), (np.array([1.0, -6, 11, -6]),)),
    "place": (lambda m, x, v: m.place(x, x > 0, v, inplace=False), (u(3, 4), np.array([10.0, 20.0]))),
    "histogramdd": (lambda m, x: m.histogramdd(x, bins=(3, 4)), (u(20, 2),)),
    "histogram2d": (lambda m, x, y, w: m.histogram2d(x, y, bins=3, range=((-2, 2), (-1, 1)), weights=w,
                                                     density=True), (u(30), u(30), u(30, lo=0.1))),
    "partition": (lambda m, x: (m.partition(x, 2), m.partition(x, 1, axis=0)), (u(3, 6),)),
    "argpartition": (lambda m, x: (m.argpartition(x, 2), m.argpartition(x, -1, axis=0)),
                     (np.array([[3.0, 1, 2, 1, 5, 0], [1, 1, 1, 0, 2, 2]]),)),
    "aliases": (lambda m, x, i: (m.bitwise_invert(i), m.bitwise_left_shift(i, 2), m.bitwise_right_shift(i, 1),
                                 m.degrees(x), m.radians(x), m.empty((2, 3)).shape == (2, 3)), (u(4), I8)),
    "promote_types": (lambda m, x: m.zeros(2, m.promote_types(m.int32, m.float32)), (u(1),)),
}


def _flatten(value) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def check(name, cases, ir_module, jax_module, rtol=1e-9, atol=1e-12):
    fn, args = cases[name]
    want = _flatten(fn(jax_module, *[jnp.asarray(a) for a in args]))
    got = run(lambda *xs: fn(ir_module, *xs), *args)
    assert len(got) == len(want), name
    for g, w in zip(got, want, strict=True):
        w = np.asarray(w)
        assert g.shape == w.shape, (name, g.shape, w.shape)
        if w.dtype.kind in "fc" or g.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
        else:
            np.testing.assert_array_equal(g, w, err_msg=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_function_matches_jax_numpy(name):
    check(name, CASES, inp, jnp)


def test_data_dependent_functions_need_concrete_values_or_size():
    from ir.tracing import TracingError

    x = np.array([0.0, 0.0, 1.0, 2.0, 0.0])
    (got,) = run(lambda: inp.trim_zeros(x))
    np.testing.assert_array_equal(got, np.asarray(jnp.trim_zeros(jnp.asarray(x))))
    (buffer,) = run(lambda: inp.frombuffer(x.tobytes()))
    np.testing.assert_array_equal(buffer, np.asarray(jnp.frombuffer(x.tobytes())))
    assert inp.array_repr(x) == np.array_repr(x)
    with pytest.raises(TracingError, match="trim_zeros"):
        make_jaxpr(inp.trim_zeros)(x)
    with pytest.raises(NotImplementedError, match="size="):
        make_jaxpr(inp.unique)(x)
    with pytest.raises(NotImplementedError, match="size="):
        make_jaxpr(inp.nonzero)(x)


DTYPE_NAMES = ["bool", "int8", "int32", "int64", "uint8", "uint32", "float16", "float32", "float64", "complex64",
               "complex128", "double", "single", "cdouble", "csingle", "uint"]
KINDS = ["generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact", "floating",
         "complexfloating"]


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_names_and_queries_match_jax(name):
    ours, theirs = getattr(inp, name), getattr(jnp, name)
    assert np.dtype(inp.dtype(ours).numpy) == np.dtype(theirs)
    for kind in KINDS:
        assert inp.issubdtype(ours, getattr(inp, kind)) == jnp.issubdtype(theirs, getattr(jnp, kind)), kind
    for other in ("int32", "float32", "complex128"):
        assert inp.can_cast(ours, other) == jnp.can_cast(theirs, other), other
        assert inp.promote_types(ours, other).numpy == jnp.promote_types(theirs, other), other
    for kind in ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating",
                 "numeric"):
        assert inp.isdtype(ours, kind) == jnp.isdtype(theirs, kind), kind
    if np.issubdtype(theirs, np.inexact):
        assert inp.finfo(ours).eps == jnp.finfo(theirs).eps
    elif np.issubdtype(theirs, np.integer):
        assert inp.iinfo(ours).max == jnp.iinfo(theirs).max


def test_array_predicates_and_numpy_io(tmp_path):
    x, c = np.ones((2, 3)), np.ones(2, np.complex128)
    predicates = ("isscalar", "iterable", "iscomplexobj", "isrealobj")
    seen = {}

    def record(a, z):  # the predicates on tracers, recorded while tracing
        seen.update(tracer=a, answers=[getattr(inp, p)(v) for p in predicates for v in (a, z, a[0, 0])])
        return a

    make_jaxpr(record)(x, c)
    jx, jc = jnp.asarray(x), jnp.asarray(c)
    assert seen["answers"] == [getattr(jnp, p)(v) for p in predicates for v in (jx, jc, jx[0, 0])]
    assert isinstance(inp.ComplexWarning("lost"), RuntimeWarning) and isinstance(seen["tracer"], inp.ndarray)
    inp.save(tmp_path / "a.npy", x)
    inp.savez(tmp_path / "b.npz", x=x)
    (loaded, from_string) = run(lambda: (inp.load(tmp_path / "a.npy"), inp.fromstring("1 2 3", sep=" ")))
    np.testing.assert_array_equal(loaded, np.asarray(jnp.load(tmp_path / "a.npy")))
    np.testing.assert_array_equal(from_string, np.asarray(jnp.fromstring("1 2 3", sep=" ")))
    assert set(np.load(tmp_path / "b.npz")) == {"x"}
    with inp.printoptions(precision=2):
        assert inp.get_printoptions()["precision"] == 2 and inp.array_str(x) == np.array_str(x)
    assert inp.set_printoptions is np.set_printoptions

