"""The primitive coverage matrix: for every catalogue row (ir/primitives), how each property is provided.

    shape     its shape/dtype rule (ir/shapes)
    eval      its NumPy implementation (eval/impls)
    cost      its flops rule (rewrites/costs.py), or its bodies for a higher-order primitive
    jvp, vjp  its AD entries (transforms/ad/rules), its zero derivative, a control-flow or custom rule
              (transforms/ad/control.py, custom.py), or the body the AD builder inlines
    batching  its batching entries (transforms/batching/rules), a control-flow rule, or the inlined body

A cell is how the property is provided ("rule", "zero", "control", "inlined", "bodies"), "gap" when the
row's `gaps` names the property (with the reason), or "MISSING". `problems()` lists every missing
property that is not a named gap, every named gap that is no longer missing, and every registry entry
for a primitive the catalogue has no row for: `eqjax primitives` prints the matrix and fails on them.
"""

from __future__ import annotations

from ir.primitives import PRIMITIVES, PROPERTIES, SHAPE_RULES, _load_rules

Matrix = dict[str, dict[str, str]]


def _registries() -> dict[str, dict[str, set[str]]]:
    """Per property, how-name -> the primitives that provide the property that way."""
    from eval.registry import IMPLS, KEY_RULES
    from eval.registry import _load as load_impls
    from ir.inline import CALLS
    from rewrites.costs import _FLOPS_RULES
    from transforms.ad.build import CONTROL_JVP, CONTROL_VJP, INLINED_FORWARD, INLINED_REVERSE
    from transforms.ad.programs import ad_rules
    from transforms.ad.rule import JVP, VJP, ZERO_DERIVATIVE
    from transforms.batching.build import INLINED
    from transforms.batching.control import BATCH_RULES
    from transforms.batching.programs import vmap_rules
    from transforms.batching.rule import BATCH

    _load_rules()
    load_impls()
    ad_rules()  # imports every AD rule module
    vmap_rules()  # and every batching rule module
    higher_order = {name for name, row in PRIMITIVES.items() if row.higher_order}
    return {
        "shape": {"rule": set(SHAPE_RULES)},
        "eval": {"rule": set(IMPLS), "key rule": set(KEY_RULES)},
        "cost": {"rule": set(_FLOPS_RULES), "bodies": higher_order},
        "jvp": {"rule": set(JVP), "zero": set(ZERO_DERIVATIVE), "control": set(CONTROL_JVP),
                "inlined": set(CALLS | INLINED_FORWARD)},
        "vjp": {"rule": set(VJP), "zero": set(ZERO_DERIVATIVE), "control": set(CONTROL_VJP),
                "inlined": set(CALLS | INLINED_REVERSE)},
        "batching": {"rule": set(BATCH), "control": set(BATCH_RULES), "inlined": set(CALLS | INLINED)},
    }


# "key rule" only says how key-typed operands run; it does not provide an implementation by itself.
_NOT_PROVIDING = {"key rule"}


def coverage_matrix() -> Matrix:
    """primitive -> property -> how it is provided, "gap" or "MISSING" (see the module docstring)."""
    registries = _registries()
    matrix: Matrix = {}
    for name, row in PRIMITIVES.items():
        cells = {}
        for prop in PROPERTIES:
            how = next((how for how, names in registries[prop].items()
                        if how not in _NOT_PROVIDING and name in names), None)
            cells[prop] = how or ("gap" if prop in row.gaps else "MISSING")
        matrix[name] = cells
    return matrix


def problems(matrix: Matrix | None = None) -> list[str]:
    """What `eqjax primitives` fails on: unlisted gaps, stale gap entries, registry entries without a row."""
    matrix = coverage_matrix() if matrix is None else matrix
    out = []
    for name, cells in matrix.items():
        gaps = PRIMITIVES[name].gaps
        out += [f"{name}: no {prop} (provide it, or name it in the row's gaps with the reason)"
                for prop, how in cells.items() if how == "MISSING"]
        out += [f"{name}: the gap {prop!r} is provided now ({cells[prop]}); remove it from the row's gaps"
                for prop in gaps if cells[prop] != "gap"]
        out += [f"{name}: the gap {prop!r} gives no reason" for prop, why in gaps.items() if not why.strip()]
    for prop, ways in _registries().items():
        for how, names in ways.items():
            out += [f"{prop} ({how}) has an entry for {name!r}, which has no catalogue row"
                    for name in sorted(names - set(PRIMITIVES))]
    return out


def format_matrix(matrix: Matrix) -> str:
    """The matrix as a text table, then the named gaps with their reasons."""
    width = max(map(len, matrix)) + 2
    lines = [("primitive".ljust(width) + "".join(p.ljust(10) for p in PROPERTIES)).rstrip()]
    for name, cells in matrix.items():
        lines.append(name.ljust(width) + "".join(cells[p].ljust(10) for p in PROPERTIES).rstrip())
    lines.append("")
    lines += [f"{name} {prop}: {why}" for name, row in PRIMITIVES.items() for prop, why in row.gaps.items()]
    return "\n".join(lines)
