"""extraction-gym's serialized e-graphs as an `EGraphView` with a cost per node.

extraction-gym (github.com/egraphs-good/extraction-gym, MIT) stores an e-graph as JSON in the
egraph-serialize format (rev 951b829):

    {"nodes": {node id: {"op": str, "children": [node id, ...], "eclass": class id, "cost": float}},
     "root_eclasses": [class id, ...], "class_data": {...}}

A child is named by a node id and stands for that node's class; `children` defaults to [] and
`cost` to 1.0. The classes are numbered in order of first appearance in `nodes`, each listing its
nodes in that order (egraph-serialize's `EGraph::classes`), which is also the order of the view,
so the ported gym extractors visit classes and nodes as the Rust ones do. A node's payload is its
gym node id: two nodes of a class with the same op and children stay distinct.

`make_bundle(checkout_data, out)` re-makes the subset of the gym's data kept in this repository
(`tests/extraction_gym/`, see its README): `python -m rewrites.extract.gym CHECKOUT/data OUT`.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from ir.errors import EqjaxError
from rewrites.egraph_view import EGraphView, ENode

GYM_COMMIT = "903ba0f"  # the extraction-gym commit the bundled data was taken from
BUNDLE = Path(__file__).resolve().parents[2] / "tests" / "extraction_gym"


class GymFormatError(EqjaxError, ValueError):
    """A file that is not an extraction-gym e-graph (names the file and what is wrong)."""


class GymEGraph(NamedTuple):
    name: str  # "<data set>/<file stem>"
    view: EGraphView
    cost: list[float]  # per node of `view`


def read_gym(path: str | Path, name: str | None = None) -> GymEGraph:
    """The e-graph of one gym JSON file (`.json` or `.json.gz`)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise GymFormatError(f"{path}: not JSON ({e})") from None
    return gym_egraph(data, name or f"{path.parent.name}/{path.name.split('.json')[0]}")


def gym_egraph(data: dict, name: str = "egraph") -> GymEGraph:
    """The e-graph of a parsed gym JSON document."""
    nodes = data.get("nodes")
    if not isinstance(nodes, dict):
        raise GymFormatError(f"{name}: no 'nodes' object")
    class_of_node = {}
    for nid, node in nodes.items():
        if "eclass" not in node:
            raise GymFormatError(f"{name}: node {nid!r} has no 'eclass'")
        class_of_node[nid] = str(node["eclass"])
    classes: dict[str, list[ENode]] = {}
    cost_of: dict[str, list[float]] = {}
    for nid, node in nodes.items():
        try:
            children = tuple(class_of_node[child] for child in node.get("children", ()))
        except KeyError as e:
            raise GymFormatError(f"{name}: node {nid!r} has child {e.args[0]!r}, which is not a node") from None
        cid = class_of_node[nid]
        classes.setdefault(cid, []).append(ENode(str(node.get("op", "")), children, (nid,)))
        cost_of.setdefault(cid, []).append(float(node.get("cost", 1.0)))
    roots = [str(r) for r in data.get("root_eclasses", ())]
    if not roots:
        raise GymFormatError(f"{name}: no root e-classes")
    missing = [r for r in roots if r not in classes]
    if missing:
        raise GymFormatError(f"{name}: root e-class(es) {', '.join(map(repr, missing))} have no nodes")
    view = EGraphView.from_classes(classes, roots)
    return GymEGraph(name, view, [c for costs in cost_of.values() for c in costs])


def unsupported(egraph: GymEGraph) -> str | None:
    """Why eqjax's extractors cannot run on `egraph`, or None: they need non-negative costs (so
    does the gym's ILP, which asserts it; maxsat's e-graphs cost clauses -1)."""
    negative = sum(1 for c in egraph.cost if c < 0)
    return f"{negative} node(s) with a negative cost" if negative else None


def gym_files(data_dir: str | Path) -> dict[str, list[Path]]:
    """The e-graph files under `data_dir`, per data set (its sub-folders), sorted by name."""
    data_dir = Path(data_dir)
    found: dict[str, list[Path]] = {}
    for folder in sorted(p for p in data_dir.iterdir() if p.is_dir()):
        files = sorted(p for p in folder.iterdir() if p.name.endswith((".json", ".json.gz")))
        if files:
            found[folder.name] = files
    return found


def choose_bundle(files: Sequence[Path], per_set: int = 3, size_cap: int = 2_500_000) -> list[Path]:
    """The smallest file and files spread evenly up to the median by size, among the well-formed ones
    with non-negative costs of at most `size_cap` bytes: `per_set` files in all (fewer if the set has
    fewer)."""
    sized = sorted((p.stat().st_size, p.name, p) for p in files if p.stat().st_size <= size_cap and _usable(p))
    if not sized:
        return []
    median = (len(sized) - 1) // 2
    picks = sorted({round(k * median / max(per_set - 1, 1)) for k in range(per_set)})
    return [sized[i][2] for i in picks]


def _usable(path: Path) -> bool:
    try:
        return unsupported(read_gym(path)) is None
    except GymFormatError:
        return False


def make_bundle(checkout_data: str | Path, out: str | Path, per_set: int = 3, size_cap: int = 2_500_000) -> list[Path]:
    """Gzip `choose_bundle`'s picks of each data set of a gym checkout's `data/` into `out/<set>/`."""
    out = Path(out)
    written = []
    for data_set, files in gym_files(checkout_data).items():
        for path in choose_bundle(files, per_set, size_cap):
            target = out / data_set / (path.name + ".gz")
            target.parent.mkdir(parents=True, exist_ok=True)
            # mtime=0 and no file name in the header: the same input gives the same bytes
            with open(target, "wb") as raw, gzip.GzipFile("", "wb", 9, raw, mtime=0) as f:
                f.write(path.read_bytes())
            written.append(target)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m rewrites.extract.gym EXTRACTION_GYM_CHECKOUT/data OUT_DIR")
    for p in make_bundle(sys.argv[1], sys.argv[2]):
        print(p)
