"""The saturated e-graph of a program as one self-contained HTML page (`eqjax show prog.jaxpr --out g.html`).

Built on the engine's public steps: `saturated(...)`, the node costs of `Saturated.costs(model)`, the
extractor's choice (`rewrites.extract.extract`), handed to `extract_program` for the report and the program
the engine returns, so that the page draws the very extraction the program came from. Each e-class is a
Graphviz cluster (`subgraph cluster_*`, as egg and egglog draw e-graphs) holding its e-nodes, with an edge
from each e-node to each child class. Only term nodes are drawn (the view holds no analysis tables). The page
inlines the SVG, its data as JSON and a little script (click a class: its children and parents light up and
its details show), and loads nothing from the network.

A class's cost is the DAG cost of the sub-program rooted at it: the cost of the chosen node of every class
it reaches through chosen nodes, each class counted once. Chosen means the extractor's choice on the
extracted program and, for classes off it (which that choice does not cover), the greedy DAG choice.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, replace
from importlib.resources import files
from string import Template

from ir.core import ClosedJaxpr
from ir.errors import EqjaxError
from rewrites.decode import node_params, node_primitive, operand_classes
from rewrites.egraph_view import EGraphView, canonical
from rewrites.engine import Limits, Report, Saturated, extract_program, saturated
from rewrites.extract import Extraction, extract
from rewrites.extract.greedy_dag import greedy_dag_choice
from rewrites.extract.result import Cost, exact_sum, normalize_costs, postorder
from rewrites.show.labels import label_lines, title_lines
from rewrites.show.render import graphviz_module, label, svg_of, tooltip

# Above this many classes the page shows the roots' neighbourhood: a whole e-graph past it is too dense to read
# (dot itself is quick: measured 0.3 s of layout for 186 classes, 3.3 s for 619, 9 s for 805).
MAX_CLASSES = 150
FONT = "Helvetica"
_LEAF_OPS = {"inp": "input", "const": "const", "barg": "body arg"}


class UnknownClass(EqjaxError):
    """`--focus` names no e-class of the saturated e-graph."""


@dataclass
class EGraphPicture:
    """What the page draws: the saturated e-graph, the extraction, each class's cost, and which classes."""

    sat: Saturated
    model_name: str
    extraction: Extraction
    program: ClosedJaxpr  # what the engine returns (`extract_program`): the extracted program, or the input
    report: Report  # extract_program's: costs before/after, whether the engine kept the input
    node_cost: list[Cost]
    class_cost: dict[str, Cost | None]  # drawn class -> its DAG cost (None: no finite term)
    names: dict[str, str]  # class id -> short name "c<k>" (k: the class's position in the view)
    shown: list[str]  # the class ids drawn, in the view's order
    focus: list[str]  # the classes the neighbourhood is centred on (empty: the whole e-graph is drawn)
    radius: int
    why: str  # "all", "focus" or "size" (the roots' neighbourhood, the e-graph being above `max_classes`)
    max_classes: int

    @property
    def view(self) -> EGraphView:
        return self.sat.view

    def focused(self, focus: str | None = None, radius: int = 2, max_classes: int = MAX_CLASSES) -> EGraphPicture:
        """The same e-graph and extraction, drawing another part of it (see `egraph_picture`)."""
        if radius < 0:
            raise ValueError(f"radius must be at least 0, got {radius}")
        view = self.view
        if focus is not None:
            centre, why = [find_class(view, self.names, focus)], "focus"
        elif len(view.classes) > max_classes:
            centre, why = list(dict.fromkeys(view.roots)), "size"
        else:
            centre, why = [], "all"
        shown = neighbourhood(view, centre, radius) if centre else list(view.classes)
        return replace(self, class_cost=class_costs(view, self.node_cost, self.extraction, shown), shown=shown,
                       focus=centre, radius=radius, why=why, max_classes=max_classes)


