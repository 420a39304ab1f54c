"""Case table of the library families built from models: flax.linen modules (`lib_flax`), optax losses and
update steps (`lib_optax`), equinox and ODE integrators (`lib_ode_eqx`), and whole programs with a scalar
loss (`lib_programs`). Parameters are inputs: a module's variables, an optimizer's params, gradients and
state are flattened into the case's args (leaves in pytree order). Imported by capture.py."""

from collections.abc import Callable, Sequence

import equinox as eqx
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from capture import Domain, I, N, P, U, case, program
from jax import lax

KEY0 = jax.random.PRNGKey(0)


def leaf_domain(path, leaf) -> Domain:
    """Where a parameter leaf draws from, by its name: variances and second moments positive, scales near 1."""
    name, shape = jax.tree_util.keystr(path), np.shape(leaf)
    if np.issubdtype(np.asarray(leaf).dtype, np.integer):
        return I(*shape, lo=1, hi=5, dtype=np.asarray(leaf).dtype.name)
    if "var" in name or "sum_of_squares" in name:
        return P(*shape, lo=0.5, hi=2.0)
    if "nu" in name:
        return U(*shape, lo=0.0, hi=0.5)
    if "scale" in name:
        return U(*shape, lo=0.5, hi=1.5)
    return N(*shape, scale=0.5)


def tree_case(family: str, name: str, tree, apply: Callable, data: Sequence[Domain] = (), *,
              is_program: bool = False, **kw):
    """A case whose args are the leaves of `tree` then `data` (programs: `data` first, so that arg 0 is data
    and the gradient is taken with respect to the parameters)."""
    leaves, treedef = jax.tree_util.tree_flatten_with_path(tree)
    doms = [leaf_domain(p, x) for p, x in leaves]
    n, d = len(doms), len(data)
    if is_program:
        kw.setdefault("argnums", tuple(range(d, d + n)))
        return program(family, name, lambda *a: apply(treedef.unflatten(a[d:]), *a[:d]), *data, *doms, **kw)
    return case(family, name, lambda *a: apply(treedef.unflatten(a[:n]), *a[n:]), *doms, *data, **kw)


def module_case(name: str, module: nn.Module, *data: Domain, method=None, **kw):
    example = [np.asarray(dom(np.random.default_rng(0))) for dom in data]
    how = {"method": method} if method else {}
    variables = module.init(KEY0, *example, **how)
    tree_case(FL, f"flax.linen.{name}", variables, lambda v, *x: module.apply(v, *x, **how), data,
              tol=kw.pop("tol", "loose"), tags=("flax", *kw.pop("tags", ())), **kw)


# ---- flax.linen modules -----------------------------------------------------------------------------------

FL = "lib_flax"
module_case("Dense", nn.Dense(4), N(2, 3))
module_case("DenseGeneral", nn.DenseGeneral((2, 3), axis=-1), N(2, 4))
module_case("Conv", nn.Conv(3, (3, 3), padding="SAME"), N(1, 5, 5, 2))
module_case("Conv", nn.Conv(2, (3,), strides=2, padding="VALID"), N(2, 7, 2), variant="1d_stride2")
module_case("ConvTranspose", nn.ConvTranspose(2, (2, 2), strides=(2, 2)), N(1, 3, 3, 2))
module_case("LayerNorm", nn.LayerNorm(), N(3, 5))
module_case("RMSNorm", nn.RMSNorm(), N(3, 5))
module_case("GroupNorm", nn.GroupNorm(num_groups=2), N(2, 3, 4))
module_case("BatchNorm", nn.BatchNorm(use_running_average=True), N(4, 3), variant="eval")
module_case("Embed", nn.Embed(6, 3), I(2, 4, lo=0, hi=6))
module_case("Embed", nn.Embed(6, 3), N(2, 3), variant="attend", method="attend")
module_case("MultiHeadDotProductAttention", nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=4),
            N(1, 3, 4), N(1, 5, 4))
module_case("SelfAttention", nn.SelfAttention(num_heads=2, qkv_features=4), N(1, 3, 4),
            lambda rng: np.tril(np.ones((1, 1, 3, 3), bool)), variant="causal_mask")
