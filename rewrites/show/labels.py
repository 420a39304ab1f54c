"""Text of equations and e-nodes in pictures: the params as JAX prints them, shortened for a label."""

from __future__ import annotations

from typing import Any

from ir.core import ClosedJaxpr, Jaxpr
from ir.text.eqn_rules import printed_params
from ir.text.printer import value_text
from rewrites.show.render import short

LABEL_PARAMS = 3  # params shown in a label; the hover title has them all
LABEL_WIDTH = 36


def _is_program(value: Any) -> bool:
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        return True
    return isinstance(value, tuple) and bool(value) and all(isinstance(v, (Jaxpr, ClosedJaxpr)) for v in value)


def param_items(primitive: str, params: dict) -> list[str]:
    """`key=value` for each param JAX prints, nested programs written as `{...}` (a picture has no room for them)."""
    items = []
    for key, value in printed_params(primitive, params):
        if value is None:
            continue
        text = "{…}" if _is_program(value) else value_text(value)
        items.append(f"{key}={text}")
    return items


def label_lines(primitive: str, params: dict) -> list[str]:
    """The primitive, then its first `LABEL_PARAMS` params, each cut to `LABEL_WIDTH` characters."""
    items = param_items(primitive, params)
    lines = [primitive, *(short(item, LABEL_WIDTH) for item in items[:LABEL_PARAMS])]
    if len(items) > LABEL_PARAMS:
        lines.append(f"(+{len(items) - LABEL_PARAMS} more)")
    return lines


def title_lines(primitive: str, params: dict) -> list[str]:
    """Every param in full (but nested programs), for a hover title."""
    return [primitive, *(short(item, 400) for item in param_items(primitive, params))]
