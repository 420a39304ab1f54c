"""The e-graph side of eqjax: term language, encoding, rules, saturation, extraction, cost models.

Stable names: `optimize(closed, rules=..., cost=..., extractor=..., limits=...) -> (ClosedJaxpr, Report)`,
`Limits`, `Report`, `prove_equal`.
"""

from importlib import import_module

_LAZY = {"optimize": "rewrites.engine", "Limits": "rewrites.engine", "Report": "rewrites.engine",
         "prove_equal": "rewrites.prove"}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'rewrites' has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)


__all__ = list(_LAZY)
