"""Graphviz behind one door: the dependency check, label escaping, and `dot` → inline SVG.

`show` is the only part of eqjax that needs Graphviz (the `graphviz` Python package and its `dot` program);
the rest imports and runs without them, so the package is imported here, inside functions.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable

from ir.errors import EqjaxError

INSTALL_PYTHON = "pip install 'eqjax[show]' (or pip install graphviz)"
INSTALL_DOT = "apt-get install graphviz on Debian/Ubuntu, brew install graphviz on macOS; `make test` installs it"


class ShowDependencyMissing(EqjaxError):
    """Drawing needs Graphviz: the `graphviz` Python package or its `dot` program is not installed."""


def graphviz_module():
    """The `graphviz` package, checked to have its `dot` program on PATH."""
    try:
        import graphviz
    except ImportError:
        raise ShowDependencyMissing(f"eqjax show needs the graphviz Python package: {INSTALL_PYTHON}") from None
    if shutil.which("dot") is None:
        raise ShowDependencyMissing(f"eqjax show needs Graphviz's `dot` program on PATH: {INSTALL_DOT}")
    return graphviz


def label(lines: Iterable[str]) -> str:
    """A Graphviz label of these lines, each shown as written (no backslash escapes, no HTML labels)."""
    graphviz = graphviz_module()
    return graphviz.nohtml("\\n".join(graphviz.escape(line) for line in lines))


def tooltip(lines: Iterable[str]) -> str:
    """A hover title of these lines (Graphviz writes it as the SVG element's `xlink:title`)."""
    return "\n".join(line.replace("\\", "\\\\") for line in lines)


_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)


def svg_of(graph, engine: str = "dot") -> str:
    """`graph` (a graphviz.Digraph) laid out by `engine` as an SVG element, without the XML prolog and
    DOCTYPE, so it can be inlined in an HTML page or written as a file of its own."""
    graphviz = graphviz_module()
    try:
        svg = graph.pipe(format="svg", engine=engine, encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise ShowDependencyMissing(f"eqjax show needs Graphviz's `dot` program on PATH: {INSTALL_DOT}") from None
    return _PROLOG.sub("", svg, count=1)


def short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