def egraph_picture(closed: ClosedJaxpr, rules="default", cost="flops", extractor="greedy_dag",
                   limits: Limits | None = None, focus: str | None = None, radius: int = 2,
                   max_classes: int = MAX_CLASSES) -> EGraphPicture:
    """Saturate and extract `closed` as `optimize` does, and choose what to draw: the neighbourhood of
    `focus` (a class name `c<k>`, a class id or a unique part of one) within `radius` steps along child or
    parent edges; without `focus`, the whole e-graph, or the roots' neighbourhood when it has more than
    `max_classes` classes. `EGraphPicture.focused` draws another part without saturating again."""
    from rewrites.costs import get_cost_model

    model = get_cost_model(cost)
    sat = saturated(closed, rules, limits)
    node_cost = normalize_costs(sat.view, sat.costs(model))
    extraction = extract(sat.view, node_cost, method=extractor)
    program, report = extract_program(sat, model, extractor, baseline=closed, extraction=extraction)
    names = {cid: f"c{k}" for k, cid in enumerate(sat.view.classes)}
    whole = EGraphPicture(sat, model.name, extraction, program, report, node_cost, {}, names, [], [], 0, "", 0)
    return whole.focused(focus, radius, max_classes)


def find_class(view: EGraphView, names: dict[str, str], text: str) -> str:
    """The class named `text`: a short name (`c12`), a class id, or the one id containing `text`."""
    by_name = {name: cid for cid, name in names.items()}
    if text in by_name:
        return by_name[text]
    if text in view.classes:
        return text
    hits = [cid for cid in view.classes if text in cid]
    if len(hits) == 1:
        return hits[0]
    what = f"{len(hits)} class ids contain it" if hits else "no class has that name or id"
    raise UnknownClass(f"--focus {text!r}: {what}; classes are named c0..c{len(view.classes) - 1} "
                       "on the page (each box's title), or by the id shown when a class is clicked")


def class_links(view: EGraphView) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Each class's child classes and parent classes (through any of its nodes), in the view's order."""
    children: dict[str, dict[str, None]] = {cid: {} for cid in view.classes}
    parents: dict[str, dict[str, None]] = {cid: {} for cid in view.classes}
    for i, node in enumerate(view.nodes):
        cid = view.node_class[i]
        for child in node.children:
            children[cid][child] = None
            parents[child][cid] = None
    order = {cid: k for k, cid in enumerate(view.classes)}
    return ({c: sorted(ds, key=order.get) for c, ds in children.items()},
            {c: sorted(ps, key=order.get) for c, ps in parents.items()})


def neighbourhood(view: EGraphView, centre: list[str], radius: int) -> list[str]:
    """The classes at most `radius` steps from `centre` along child or parent edges, in the view's order."""
    children, parents = class_links(view)
    seen = set(centre)
    frontier = list(centre)
    for _ in range(radius):
        reached = []
        for c in frontier:
            for d in (*children[c], *parents[c]):
                if d not in seen:
                    seen.add(d)
                    reached.append(d)
        frontier = reached
    return [cid for cid in view.classes if cid in seen]


def class_costs(view: EGraphView, node_cost: list[Cost], extraction: Extraction,
                classes: list[str]) -> dict[str, Cost | None]:
    """The DAG cost of each class of `classes` (see the module's docstring); None for a class with no
    finite term. The extracted roots get the extraction's own DAG cost."""
    ix = view.index
    chosen = greedy_dag_choice(view, node_cost, stop_at_roots=False)
    chosen.update((ix.class_of[cid], n) for cid, n in extraction.choice.items())
    reach: dict[int, int] = {}  # class number -> bitset of the classes its chosen sub-program holds
    for c in postorder(ix, chosen, sorted(chosen)):
        bits = 1 << c
        for d in ix.children[chosen[c]]:
            bits |= reach[d]
        reach[c] = bits
    out: dict[str, Cost | None] = {}
    for cid in classes:
        bits = reach.get(ix.class_of[cid])
        out[cid] = None if bits is None else exact_sum(
            node_cost[chosen[d]] for d in range(bits.bit_length()) if bits >> d & 1)
    return out


# --- drawing ------------------------------------------------------------------------------------------------

COLORS = {"class": "#f4f4f4", "class_chosen": "#e6f0ff", "border": "#9a9a9a", "border_chosen": "#2f6fd0",
          "border_root": "#c0392b", "node": "#ffffff", "node_chosen": "#ffd866", "edge": "#777777",
          "edge_chosen": "#2f6fd0"}


def cost_text(value: Cost | None) -> str:
    if value is None:
        return "no finite term"
    if isinstance(value, int):
        return f"{value:,}"
    return "inf" if math.isinf(value) else f"{value:.4g}"


