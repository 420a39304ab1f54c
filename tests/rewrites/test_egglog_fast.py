"""The stand-in for egglog's `HasDeclarations` protocol test answers as the protocol does."""

from egglog import String, Vec, i64, rewrite
from egglog.declarations import Declarations

from rewrites.egglog_fast import PROTOCOL, HasDeclarations
from rewrites.rulesets import all_rules
from rewrites.terms import CONSTRUCTORS, Arr, T, args_list


def test_agrees_with_the_protocol():
    x = Arr.inp(0)
    objects = [x, T.mul(x, x), args_list([x]), String("s"), Vec[i64].empty(), i64(1), CONSTRUCTORS["mul"],
               rewrite(T.neg(x)).to(x), all_rules()[0].egg[0], Declarations(), None, 1, "s", object()]
    for obj in objects:
        assert isinstance(obj, HasDeclarations) == isinstance(obj, PROTOCOL), obj
