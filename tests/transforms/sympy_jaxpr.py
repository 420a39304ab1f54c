from rewrites.verify.sympy_jaxpr import *  # noqa: F403  (moved to the library: rewrites/verify/sympy_jaxpr.py)