def node_text(pic: EGraphPicture, i: int) -> tuple[list[str], list[str]]:
    """An e-node's label lines and hover lines."""
    view, avals, enc = pic.view, pic.sat.avals, pic.sat.enc
    node = view.nodes[i]
    cost_line = f"node cost ({pic.model_name}): {cost_text(pic.node_cost[i])}"
    if node.op in _LEAF_OPS:
        words = [_LEAF_OPS[node.op], *map(str, node.payload)]
        return [" ".join(words)], [" ".join(words), f"type: {avals.get(view.node_class[i], '?')}"]
    if node.op == "scalar":
        value, dtype = node.payload
        return [f"{value}:{dtype}"], [f"scalar {value}:{dtype}"]
    if node.op in ("cons", "nil", "get", "body", "bcons", "bnil"):  # operand lists, tuple items, loop bodies
        text = node.op + (" " + " ".join(map(str, node.payload)) if node.payload else "")
        return [text], [text]
    primitive = node_primitive(node)
    try:
        in_avals = [avals[c] for c in operand_classes(view, node)]
        params = node_params(node, in_avals, enc)
    except (KeyError, EqjaxError):  # a class without a type (no finite term): show the raw payload
        return [primitive], [f"{node.op}{canonical(node.payload)}", cost_line]
    result = avals.get(view.node_class[i])
    in_text = ", ".join(map(str, in_avals))
    return label_lines(primitive, params), [*title_lines(primitive, params), f"({in_text}) -> {result}", cost_line]


def egraph_dot(pic: EGraphPicture):
    """The Graphviz digraph of the drawn classes: a cluster per class, an edge per (e-node, child class);
    a child class that is not drawn is a dashed stub node."""
    graphviz = graphviz_module()
    view, names, extraction = pic.view, pic.names, pic.extraction
    shown = set(pic.shown)
    on_program = set(extraction.choice)
    chosen_nodes = set(extraction.choice.values())
    roots = {cid: k for k, cid in reversed(list(enumerate(view.roots)))}
    graph = graphviz.Digraph("egraph", graph_attr={"compound": "true", "rankdir": "TB", "fontname": FONT,
                                                   "nodesep": "0.2", "ranksep": "0.45"},
                             node_attr={"fontname": FONT, "fontsize": "10", "shape": "box",
                                        "style": "rounded,filled", "height": "0.3"},
                             edge_attr={"arrowsize": "0.6", "color": COLORS["edge"]})
    for cid in pic.shown:
        name, aval = names[cid], pic.sat.avals.get(cid)
        chosen = cid in on_program
        head = name + (f" = output {roots[cid]}" if cid in roots else "")
        classes = "eclass" + (" chosen" if chosen else "") + (" root" if cid in roots else "")
        border = COLORS["border_root"] if cid in roots else COLORS["border_chosen" if chosen else "border"]
        with graph.subgraph(name=f"cluster_{name}", graph_attr={
                "id": f"class-{name}", "class": classes, "style": "rounded,filled",
                "fillcolor": COLORS["class_chosen" if chosen else "class"], "color": border,
                "penwidth": "2.2" if chosen or cid in roots else "1", "fontsize": "10",
                "label": label([head, f"cost {cost_text(pic.class_cost[cid])}"]),
                "tooltip": tooltip([f"{name}: {cid}", f"type: {aval if aval is not None else '-'}",
                                    f"cost: {cost_text(pic.class_cost[cid])}"])}) as cluster:
            for i in view.classes[cid]:
                lines, hover = node_text(pic, i)
                picked = i in chosen_nodes
                cluster.node(f"n{i}", label(lines), id=f"enode-{i}", tooltip=tooltip(hover),
                             fillcolor=COLORS["node_chosen" if picked else "node"], penwidth="1.6" if picked else "1",
                             **{"class": "enode chosen" if picked else "enode"})
    stubs: set[str] = set()
    for cid in pic.shown:
        for i in view.classes[cid]:
            picked = i in chosen_nodes
            style = {"color": COLORS["edge_chosen"], "penwidth": "1.6", "class": "on-program"} if picked else {}
            for child in view.nodes[i].children:
                if child == cid:  # a node of its own class (transpose of a transpose): a loop on the node
                    graph.edge(f"n{i}", f"n{i}", **style)
                elif child in shown:
                    graph.edge(f"n{i}", f"n{view.classes[child][0]}", lhead=f"cluster_{names[child]}", **style)
                else:
                    stub = f"stub-{names[child]}"
                    if stub not in stubs:
                        stubs.add(stub)
                        graph.node(stub, label([f"{names[child]} …"]), id=stub, shape="ellipse", style="dashed",
                                   tooltip=tooltip([f"{names[child]}: not drawn (outside the neighbourhood)"]),
                                   **{"class": "stub"})
                    graph.edge(f"n{i}", stub, style="dashed", **{k: v for k, v in style.items() if k != "class"})
    return graph


