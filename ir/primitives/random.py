"""Catalogue rows of the PRNG primitives: key wrapping, bits, splits, threefry and rng ops
(shape rules: ir/shapes/random.py)."""

from __future__ import annotations

from ir.primitives import NOT_DIFFERENTIABLE, define
from ir.primitives.schema import ANY, BOOL, DTYPE, ENUM, INTS, NAT

_KEY = {"random", "zero_derivative"}  # key-valued or bits-valued: no tangents

define("random_seed", operands=1, params={"impl": ANY}, traits={*_KEY, "term"})
define("random_wrap", operands=1, params={"impl": ANY}, traits={*_KEY, "data_movement", "metadata_only", "term"})
define("random_unwrap", operands=1, traits={*_KEY, "data_movement", "metadata_only", "term"})
define("random_bits", operands=1, params={"bit_width": NAT, "shape": INTS}, traits={*_KEY, "term"})
define("random_split", operands=1, params={"shape": INTS}, traits={*_KEY, "term"})
define("random_fold_in", operands=2, traits={*_KEY, "term"})
define("random_clone", operands=1, traits={*_KEY, "data_movement", "term"})
define("random_gamma", operands=2, params={"log_space": BOOL}, traits={"random", "term"})
define("threefry2x32", operands=4, results=2, traits={*_KEY, "term"})
define("rng_bit_generator", operands=1, results=2, traits={*_KEY, "term"},
       params={"shape": INTS, "dtype": DTYPE, "algorithm": ENUM, "out_sharding": ANY})
_STATEFUL = "stateful: it draws from a global generator state the program does not hold"
define("rng_uniform", operands=2, params={"shape": INTS}, traits={"random", "term"},
       gaps={"eval": _STATEFUL, **NOT_DIFFERENTIABLE, "batching": _STATEFUL})
