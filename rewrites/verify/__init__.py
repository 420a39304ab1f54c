"""Rule verification: the soundness class of a `PatternRule` from evidence, against the declared one.

    verify_rule(rule, budget=None) -> Verdict      # verdict: ok | misclassified | unsound | unknown
    verify_rules(rules) -> list[Verdict]
    merge_verdicts(verdicts) -> list[Verdict]     # one per name, for rules dumped as several patterns

`instantiate` turns a rule into two programs over the same inputs, `symbolic` proves or disproves the
sides equal over the reals with SymPy, `numeric` compares them on special values (bits and result
kinds) and searches for real-number differences in high precision (`highprec`, mpmath) with
hypothesis; rules that are not elementwise are compared on arrays (`arrays`), their param variables
at sampled values (`params`); `classify` combines the evidence. The classes are those of
`rewrites.rule`. With `prove=seconds`, `smt` also asks z3 to prove each `exact` rule bit-exact or refute it
(`Verdict.smt`; `smt_jaxpr` translates the programs; z3 is imported only then).
"""

from rewrites.verify.classify import VERDICTS, Verdict, default_budget, merge_verdicts, verify_rule, verify_rules
from rewrites.verify.instantiate import Instance, NotInstantiable, instantiate
from rewrites.verify.numeric import Counterexample, Evidence
from rewrites.verify.symbolic import Symbolic

__all__ = ["VERDICTS", "Counterexample", "Evidence", "Instance", "NotInstantiable", "Symbolic", "Verdict",
           "default_budget", "instantiate", "merge_verdicts", "verify_rule", "verify_rules"]