def page_data(pic: EGraphPicture) -> dict:
    """The JSON the page's script reads: each drawn class with its nodes and neighbours, by short name."""
    view, names = pic.view, pic.names
    children, parents = class_links(view)
    node_class = {}
    classes = {}
    for cid in pic.shown:
        nodes = []
        for i in view.classes[cid]:
            lines, _ = node_text(pic, i)
            nodes.append({"id": i, "text": " ".join(lines), "cost": cost_text(pic.node_cost[i]),
                          "chosen": pic.extraction.choice.get(cid) == i})
            node_class[i] = names[cid]
        aval = pic.sat.avals.get(cid)
        classes[names[cid]] = {"id": cid, "type": str(aval) if aval is not None else "-",
                               "cost": cost_text(pic.class_cost[cid]), "on_program": cid in pic.extraction.choice,
                               "nodes": nodes, "children": [names[c] for c in children[cid]],
                               "parents": [names[c] for c in parents[cid]]}
    return {"classes": classes, "node_class": node_class, "roots": [names[r] for r in view.roots]}


def egraph_html(closed: ClosedJaxpr, rules="default", cost="flops", extractor="greedy_dag",
                limits: Limits | None = None, focus: str | None = None, radius: int = 2,
                max_classes: int = MAX_CLASSES, title: str = "program") -> str:
    """The saturated e-graph of `closed` as one self-contained HTML page (see `egraph_picture` for what is
    drawn)."""
    graphviz_module()  # fail before saturating when Graphviz is missing
    pic = egraph_picture(closed, rules, cost, extractor, limits, focus, radius, max_classes)
    return page_html(pic, title)


def page_html(pic: EGraphPicture, title: str) -> str:
    svg = svg_of(egraph_dot(pic))
    report, view = pic.report, pic.view
    summary = (f"{len(view.nodes)} e-nodes in {len(view.classes)} e-classes after {report.iterations} "
               f"iterations (stopped by {report.stop_reason}); rules: {', '.join(_fired(report)) or 'none fired'}. "
               f"Extracted by {report.extractor} under {pic.model_name}: program cost "
               f"{cost_text(report.cost_before)} → {cost_text(pic.extraction.dag_cost)}, "
               f"equations {report.eqns_before} → {report.eqns_after}.")
    if report.kept_input:
        summary += (" The engine returns the input program (the extraction was not cheaper); the highlighted "
                    "choice is the extractor's.")
    if pic.why == "all":
        scope = f"All {len(view.classes)} e-classes are drawn."
    else:
        centre = ", ".join(pic.names[c] for c in pic.focus)
        reason = (f"The e-graph has {len(view.classes)} e-classes, more than {pic.max_classes}: drawn is the outputs'"
                  if pic.why == "size" else "Drawn is the")
        steps = f"{pic.radius} step" + ("" if pic.radius == 1 else "s")
        scope = (f"{reason} neighbourhood, the {len(pic.shown)} classes within {steps} of {centre} "
                 "(along child or parent edges); dashed ellipses are classes outside it. "
                 "Use --focus CLASS --radius K (egraph_html(focus=..., radius=...)) to draw another part.")
    data = json.dumps(page_data(pic), sort_keys=True).replace("</", "<\\/")
    template = Template(files("rewrites.show").joinpath("page.html").read_text(encoding="utf-8"))
    return template.substitute(title=html.escape(title), summary=html.escape(summary), scope=html.escape(scope),
                               model=html.escape(pic.model_name), svg=svg, data=data,
                               classes=len(pic.shown), nodes=sum(len(view.classes[c]) for c in pic.shown))


def _fired(report: Report) -> list[str]:
    fired = sorted(((n, c) for n, c in report.rule_matches.items() if c), key=lambda nc: (-nc[1], nc[0]))
    return [f"{n} ×{c}" for n, c in fired[:12]] + ([f"… {len(fired) - 12} more"] if len(fired) > 12 else [])
