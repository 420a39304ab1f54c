"""Concrete terms as programs: a `Term` decoded into a jaxpr over the program's inputs, and a step re-checked
by evaluating its two sides on sample inputs under the judge of the rule's soundness class."""

from __future__ import annotations

import numpy as np

from eval.interpreter import eval_jaxpr
from ir.core import ClosedJaxpr
from rewrites.decode import class_avals, decode
from rewrites.egraph_view import EGraphView, ENode
from rewrites.explain.match import Term
from rewrites.verify.judges import FINITE, agree_default, agree_fast, agree_strict, tolerance_for

# How the two sides of a step must agree, by the cited rule's soundness class (DESIGN.md): an exact rule
# bit for bit; a real or guarded one within rounding (guards are facts the analyses proved of the program,
# so they hold on every input of it); an unsafe one wherever the left side is finite.
JUDGE_OF = {"exact": agree_strict, "real": agree_default, "guarded": agree_default, "unsafe": agree_fast,
            "unexplained": agree_default}
SAMPLES = 6


def term_program(view: EGraphView, term: Term, enc) -> ClosedJaxpr:
    """The program computing `term` from the inputs of the encoded program `enc` (a node per distinct subterm)."""
    names: dict[Term, str] = {}
    classes: dict[str, list[ENode]] = {}

    def name(t: Term) -> str:
        hit = names.get(t)
        if hit is None:
            kids = tuple(name(k) for k in t.kids)
            node = view.nodes[t.node]
            hit = names[t] = f"t{len(names)}-{view.node_class[t.node]}"
            classes[hit] = [ENode(node.op, kids, node.payload)]
        return hit

    root = name(term)
    synthetic = EGraphView.from_classes(classes, [root])
    choice = {cid: members[0] for cid, members in synthetic.classes.items()}
    return decode(synthetic, choice, enc, class_avals(synthetic, enc))


def sample_inputs(closed: ClosedJaxpr, seed: int = 0, count: int = SAMPLES) -> list[list[np.ndarray]]:
    """Moderate finite inputs (normal floats, small integers, bools), seeded."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        args = []
        for aval in closed.in_avals:
            dtype = np.dtype(aval.dtype.numpy)
            if dtype.kind == "f" or dtype.kind == "V":
                args.append(rng.standard_normal(aval.shape).astype(dtype))
            elif dtype.kind == "c":
                args.append((rng.standard_normal(aval.shape) + 1j * rng.standard_normal(aval.shape)).astype(dtype))
            elif dtype.kind == "b":
                args.append(rng.random(aval.shape) < 0.5)
            else:
                args.append(rng.integers(-5, 6, aval.shape).astype(dtype))
        out.append(args)
    return out


def recheck(before: ClosedJaxpr, after: ClosedJaxpr, soundness: str, samples: list) -> str | None:
    """None when the two sides agree on every sample under the soundness class's judge, else the difference."""
    judge, tol = JUDGE_OF[soundness], tolerance_for(before)
    for args in samples:
        for want, got in zip(eval_jaxpr(before, *args), eval_jaxpr(after, *args), strict=True):
            problem = judge(np.asarray(want), np.asarray(got), FINITE, tol)
            if problem:
                return problem
    return None
