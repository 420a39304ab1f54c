"""The algebraic rule set, one module per category; each module's `R.rules` lists its rules."""

from rewrites.rules import (
                            arith,
                            assoc,
                            compare,
                            distrib,
                            domain,
                            explog,
                            fold,
                            inverse,
                            stability,
                            strength,
                            structure,
                            tensor,
                            trig,
)

CATEGORY_MODULES = (arith, fold, strength, inverse, domain, explog, trig, stability, distrib, assoc, compare,
                    tensor, structure)
