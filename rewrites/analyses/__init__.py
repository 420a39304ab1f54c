"""Analysis rules: facts about e-classes (shapes of rule-built terms; sign, zero and finiteness of
values) that rules ask for in their conditions. They run to saturation before every rule pass."""

from rewrites.analyses import shapes, values

ANALYSIS_MODULES = (shapes, values)
