"""Lazy package attributes (PEP 562): a package names what it exports and imports each on first use, so
importing the package stays cheap.

    __getattr__ = lazy_exports(__name__, {"optimize": "rewrites.engine", "lax": None})

A name maps to the module that defines it, or to None for the package's submodule of that name.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_exports(package: str, table: dict[str, str | None]) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        where = table[name]
        return import_module(f"{package}.{name}") if where is None else getattr(import_module(where), name)

    return __getattr__
