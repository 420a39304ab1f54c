"""Case table of the library families made of plain functions: jax.nn (`lib_nn`), jax.scipy.special and
jax.scipy.stats (`lib_scipy`), jax.numpy (`lib_numpy`), jnp.linalg and jax.scipy.linalg (`lib_linalg`) and
jax.random with fixed keys (`lib_random`). Imported by capture.py."""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import jax.scipy.special as jss
import jax.scipy.stats as jst
import numpy as np
from capture import KEY, SEPARATED, SIMPLEX, SPD, WELL, WITH, B, I, N, P, U, case

# ---- jax.nn ---------------------------------------------------------------------------------------------------

NN = "lib_nn"
KINKS = (0.0, -0.0, 1.0, -1.0)
for name, fn in [("relu", jax.nn.relu), ("relu6", jax.nn.relu6), ("sigmoid", jax.nn.sigmoid),
                 ("softplus", jax.nn.softplus), ("soft_sign", jax.nn.soft_sign), ("silu", jax.nn.silu),
                 ("log_sigmoid", jax.nn.log_sigmoid), ("leaky_relu", jax.nn.leaky_relu),
                 ("hard_sigmoid", jax.nn.hard_sigmoid), ("hard_silu", jax.nn.hard_silu),
                 ("hard_tanh", jax.nn.hard_tanh), ("elu", jax.nn.elu), ("celu", jax.nn.celu), ("selu", jax.nn.selu),
                 ("gelu_tanh", lambda x: jax.nn.gelu(x, approximate=True)),
                 ("gelu_erf", lambda x: jax.nn.gelu(x, approximate=False)), ("mish", jax.nn.mish),
                 ("sparse_plus", jax.nn.sparse_plus), ("squareplus", jax.nn.squareplus),
                 ("sparse_sigmoid", jax.nn.sparse_sigmoid), ("tanh", jax.nn.tanh)]:
    case(NN, f"jax.nn.{name}", fn, U(3, 4, lo=-4, hi=4), tags=("nn", "elementwise"))
case(NN, "jax.nn.relu", jax.nn.relu, WITH(U(2, 4), KINKS), variant="kinks", tags=("nn", "special-values"))
case(NN, "jax.nn.relu6", jax.nn.relu6, WITH(U(2, 4, lo=-1, hi=7), (0.0, 6.0, -0.0, 3.0)), variant="kinks",
     tags=("nn", "special-values"))
case(NN, "jax.nn.glu", jax.nn.glu, N(3, 6), tags=("nn",))
case(NN, "jax.nn.softmax", jax.nn.softmax, N(3, 5), tol="accum", tags=("nn", "reduction"))
case(NN, "jax.nn.softmax", lambda x: jax.nn.softmax(x, axis=0), N(4, 3), variant="axis0", tol="accum", tags=("nn",))
case(NN, "jax.nn.softmax", lambda x, m: jax.nn.softmax(x, where=m), N(3, 5), B(3, 5), variant="where",
     tol="accum", tags=("nn",))
case(NN, "jax.nn.log_softmax", jax.nn.log_softmax, N(3, 5), tol="accum", tags=("nn", "reduction"))
case(NN, "jax.nn.logsumexp", lambda x: jax.nn.logsumexp(x, axis=-1), N(3, 5), tol="accum", tags=("nn",))
case(NN, "jax.nn.logsumexp", lambda x: jax.nn.logsumexp(x), WITH(N(2, 3), (-np.inf,)), variant="neg_inf",
     tol="accum", tags=("nn", "special-values"))
case(NN, "jax.nn.one_hot", lambda i: jax.nn.one_hot(i, 5), I(4, lo=0, hi=5), tags=("nn",))
case(NN, "jax.nn.one_hot", lambda i, x: jax.nn.one_hot(i, 4) * x, I(3, lo=-1, hi=5), N(3, 4), variant="scaled",
     tags=("nn", "out-of-bounds"))
