"""Where the project's copy of the JAX oracle fixtures lives, and the family groups issues refer to."""

from pathlib import Path

ORACLE = Path(__file__).resolve().parent / "oracle"
SHARED_ORACLE = Path(__file__).resolve().parents[2] / "shared" / "oracle"
FOUNDATION_FAMILIES = ("unary", "binary", "compare_bitwise", "reduce", "shape", "indexing", "dot_conv", "dtype")
ALL_FAMILIES = tuple(sorted(p.stem for p in ORACLE.glob("*.json")))
