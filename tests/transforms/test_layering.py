"""The package layering, read from the source with `ast` (every import, also those inside functions):

- `transforms.ad` and `transforms.batching` do not import each other; what needs both (the Jacobians, the
  vmap-of-grad and hessian checks, staging) sits above them in `transforms`;
- the egglog term constructors of `rewrites.encode` (`egg_call`, `egg_str`, ...) are used inside `rewrites/`
  only: a transform builds terms through `rewrites`' builders.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ir", "eval", "rewrites", "transforms")
EGG_CONSTRUCTORS = frozenset({"egg_call", "egg_str", "egg_ints", "egg_args", "egg_int"})


def _sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module the source of `module` imports, absolute; `from a import b` counts as importing `a` and
    `a.b` (b may be a submodule)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            imported = ".".join([*base, *([node.module] if node.module else [])])
            found.add(imported)
            found.update(f"{imported}.{alias.name}" for alias in node.names)
    return found


def _file_imports(path: Path) -> set[str]:
    return _imported_modules(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py")


def _importers(package: str, forbidden: str) -> list[str]:
    """The files of `package` that import `forbidden` or a module inside it."""
    return [str(path.relative_to(ROOT)) for path in _sources(package.replace(".", "/"))
            if any(m == forbidden or m.startswith(f"{forbidden}.") for m in _file_imports(path))]


def _egg_constructor_users() -> list[str]:
    """The source files outside `rewrites/` that import or reference an egglog term constructor by name."""
    users = []
    for package in PACKAGES:
        if package == "rewrites":
            continue
        for path in _sources(package):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
            names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
            if names & EGG_CONSTRUCTORS:
                users.append(str(path.relative_to(ROOT)))
    return users


def test_the_import_reader_resolves_relative_nested_and_from_package_imports():
    """The checks below are only as good as `_imported_modules`: it must see every way a file can import."""
    source = ("import numpy as np\n"
              "from . import build\n"
              "from ..batching.programs import vmap_program\n"
              "def f():\n"
              "    from transforms import batching\n")
    modules = _imported_modules(source, "transforms.ad.api")
    assert {"numpy", "transforms.ad.build", "transforms.batching.programs.vmap_program",
            "transforms.batching"} <= modules
    assert "transforms.ad.rules.unary" in _imported_modules("from . import unary\n", "transforms.ad.rules", True)


def test_ad_does_not_import_batching():
    assert _importers("transforms.ad", "transforms.batching") == []


def test_batching_does_not_import_ad():
    assert _importers("transforms.batching", "transforms.ad") == []


def test_egg_term_constructors_stay_inside_rewrites():
    assert _egg_constructor_users() == []