case(NN, "jax.nn.standardize", lambda x: jax.nn.standardize(x, axis=-1), N(3, 6), tol="accum", tags=("nn",))
case(NN, "jax.nn.logmeanexp", lambda x: jax.nn.logmeanexp(x, axis=0), N(4, 3), tol="accum", tags=("nn",))
case(NN, "jax.nn.dot_product_attention", lambda q, k, v: jax.nn.dot_product_attention(q, k, v),
     N(1, 3, 2, 4), N(1, 5, 2, 4), N(1, 5, 2, 4), tol="accum", tags=("nn", "attention"))

# ---- jax.scipy.special / jax.scipy.stats -------------------------------------------------------------------

SP = "lib_scipy"
SPECIAL = ("special",)
case(SP, "jax.scipy.special.xlogy", jss.xlogy, WITH(P(2, 4), (0.0, 0.0)), P(2, 4), tol="loose", tags=SPECIAL)
case(SP, "jax.scipy.special.xlog1py", jss.xlog1py, WITH(U(2, 4), (0.0, 0.0)), U(2, 4, lo=-0.5, hi=3), tol="loose",
     tags=SPECIAL)
case(SP, "jax.scipy.special.entr", jss.entr, WITH(P(2, 4, lo=0.01, hi=2), (0.0,)), tol="loose", tags=SPECIAL)
case(SP, "jax.scipy.special.xlogy", jss.xlogy, WITH(U(2, 3), (0.0, 0.0, 1.0)), WITH(P(2, 3), (0.0, 1.0, 0.0)),
     variant="zeros", tol="loose", tags=(*SPECIAL, "special-values"))
for name, fn, dom in [("gammaln", jss.gammaln, P(3, 4, lo=0.1, hi=8)), ("digamma", jss.digamma, P(3, 4, lo=0.2, hi=6)),
                      ("erf", jss.erf, U(3, 4, lo=-3, hi=3)), ("erfc", jss.erfc, U(3, 4, lo=-3, hi=3)),
                      ("erfinv", jss.erfinv, U(3, 4, lo=-0.95, hi=0.95)), ("ndtr", jss.ndtr, U(3, 4, lo=-5, hi=5)),
                      ("ndtri", jss.ndtri, U(3, 4, lo=0.02, hi=0.98)),
                      ("log_ndtr", jss.log_ndtr, U(3, 4, lo=-30, hi=8)),
                      ("logit", jss.logit, U(3, 4, lo=0.02, hi=0.98)), ("expit", jss.expit, U(3, 4, lo=-6, hi=6)),
                      ("i0e", jss.i0e, U(3, 4, lo=-4, hi=4)), ("i1e", jss.i1e, U(3, 4, lo=-4, hi=4)),
                      ("gamma", jss.gamma, P(3, 4, lo=0.3, hi=5)), ("sinc", jnp.sinc, WITH(U(3, 4), (0.0,))),
                      ("trigamma", lambda x: jss.polygamma(1, x), P(3, 4, lo=0.3, hi=5)),
                      ("spence", jss.spence, P(3, 4, lo=0.1, hi=3)), ("expi", jss.expi, U(3, 4, lo=0.2, hi=3))]:
    case(SP, f"jax.scipy.special.{name}", fn, dom, tol="loose", tags=SPECIAL)
case(SP, "jax.scipy.special.log_ndtr", jss.log_ndtr, WITH(U(2, 3, lo=-5, hi=5), (-40.0, -20.0, 0.0, 10.0)),
     variant="tails", tol="loose", tags=(*SPECIAL, "special-values"))
case(SP, "jax.scipy.special.betaln", jss.betaln, P(3, 4, lo=0.5, hi=5), P(3, 4, lo=0.5, hi=5), tol="loose",
     tags=SPECIAL)
case(SP, "jax.scipy.special.gammainc", jss.gammainc, P(3, 4, lo=0.5, hi=4), P(3, 4, lo=0.2, hi=5), tol="loose",
     tags=SPECIAL)
