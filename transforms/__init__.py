"""User-facing transforms (`jit`, AD as rewrite rules: `grad`, `value_and_grad`, `jvp`, `vjp`, `jacfwd`,
`jacrev`, `hessian`, and batching as rewrite rules: `vmap`) and the `eqjax` command line."""

from importlib import import_module

_LAZY = {"jit": "transforms.api",
         **{name: "transforms.ad.api" for name in ("grad", "value_and_grad", "jvp", "vjp")},
         **{name: "transforms.ad.jacobians" for name in ("jacfwd", "jacrev", "hessian")},
         "vmap": "transforms.batching.api"}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'transforms' has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)


__all__ = list(_LAZY)
