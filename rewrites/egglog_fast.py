"""A faster `HasDeclarations` test for egglog's Python layer (applied on import, Python < 3.12).

egglog merges the declarations of an expression's parts at every call that builds one, testing each
part with `isinstance(x, HasDeclarations)`, a runtime-checkable Protocol. On Python 3.11 that test walks
the protocol's attributes every time: a quarter of the time spent building rules. For this protocol (one
non-method member) it amounts to `hasattr(x, "__egg_decls__")`, which is what replaces it
(`tests/rewrites/test_egglog_fast.py` checks they agree). egglog is pinned in pyproject.toml.
"""

from __future__ import annotations

import sys

from egglog import declarations


class _HasDeclarationsMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        return hasattr(instance, "__egg_decls__")


class HasDeclarations(metaclass=_HasDeclarationsMeta):
    """Stands in for `egglog.declarations.HasDeclarations` in its isinstance tests."""


PROTOCOL = declarations.HasDeclarations
if sys.version_info < (3, 12):
    declarations.HasDeclarations = HasDeclarations