module_case("GRUCell", nn.GRUCell(features=3), N(2, 3), N(2, 2))
LSTM = nn.LSTMCell(features=3)
tree_case(FL, "flax.linen.LSTMCell", LSTM.init(KEY0, (jnp.zeros((2, 3)), jnp.zeros((2, 3))), jnp.zeros((2, 2))),
          lambda v, c, h, x: LSTM.apply(v, (c, h), x), (N(2, 3), N(2, 3), N(2, 2)), tol="loose", tags=("flax",))
module_case("SimpleCell", nn.SimpleCell(features=3), N(2, 3), N(2, 2))
case(FL, "flax.linen.avg_pool", lambda x: nn.avg_pool(x, (2, 2), strides=(2, 2)), N(1, 4, 4, 2), tol="accum",
     tags=("flax",))
case(FL, "flax.linen.max_pool", lambda x: nn.max_pool(x, (2, 2), strides=(1, 1), padding="SAME"), N(1, 3, 3, 2),
     tags=("flax",))

# ---- optax losses and update steps -----------------------------------------------------------------------

OP = "lib_optax"
SIGNS = lambda *shape: lambda rng: rng.choice([-1.0, 1.0], size=shape)  # noqa: E731
for name, fn, doms in [
        ("softmax_cross_entropy", optax.losses.softmax_cross_entropy, (N(3, 4), _simplex := (lambda rng: (
            lambda p: p / p.sum(-1, keepdims=True))(rng.uniform(0.1, 1, (3, 4)))))),
        ("softmax_cross_entropy_with_integer_labels", optax.losses.softmax_cross_entropy_with_integer_labels,
         (N(3, 4), I(3, lo=0, hi=4))),
        ("safe_softmax_cross_entropy", optax.losses.safe_softmax_cross_entropy, (N(3, 4), _simplex)),
        ("l2_loss", optax.losses.l2_loss, (N(3, 4), N(3, 4))),
        ("squared_error", optax.losses.squared_error, (N(3, 4), N(3, 4))),
        ("huber_loss", lambda p, t: optax.losses.huber_loss(p, t, delta=0.5), (N(3, 4), N(3, 4))),
        ("sigmoid_binary_cross_entropy", optax.losses.sigmoid_binary_cross_entropy, (N(3, 4), U(3, 4, lo=0, hi=1))),
        ("sigmoid_focal_loss", optax.losses.sigmoid_focal_loss, (N(3, 4), U(3, 4, lo=0, hi=1))),
        ("log_cosh", optax.losses.log_cosh, (N(3, 4), N(3, 4))),
        ("hinge_loss", optax.losses.hinge_loss, (N(6), SIGNS(6))),
        ("cosine_similarity", optax.losses.cosine_similarity, (N(3, 4), N(3, 4))),
        ("cosine_distance", optax.losses.cosine_distance, (N(3, 4), N(3, 4))),
        ("kl_divergence", lambda lp, t: optax.losses.kl_divergence(jax.nn.log_softmax(lp), t), (N(3, 4), _simplex)),
        ("poly_loss_cross_entropy", optax.losses.poly_loss_cross_entropy, (N(3, 4), _simplex)),
        ("smooth_labels", lambda y: optax.losses.smooth_labels(y, 0.1), (_simplex,)),
        ("multiclass_hinge_loss", optax.losses.multiclass_hinge_loss, (N(3, 4), I(3, lo=0, hi=4))),
        ("ntxent", lambda e, y: optax.losses.ntxent(e, y), (N(4, 3), lambda rng: np.array([0, 0, 1, 1], np.int32)))]:
    case(OP, f"optax.losses.{name}", fn, *doms, tol="loose", tags=("optax", "loss"))

PARAMS = {"b": np.zeros(2), "w": np.zeros((3, 2))}


def update_step(opt: optax.GradientTransformation):
    def step(tree):
        params, grads, state = tree
        updates, new_state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), new_state
    return step


for name, opt in [("sgd", optax.sgd(0.1)), ("sgd_momentum", optax.sgd(0.1, momentum=0.9)),
                  ("adam", optax.adam(1e-2)), ("adamw", optax.adamw(1e-2, weight_decay=1e-2)),
                  ("rmsprop", optax.rmsprop(1e-2)), ("adagrad", optax.adagrad(1e-2)), ("lion", optax.lion(1e-3)),
                  ("clip_by_global_norm_adam", optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-2)))]:
    tree_case(OP, f"optax.{name}.update", (PARAMS, PARAMS, opt.init(PARAMS)), update_step(opt), tol="loose",
              tags=("optax", "update"))

# ---- equinox, ODE integrators ----------------------------------------------------------------------------

