"""Evaluation of Jaxprs: per-primitive NumPy implementations, the interpreter, generated NumPy
(`compile_numpy`), the XLA backend (`to_jax`, the `jax` extra), runtime measurement (`measure`), the
oracle runner."""

from ir.lazy import lazy_exports

_LAZY = {"eval_jaxpr": "eval.interpreter", "IMPLS": "eval.registry", "get_impl": "eval.registry",
         "compile_numpy": "eval.codegen", "to_jax": "eval.xla", "measure": "eval.measure"}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = list(_LAZY)