case(SP, "jax.scipy.special.rel_entr", jss.rel_entr, P(2, 4), P(2, 4), tol="loose", tags=SPECIAL)
case(SP, "jax.scipy.special.kl_div", jss.kl_div, P(2, 4), P(2, 4), tol="loose", tags=SPECIAL)
case(SP, "jax.scipy.special.logsumexp", lambda a, b: jss.logsumexp(a, axis=-1, b=b), N(3, 4), P(3, 4),
     variant="weighted", tol="loose", tags=SPECIAL)
case(SP, "jax.scipy.special.softmax", lambda x: jss.softmax(x, axis=-1), N(2, 5), tol="accum", tags=SPECIAL)
case(SP, "jax.scipy.special.multigammaln", lambda x: jss.multigammaln(x, 3), P(4, lo=1.5, hi=5), tol="loose",
     tags=SPECIAL)
STATS = ("stats", "distribution")
for name, fn, doms in [
        ("norm.logpdf", jst.norm.logpdf, (N(5), N(5), P(5))), ("norm.pdf", jst.norm.pdf, (N(5), N(5), P(5))),
        ("norm.cdf", jst.norm.cdf, (N(5), N(5), P(5))), ("norm.logcdf", jst.norm.logcdf, (U(5, lo=-8, hi=4),)),
        ("norm.ppf", jst.norm.ppf, (U(5, lo=0.05, hi=0.95),)), ("norm.sf", jst.norm.sf, (N(5),)),
        ("t.logpdf", jst.t.logpdf, (N(5), P(5, lo=1, hi=6))), ("gamma.logpdf", jst.gamma.logpdf, (P(5), P(5))),
        ("beta.logpdf", jst.beta.logpdf, (U(5, lo=0.05, hi=0.95), P(5, lo=0.5), P(5, lo=0.5))),
        ("expon.logpdf", jst.expon.logpdf, (P(5),)), ("laplace.logpdf", jst.laplace.logpdf, (N(5), N(5), P(5))),
        ("cauchy.logpdf", jst.cauchy.logpdf, (N(5),)), ("logistic.cdf", jst.logistic.cdf, (N(5),)),
        ("poisson.logpmf", jst.poisson.logpmf, (I(5, lo=0, hi=6), P(5))),
        ("bernoulli.logpmf", jst.bernoulli.logpmf, (I(5, lo=0, hi=2), U(5, lo=0.05, hi=0.95))),
        ("dirichlet.logpdf", jst.dirichlet.logpdf, (SIMPLEX(4), P(4, lo=0.5))),
        ("multivariate_normal.logpdf", jst.multivariate_normal.logpdf, (N(2, 3), N(3), SPD(3))),
        ("truncnorm.logpdf", lambda x: jst.truncnorm.logpdf(x, -1.5, 2.0), (U(5, lo=-1.4, hi=1.9),))]:
    case(SP, f"jax.scipy.stats.{name}", fn, *doms, tol="loose", tags=STATS)

# ---- jax.numpy --------------------------------------------------------------------------------------------------

