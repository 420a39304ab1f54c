"""Pictures of programs and e-graphs (`eqjax show`).

    egraph_html(closed, rules=, cost=, extractor=, limits=, focus=None, radius=2) -> str
        one self-contained HTML page of the saturated e-graph: e-classes as boxes holding their e-nodes, the
        extracted choice highlighted, each class's cost, a class's neighbourhood for large graphs
    program_svg(before, after) -> str
        a program before and after optimization as data-flow DAGs side by side

Layout is Graphviz's `dot`, through the `graphviz` package (the `show` extra): only these need it, and
they raise `ShowDependencyMissing` naming what to install when it is not there.
"""

from rewrites.show.egraph_page import EGraphPicture, egraph_html, egraph_picture
from rewrites.show.program_svg import program_svg
from rewrites.show.render import ShowDependencyMissing

__all__ = ["EGraphPicture", "ShowDependencyMissing", "egraph_html", "egraph_picture", "program_svg"]
