"""The programs the `show` tests draw: the demo's MLP loss, and JAX's gradient of the same model."""

from __future__ import annotations

import json
from pathlib import Path

import ir
from ir.core import ClosedJaxpr
from ir.text import parse_jaxpr
from transforms.demo import example_inputs, mlp_loss

GRADIENTS = Path(__file__).parents[1] / "jax_programs" / "gradients.json"


def demo_program() -> ClosedJaxpr:
    """The MLP loss of `make demo` (transforms/demo.py), traced."""
    return ir.make_jaxpr(mlp_loss)(*example_inputs())


def gradient_program() -> ClosedJaxpr:
    """The gradient of a tanh MLP's loss as JAX builds it (tests/jax_programs/gradients.json)."""
    cases = json.loads(GRADIENTS.read_text())["cases"]
    [case] = [c for c in cases if c["id"] == "program/mlp_tanh" and c["derivative"] == "grad"]
    return parse_jaxpr(case["jaxpr"])