OE = "lib_ode_eqx"
EQX_MLP = eqx.nn.MLP(3, 2, 5, 2, key=KEY0)
EQX_PARAMS, EQX_STATIC = eqx.partition(EQX_MLP, eqx.is_array)
tree_case(OE, "equinox.nn.MLP", EQX_PARAMS, lambda p, x: eqx.combine(p, EQX_STATIC)(x), (N(3),), tol="loose",
          tags=("equinox",))
EQX_LINEAR = eqx.nn.Linear(4, 3, key=KEY0)
tree_case(OE, "equinox.nn.Linear", EQX_LINEAR, lambda m, x: m(x), (N(4),), tol="loose", tags=("equinox",))


def rk4_step(f, y, dt):
    k1 = f(y)
    k2 = f(y + dt / 2 * k1)
    k3 = f(y + dt / 2 * k2)
    k4 = f(y + dt * k3)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def lotka_volterra(p):
    return lambda y: jnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], p[3] * y[0] * y[1] - p[2] * y[1]])


def pendulum(y):
    return jnp.stack([y[1], -jnp.sin(y[0])])


def rk4_scan_trajectory(y0, p):
    def body(y, _):
        y = rk4_step(lotka_volterra(p), y, 0.1)
        return y, y
    return lax.scan(body, y0, None, length=8)[1]


def rk4_fori_final(y0):
    return lax.fori_loop(0, 10, lambda i, y: rk4_step(pendulum, y, 0.05), y0)


def euler_fori_dynamic(y0, n):
    return lax.fori_loop(0, n, lambda i, y: y + 0.1 * pendulum(y), y0)


ODE = ("ode", "scan")
case(OE, "ode.rk4_scan_lotka_volterra", rk4_scan_trajectory, P(2, lo=0.5, hi=1.5), P(4, lo=0.3, hi=1.0),
     tol="loose", tags=ODE)
case(OE, "ode.rk4_fori_pendulum", rk4_fori_final, U(2, lo=-1, hi=1), tol="loose", tags=("ode", "fori_loop"))
case(OE, "ode.euler_fori_dynamic", euler_fori_dynamic, U(2, lo=-1, hi=1), lambda rng: np.int32(5),
     vmap_axes=(0, None), tol="loose", tags=("ode", "fori_loop", "while"))
case(OE, "ode.odeint_free_fall", lambda t: 0.5 * 9.81 * t * t + jnp.cumsum(jnp.ones_like(t)) * 0.0,
     P(4), tol="loose", tags=("ode",))


# ---- whole programs (one float64 scalar loss) --------------------------------------------------------------

PR = "lib_programs"


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(6)(x))
        x = nn.tanh(nn.Dense(5)(x))
        return nn.Dense(3)(x)


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(3, (3, 3), padding="SAME")(x))
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        return nn.Dense(2)(x.reshape(x.shape[0], -1))


class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        h = nn.SelfAttention(num_heads=2, qkv_features=8)(nn.LayerNorm()(x))
        x = x + h
        h = nn.Dense(8)(jax.nn.gelu(nn.Dense(16)(nn.LayerNorm()(x))))
        return x + h


class MixedMLP(nn.Module):
    """The first layer computes in float32 (mixed precision) inside a float64 program."""

    @nn.compact
    def __call__(self, x):
        h = nn.tanh(nn.Dense(5, dtype=jnp.float32)(x)).astype(jnp.float64)
        return nn.Dense(2)(h)


class BatchNormNet(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.relu(nn.BatchNorm(use_running_average=True)(nn.Dense(4)(x))))


def flax_program(name: str, module: nn.Module, loss: Callable, *data: Domain, **kw):
    example = [np.asarray(dom(np.random.default_rng(0))) for dom in data]
    variables = module.init(KEY0, example[0])
    tree_case(PR, name, variables, lambda v, x, *rest: loss(module.apply(v, x), *rest), data, is_program=True,
              tags=("flax", *kw.pop("tags", ())), **kw)


def xent_int(logits, labels):
    return optax.losses.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


def mse(pred, target):
    return jnp.mean((pred - target) ** 2)


