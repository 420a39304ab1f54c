"""User-facing transforms (`jit`, AD as rewrite rules: `grad`, `value_and_grad`, `jvp`, `vjp`, `jacfwd`,
`jacrev`, `hessian`, and batching as rewrite rules: `vmap`) and the `eqjax` command line."""

from ir.lazy import lazy_exports

_LAZY = {"jit": "transforms.api",
         **{name: "transforms.ad.api" for name in ("grad", "value_and_grad", "jvp", "vjp")},
         **{name: "transforms.jacobians" for name in ("jacfwd", "jacrev", "hessian")},
         "vmap": "transforms.batching.api"}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = list(_LAZY)
