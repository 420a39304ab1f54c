"""User-facing transforms (`jit`; AD and vmap as rewrite rules come next) and the `eqjax` command line."""

from importlib import import_module

_LAZY = {"jit": "transforms.api"}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'transforms' has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)


__all__ = list(_LAZY)