flax_program("flax_mlp_xent", MLP(), xent_int, N(2, 4), I(2, lo=0, hi=3), tags=("mlp",))
flax_program("flax_cnn_mse", CNN(), mse, N(2, 4, 4, 1), N(2, 2), tags=("conv",))
flax_program("flax_transformer_block", Block(), lambda y: jnp.mean(y ** 2), N(1, 2, 8), tags=("attention",))
flax_program("flax_mlp_mixed_precision", MixedMLP(), mse, N(2, 3), N(2, 2), tags=("mlp", "float32"))
flax_program("flax_batchnorm_eval_net", BatchNormNet(), mse, N(3, 3), N(3, 1), tags=("mlp",))
tree_case(PR, "equinox_mlp_mse", EQX_PARAMS,
          lambda p, x, y: mse(jax.vmap(eqx.combine(p, EQX_STATIC))(x), y), (N(4, 3), N(4, 2)), is_program=True,
          tags=("equinox", "mlp"))


def gru_sequence_loss(params, xs):
    cell = nn.GRUCell(features=3)

    def body(h, x):
        h, y = cell.apply(params, h, x)
        return h, y
    h, ys = lax.scan(body, jnp.zeros((1, 3)), xs)
    return jnp.sum(ys ** 2) + jnp.sum(h)


GRU_PARAMS = nn.GRUCell(features=3).init(KEY0, jnp.zeros((1, 3)), jnp.zeros((1, 2)))
tree_case(PR, "flax_gru_scan", GRU_PARAMS, lambda p, xs: gru_sequence_loss(p, xs), (N(4, 1, 2),), is_program=True,
          tags=("rnn", "scan"))


def linear_logits(p, x):
    return x @ p["w"] + p["b"]


def after_one_sgd_step(p, x, y):
    """The loss after one optax SGD step on the same batch (a gradient inside the program)."""
    loss = lambda q: optax.losses.sigmoid_binary_cross_entropy(linear_logits(q, x)[:, 0], y).mean()  # noqa: E731
    opt = optax.sgd(0.5)
    updates, _ = opt.update(jax.grad(loss)(p), opt.init(p))
    return loss(optax.apply_updates(p, updates))


LIN = {"b": np.zeros(1), "w": np.zeros((3, 1))}
tree_case(PR, "optax_logreg_after_sgd_step", LIN, lambda p, x, y: after_one_sgd_step(p, x, y),
          (N(4, 3), U(4, lo=0, hi=1)), is_program=True, tags=("optax", "update"))


def adam_two_steps(p, x, y):
    loss = lambda q: optax.losses.huber_loss(linear_logits(q, x)[:, 0], y).mean()  # noqa: E731
    opt = optax.adam(0.1)
    state = opt.init(p)
    for _ in range(2):
        updates, state = opt.update(jax.grad(loss)(p), state, p)
        p = optax.apply_updates(p, updates)
    return loss(p)


tree_case(PR, "optax_huber_after_adam_steps", LIN, lambda p, x, y: adam_two_steps(p, x, y),
          (N(4, 3), N(4)), is_program=True, tags=("optax", "update"))
program(PR, "rk4_pendulum_energy", lambda th: _pendulum_energy(rk4_fori_final(jnp.stack([th, 0.0 * th]))),
        U(lo=-1, hi=1), tags=("ode", "fori_loop", "scalar"))
program(PR, "rk4_lotka_volterra_fit", lambda y0, p, target: jnp.sum((rk4_scan_trajectory(y0, p) - target) ** 2),
        P(2, lo=0.5, hi=1.5), P(4, lo=0.3, hi=1.0), P(8, 2, lo=0.5, hi=1.5), argnums=(1,), tags=("ode", "scan"))
program(PR, "reparam_elbo", lambda x, key, mu, log_sigma: _elbo(x, key, mu, log_sigma), N(5), lambda rng: np.asarray(
    rng.integers(0, 2**32, size=2, dtype=np.uint64).astype(np.uint32)), N(3), N(3, scale=0.3), argnums=(2, 3),
        tags=("random", "distribution"))


def _pendulum_energy(y):
    return 0.5 * y[1] ** 2 + (1.0 - jnp.cos(y[0]))


def _elbo(x, key, mu, log_sigma):
    z = mu + jnp.exp(log_sigma) * jax.random.normal(key, (4, 3))
    loglik = jax.scipy.stats.norm.logpdf(x[:, None], z.sum(-1)[None, :] * 0.3, 1.0).sum()
    kl = 0.5 * jnp.sum(jnp.exp(2 * log_sigma) + mu ** 2 - 1.0 - 2 * log_sigma)
    return loglik / 4.0 - kl
