"""The NumPy implementation table: one entry per primitive, keyed by the name JAX prints.

An implementation has the uniform signature `impl(*operands, **params)`: operands are NumPy
arrays (0-d for scalars) of exactly the dtypes of the equation's operands, params are the
equation's params as `ir.params` defines them. It returns one `np.ndarray` of exactly the
output aval's dtype and shape, or a tuple of them for a primitive with `multiple_results`.
Register with `@impl("name", ...)` directly above the function in `eval/impls/*.py`.
"""

from __future__ import annotations

from collections.abc import Callable

from ir.errors import UnsupportedPrimitive

Impl = Callable[..., object]
IMPLS: dict[str, Impl] = {}


def impl(*names: str):
    def register(fn: Impl) -> Impl:
        for name in names:
            if name in IMPLS:
                raise ValueError(f"primitive {name!r} already has a NumPy implementation")
            IMPLS[name] = fn
        return fn

    return register


_loaded = False


def get_impl(name: str) -> Impl:
    global _loaded
    if not _loaded:
        _loaded = True
        import eval.impls  # noqa: F401  (registers every implementation)
    fn = IMPLS.get(name)
    if fn is None:
        raise UnsupportedPrimitive(name, "NumPy evaluation", "eval/impls")
    return fn
