"""Evaluation of Jaxprs: per-primitive NumPy implementations, the interpreter, generated NumPy
(`compile_numpy`), the XLA backend (`to_jax`, the `jax` extra), runtime measurement (`measure`), the
oracle runner."""

from importlib import import_module

_LAZY = {"eval_jaxpr": "eval.interpreter", "IMPLS": "eval.registry", "get_impl": "eval.registry",
         "compile_numpy": "eval.codegen", "to_jax": "eval.xla", "measure": "eval.measure"}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'eval' has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)


__all__ = list(_LAZY)
