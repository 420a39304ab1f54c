"""The NumPy implementation table: one entry per primitive, keyed by the name JAX prints.

An implementation has the uniform signature `impl(*operands, **params)`: operands are NumPy
arrays (0-d for scalars) of exactly the dtypes of the equation's operands, params are the
equation's params as `ir.params` defines them. It returns one `np.ndarray` of exactly the
output aval's dtype and shape, or a tuple of them for a primitive with `multiple_results`.
Register with `@impl("name", ...)` directly above the function in `eval/impls/*.py`.

An equation with a key-typed operand or result (`key<fry>[...]`, held as its uint32 key data with a
trailing axis of words) runs through its primitive's key rule instead (`@key_rule`, eval/impls/keys.py):
`rule(impl, avals_in, avals_out, params) -> (impl, params)` returns what to run on the key data, as
JAX's lowerings do for extended dtypes (the word axis appended as a passthrough trailing dimension).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ir.core import ShapedArray
from ir.errors import UnsupportedPrimitive

Impl = Callable[..., object]
IMPLS: dict[str, Impl] = {}
KeyRule = Callable[[Impl, Sequence[ShapedArray], Sequence[ShapedArray], dict], tuple[Impl, dict]]
KEY_RULES: dict[str, KeyRule] = {}


def _registrar(table: dict, what: str):
    """A decorator factory registering one function under each of its names in `table`, once."""
    def decorator(*names: str):
        def register(fn):
            for name in names:
                if name in table:
                    raise ValueError(f"primitive {name!r} already has {what}")
                table[name] = fn
            return fn
        return register
    return decorator


impl = _registrar(IMPLS, "a NumPy implementation")
key_rule = _registrar(KEY_RULES, "a key rule")


_loaded = False


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        import eval.impls  # noqa: F401  (registers every implementation)


def get_impl(name: str) -> Impl:
    _load()
    fn = IMPLS.get(name)
    if fn is None:
        raise UnsupportedPrimitive(name, "NumPy evaluation", "eval/impls")
    return fn


def get_key_impl(name: str, avals_in: Sequence[ShapedArray], avals_out: Sequence[ShapedArray],
                 params: dict) -> tuple[Impl, dict]:
    """The implementation and params that evaluate an equation with key-typed values on their key data."""
    fn = get_impl(name)
    rule = KEY_RULES.get(name)
    if rule is None:
        raise UnsupportedPrimitive(name, "key-array evaluation", "eval/impls/keys.py")
    return rule(fn, tuple(avals_in), tuple(avals_out), params)
