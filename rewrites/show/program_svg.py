"""A program before and after optimization, drawn as two data-flow DAGs side by side (one SVG).

Each program is a Graphviz cluster: an input, const and output node per binder, a node per top-level
equation (its primitive, key params and result types; a control-flow or call equation is one node, its
bodies are not drawn), a small node per literal operand, and an edge per data flow. SVG ids say what an
element is: `before-eqn-3` is equation 3 of the first program, `after-in-0` input 0 of the second.
"""

from __future__ import annotations

from ir.core import ClosedJaxpr, DropVar, Literal, Var
from ir.text.printer import literal_value_text
from rewrites.show.labels import label_lines, title_lines
from rewrites.show.render import graphviz_module, label, short, svg_of, tooltip

FONT = "Helvetica"
COLORS = {"input": "#d9f2d9", "const": "#eeeeee", "output": "#fde2c8", "eqn": "#ffffff"}


def program_svg(before: ClosedJaxpr, after: ClosedJaxpr,
                titles: tuple[str, str] = ("before optimization", "after optimization")) -> str:
    """`before` and `after` as data-flow DAGs side by side, as an SVG document's text."""
    graphviz = graphviz_module()
    graph = graphviz.Digraph("programs", graph_attr={"rankdir": "TB", "fontname": FONT, "nodesep": "0.25",
                                                     "ranksep": "0.35", "newrank": "true"},
                             node_attr={"fontname": FONT, "fontsize": "10", "style": "filled"},
                             edge_attr={"arrowsize": "0.6", "color": "#555555"})
    for prefix, title, closed in (("before", titles[0], before), ("after", titles[1], after)):
        with graph.subgraph(name=f"cluster_{prefix}", graph_attr={
                "id": prefix, "class": "program", "label": f"{title} ({len(closed.jaxpr.eqns)} equations)",
                "fontsize": "14", "style": "rounded", "color": "#888888"}) as cluster:
            add_program(cluster, closed, prefix)
    return svg_of(graph)


def add_program(graph, closed: ClosedJaxpr, prefix: str) -> None:
    """Nodes and edges of `closed`'s top-level data flow into `graph`, every id starting with `prefix`."""
    jaxpr = closed.jaxpr
    producer: dict[Var, str] = {}

    def binder(kind: str, k: int, var: Var, shape: str) -> None:
        node_id = f"{prefix}-{kind}-{k}"
        graph.node(node_id, label([f"{kind} {k}", str(var.aval)]), id=node_id, shape=shape,
                   fillcolor=COLORS[kind], tooltip=tooltip([f"{kind} {k}: {var.aval}"]), **{"class": kind})
        producer[var] = node_id

    for k, var in enumerate(jaxpr.constvars):
        binder("const", k, var, "box3d")
    for k, var in enumerate(jaxpr.invars):
        binder("input", k, var, "invhouse")

    def operand(atom, target: str, where: str) -> None:
        if isinstance(atom, Literal):
            lit_id = f"{prefix}-lit-{where}"
            graph.node(lit_id, label([literal_value_text(atom)]), id=lit_id, shape="plaintext", style="",
                       fontsize="9", tooltip=tooltip([f"literal {literal_value_text(atom)}:{atom.aval}"]),
                       **{"class": "literal"})
            graph.edge(lit_id, target, style="dashed")
        else:
            graph.edge(producer[atom], target, tooltip=str(atom.aval))

    for j, eqn in enumerate(jaxpr.eqns):
        node_id = f"{prefix}-eqn-{j}"
        results = ", ".join(str(v.aval) for v in eqn.outvars)
        graph.node(node_id, label([*label_lines(eqn.primitive, eqn.params), short(results)]), id=node_id,
                   shape="box", style="rounded,filled", fillcolor=COLORS["eqn"],
                   tooltip=tooltip([*title_lines(eqn.primitive, eqn.params), f"-> {results}"]), **{"class": "eqn"})
        for k, atom in enumerate(eqn.invars):
            operand(atom, node_id, f"{j}-{k}")
        for var in eqn.outvars:
            if not isinstance(var, DropVar):
                producer[var] = node_id
    for k, atom in enumerate(jaxpr.outvars):
        out_id = f"{prefix}-output-{k}"
        graph.node(out_id, label([f"output {k}", str(atom.aval)]), id=out_id, shape="house",
                   fillcolor=COLORS["output"], tooltip=tooltip([f"output {k}: {atom.aval}"]), **{"class": "output"})
        operand(atom, out_id, f"out-{k}")
