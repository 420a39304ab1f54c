"""The e-graph side of eqjax: term language, encoding, rules, saturation, extraction, cost models.

Stable names: `optimize(closed, rules=..., cost=..., extractor=..., limits=...) -> (ClosedJaxpr, Report)`,
`Options` (those knobs as one value: `optimize(closed, options=...)`), `Limits`, `Report`, `prove_equal`.
"""

from ir.lazy import lazy_exports

_LAZY = {"optimize": "rewrites.engine", "Options": "rewrites.options", "Limits": "rewrites.options",
         "Report": "rewrites.engine", "prove_equal": "rewrites.prove"}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = list(_LAZY)
