"""NumPy evaluation of Jaxprs: per-primitive implementations, the interpreter, the oracle runner."""

from importlib import import_module

_LAZY = {"eval_jaxpr": "eval.interpreter", "IMPLS": "eval.registry", "get_impl": "eval.registry"}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'eval' has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)


__all__ = list(_LAZY)