NP = "lib_numpy"
J = ("numpy",)
for name, fn, doms, tol in [
        ("mean", lambda x: jnp.mean(x, axis=0), (N(4, 3),), "accum"),
        ("var", lambda x: jnp.var(x, axis=-1), (N(3, 5),), "accum"),
        ("std", lambda x: jnp.std(x, axis=-1, ddof=1), (N(3, 5),), "accum"),
        ("cumsum", lambda x: jnp.cumsum(x, axis=1), (N(3, 4),), "accum"),
        ("cumprod", lambda x: jnp.cumprod(x, axis=0), (U(3, 4, lo=0.5, hi=1.5),), "accum"),
        ("diff", lambda x: jnp.diff(x, n=2), (N(3, 6),), "f64"),
        ("clip", lambda x: jnp.clip(x, -0.5, 0.7), (N(3, 4),), "f64"),
        ("where", lambda c, x, y: jnp.where(c, x, y), (B(3, 4), N(3, 4), N(3, 4)), "f64"),
        ("abs", jnp.abs, (WITH(N(3, 4), (0.0,)),), "f64"),
        ("maximum", jnp.maximum, (N(3, 4), N(4)), "f64"),
        ("hypot", jnp.hypot, (N(3, 4), N(3, 4)), "f64"),
        ("arctan2", jnp.arctan2, (N(3, 4), N(3, 4)), "f64"),
        ("logaddexp", jnp.logaddexp, (N(3, 4), N(3, 4)), "f64"),
        ("logaddexp2", jnp.logaddexp2, (N(3, 4), N(3, 4)), "f64"),
        ("exp2", jnp.exp2, (N(3, 4),), "f64"),
        ("log10", jnp.log10, (P(3, 4),), "f64"),
        ("cbrt", jnp.cbrt, (N(3, 4),), "f64"),
        ("polyval", lambda p, x: jnp.polyval(p, x), (N(4), N(5)), "accum"),
        ("interp", lambda x, xp, fp: jnp.interp(x, xp, fp), (U(6, lo=-1, hi=4), lambda r: np.arange(5.0), N(5)), "f64"),
        ("sort", lambda x: jnp.sort(x, axis=-1), (N(3, 5),), "f64"),
        ("argsort", lambda x: jnp.argsort(x), (N(6),), "f64"),
        ("take", lambda x, i: jnp.take(x, i, axis=0), (N(5, 3), I(4, lo=0, hi=5)), "f64"),
        ("take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1), (N(3, 5), I(3, 2, lo=0, hi=5)), "f64"),
        ("roll", lambda x: jnp.roll(x, 2, axis=1), (N(3, 5),), "f64"),
        ("flip", lambda x: jnp.flip(x), (N(3, 4),), "f64"),
        ("tril", lambda x: jnp.tril(x, -1), (N(4, 4),), "f64"),
        ("kron", jnp.kron, (N(2, 2), N(2, 3)), "f64"),
        ("outer", jnp.outer, (N(3), N(4)), "f64"),
        ("einsum", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (N(2, 3, 4), N(2, 4, 2)), "accum"),
        ("tensordot", lambda a, b: jnp.tensordot(a, b, axes=([1, 2], [0, 1])), (N(2, 3, 4), N(3, 4, 2)), "accum"),
        ("matmul", jnp.matmul, (N(2, 3, 4), N(4, 5)), "accum"),
        ("trace", jnp.trace, (N(4, 4),), "accum"),
        ("cross", jnp.cross, (N(4, 3), N(4, 3)), "f64"),
        ("cov", jnp.cov, (N(3, 6),), "accum"),
        ("corrcoef", jnp.corrcoef, (N(3, 6),), "accum"),
        ("median", lambda x: jnp.median(x, axis=-1), (N(3, 5),), "f64"),
        ("quantile", lambda x: jnp.quantile(x, 0.3, axis=-1), (N(3, 6),), "f64"),
        ("nan_to_num", jnp.nan_to_num, (WITH(N(3, 4), (np.nan, np.inf, -np.inf)),), "f64"),
        ("round", lambda x: jnp.round(x, 2), (N(3, 4),), "f64"),
        ("fmod", jnp.fmod, (N(3, 4, scale=3), P(3, 4)), "f64"),
        ("sign", jnp.sign, (WITH(N(3, 4), (0.0,)),), "f64"),
        ("prod", lambda x: jnp.prod(x, axis=1), (U(3, 4, lo=0.5, hi=1.5),), "accum"),
        ("max", lambda x: jnp.max(x, axis=0), (N(4, 3),), "f64"),
        ("argmax", lambda x: jnp.argmax(x, axis=-1), (N(3, 5),), "f64"),
        ("convolve", lambda a, v: jnp.convolve(a, v, mode="same"), (N(8), N(3)), "accum"),
        ("correlate", lambda a, v: jnp.correlate(a, v, mode="valid"), (N(8), N(3)), "accum"),
        ("pad_reflect", lambda x: jnp.pad(x, ((1, 2), (2, 1)), mode="reflect"), (N(3, 4),), "f64"),
        ("pad_edge", lambda x: jnp.pad(x, 2, mode="edge"), (N(3, 4),), "f64"),
        ("pad_wrap", lambda x: jnp.pad(x, ((0, 2), (1, 0)), mode="wrap"), (N(3, 4),), "f64"),
        ("repeat", lambda x: jnp.repeat(x, 2, axis=0), (N(3, 2),), "f64"),
        ("tile", lambda x: jnp.tile(x, (2, 1)), (N(2, 3),), "f64"),
        ("concatenate", lambda a, b: jnp.concatenate([a, b, a], axis=1), (N(2, 3), N(2, 1)), "f64"),
        ("stack", lambda a, b: jnp.stack([a, b], axis=-1), (N(2, 3), N(2, 3)), "f64"),
        ("moveaxis", lambda x: jnp.moveaxis(x, 0, -1), (N(2, 3, 4),), "f64"),
        ("at_set", lambda x, v: x.at[1:3, 0].set(v), (N(4, 3), N(2)), "f64"),
        ("at_add", lambda x, i, v: x.at[i].add(v), (N(5), I(3, lo=0, hi=5), N(3)), "f64"),
        ("at_mul", lambda x, v: x.at[::2].multiply(v), (N(6), N(3)), "f64"),
        ("searchsorted", lambda a, v: jnp.searchsorted(a, v), (lambda r: np.sort(r.standard_normal(6)), N(4)), "f64"),
        ("isclose", lambda a, b: jnp.isclose(a, b, atol=0.5), (N(3, 4), N(3, 4)), "f64"),
        ("vander", lambda x: jnp.vander(x, 4), (N(5),), "f64"),
        ("trapezoid", lambda y, x: jnp.trapezoid(y, x), (N(6), lambda r: np.sort(r.uniform(0, 3, 6))), "accum"),
        ("linalg_vecdot", lambda a, b: jnp.vecdot(a, b), (N(3, 4), N(3, 4)), "accum"),
        ("heaviside", jnp.heaviside, (WITH(N(3, 4), (0.0,)), U(3, 4, lo=0, hi=1)), "f64"),
        ("square_reciprocal", lambda x: jnp.reciprocal(jnp.square(x) + 1.0), (N(3, 4),), "f64"),
        ("percentile", lambda x: jnp.percentile(x, 75.0), (N(7),), "f64"),
        ("histogram", lambda x: jnp.histogram(x, bins=4, range=(-2.0, 2.0))[0], (N(10),), "f64"),
        ("unique_size", lambda x: jnp.unique(x, size=4, fill_value=0), (I(8, lo=0, hi=4),), "f64")]:
    case(NP, f"jax.numpy.{name}", fn, *doms, tol=tol, tags=J)

# ---- jnp.linalg / jax.scipy.linalg ------------------------------------------------------------------------------

LA = "lib_linalg"
L = ("linalg",)
for name, fn, doms in [
        ("inv", jnp.linalg.inv, (WELL(3),)), ("det", jnp.linalg.det, (WELL(3),)),
        ("slogdet", jnp.linalg.slogdet, (WELL(3),)), ("solve", jnp.linalg.solve, (WELL(3), N(3, 2))),
        ("pinv", jnp.linalg.pinv, (N(4, 3),)), ("norm_fro", jnp.linalg.norm, (N(3, 4),)),
        ("norm_vec", lambda x: jnp.linalg.norm(x, axis=-1), (N(3, 4),)),
        ("norm_ord1", lambda x: jnp.linalg.norm(x, ord=1), (N(3, 3),)),
        ("norm_inf_vec", lambda x: jnp.linalg.norm(x, ord=jnp.inf), (N(5),)),
        ("norm_nuc", lambda x: jnp.linalg.norm(x, ord="nuc"), (N(3, 3),)),
        ("eigh", lambda a: jnp.linalg.eigh(a)[0], (SEPARATED(3),)),
        ("eigh_vectors_sign_normalized", lambda a: _sign_normalized(jnp.linalg.eigh(a)[1]), (SEPARATED(3),)),
        ("eigvalsh", jnp.linalg.eigvalsh, (SEPARATED(4),)), ("cholesky", jnp.linalg.cholesky, (SPD(3),)),
        ("qr_r_abs", lambda a: jnp.abs(jnp.linalg.qr(a)[1]), (N(4, 3),)),
        ("svdvals", lambda a: jnp.linalg.svd(a, compute_uv=False), (N(4, 3),)),
        ("matrix_power", lambda a: jnp.linalg.matrix_power(a, 3), (N(3, 3),)),
        ("multi_dot", lambda a, b, c: jnp.linalg.multi_dot([a, b, c]), (N(2, 4), N(4, 3), N(3, 2))),
        ("cond", jnp.linalg.cond, (WELL(3),)), ("lstsq", lambda a, b: jnp.linalg.lstsq(a, b)[0], (N(5, 3), N(5))),
        ("batched_inv", jnp.linalg.inv, (SPD(2, batch=(3,)),)),
        ("cho_solve", lambda a, b: jsl.cho_solve(jsl.cho_factor(a), b), (SPD(3), N(3))),
        ("solve_triangular", lambda a, b: jsl.solve_triangular(jnp.tril(a) + 3 * jnp.eye(3), b, lower=True),
         (N(3, 3), N(3, 2))),
        ("lu_solve", lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b), (WELL(3), N(3)))]:
    case(LA, f"jax.numpy.linalg.{name}", fn, *doms, tol="loose", tags=L)


