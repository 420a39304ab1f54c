"""`eqjax rules verify --set ad|vmap` as a sweep (`eval.study`): one task per verdict name.

    transform_verify_tasks("ad", names=()) -> list[Task]   # jvp-<prim>..., then vjp-<prim>...
    transform_verify_tasks("vmap", names=())               # vmap-<prim>...

The names and their order are those `transforms.ad.verify` and `transforms.batching.verify` give (primitives
sorted); each task runs that module's check for its one name and returns the verdicts as dicts (one, or none
when the check makes no verdict of that name).
"""

from __future__ import annotations

from collections.abc import Collection

from eval.study import Task
from transforms.sample_check import verdict_name


def transform_verify_tasks(rule_set: str, names: Collection[str] = ()) -> list[Task]:
    if rule_set == "ad":
        from transforms.ad.rule import VJP
        from transforms.ad.verify import checked_primitives

        kinds = [("jvp", checked_primitives()), ("vjp", sorted(VJP))]
    elif rule_set == "vmap":
        from transforms.batching.programs import vmap_rules
        from transforms.batching.rule import BATCH, POLICY

        vmap_rules()  # imports every rule module, filling the registries
        kinds = [("vmap", sorted(set(BATCH) | set(POLICY)))]
    else:
        raise ValueError(f"rule set {rule_set!r} has no transform verification: choose ad or vmap")
    return [Task("transforms.transform_verify_study:verify_transform_rule", {"kind": kind, "name": name})
            for kind, prims in kinds for name in [verdict_name(kind, p) for p in prims] if not names or name in names]


def verify_transform_rule(kind: str, name: str) -> list[dict]:
    if kind == "jvp":
        from transforms.ad.verify import verify_jvp_rules as verify
    elif kind == "vjp":
        from transforms.ad.verify import verify_vjp_rules as verify
    else:
        from transforms.batching.verify import verify_batching_rules as verify
    return [v.to_dict() for v in verify(names=[name])]
