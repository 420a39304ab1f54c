"""`jax.scipy` for traced code: `special` (and `stats`)."""

from ir.lazy import lazy_exports

__getattr__ = lazy_exports(__name__, {"special": None, "stats": None})