def _sign_normalized(v):
    """Eigenvectors with the largest-magnitude entry of each made positive (portable across LAPACKs)."""
    idx = jnp.argmax(jnp.abs(v), axis=0)
    return v * jnp.sign(v[idx, jnp.arange(v.shape[1])])


# ---- jax.random with fixed keys ----------------------------------------------------------------------------------

RA = "lib_random"
R = ("random", "key")
for name, fn, doms in [
        ("uniform", lambda k: jax.random.uniform(k, (3, 2)), (KEY(),)),
        ("normal_reparam", lambda k, mu, s: mu + s * jax.random.normal(k, (4,)), (KEY(), N(4), P(4))),
        ("bernoulli", lambda k, p: jax.random.bernoulli(k, p), (KEY(), U(5, lo=0.1, hi=0.9))),
        ("categorical", lambda k, logits: jax.random.categorical(k, logits), (KEY(), N(3, 4))),
        ("gumbel_softmax", lambda k, logits: jax.nn.softmax(logits + jax.random.gumbel(k, logits.shape)),
         (KEY(), N(2, 4))),
        ("randint", lambda k: jax.random.randint(k, (5,), 0, 10), (KEY(),)),
        ("permutation", lambda k, x: jax.random.permutation(k, x), (KEY(), N(6))),
        ("truncated_normal", lambda k: jax.random.truncated_normal(k, -1.0, 2.0, (4,)), (KEY(),)),
        ("exponential_scaled", lambda k, rate: jax.random.exponential(k, (4,)) / rate, (KEY(), P(4))),
        ("laplace", lambda k: jax.random.laplace(k, (4,)), (KEY(),)),
        ("split_fold_in_normal", lambda k: jax.random.normal(jax.random.fold_in(jax.random.split(k)[1], 7), (3,)),
         (KEY(),)),
        ("multivariate_normal", lambda k, m, c: jax.random.multivariate_normal(k, m, c), (KEY(), N(3), SPD(3))),
        ("dropout_mask", lambda k, x: jnp.where(jax.random.bernoulli(k, 0.8, x.shape), x / 0.8, 0.0),
         (KEY(), N(3, 4))),
        ("choice", lambda k, x: jax.random.choice(k, x, (3,), replace=False), (KEY(), N(6)))]:
    case(RA, f"jax.random.{name}", fn, *doms, tol="loose", tags=R)
