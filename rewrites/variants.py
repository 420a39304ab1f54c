"""A program's equivalent variants from one saturation, and what each cost model predicts for them: the task of
`papers/cost-models/run.py` (one per program, any executor; the clock is the paper's serial part).

    variants(program_spec("mlp", closed), k=8, models=["ops", "flops"], extractors=["greedy_dag", "ilp"])
    -> {"sampled": [fingerprint, ...],                  # `sample_saturated(k, seed=0)`, in draw order
        "extracted": {"flops/ilp": fingerprint, ...},   # each model's extraction by each extractor
        "programs": {fingerprint: spec},                 # every variant but the input (`eval.study.programs`)
        "predicted": {model: {fingerprint: cost}}}       # every variant's cost, the input's included

Programs travel as text with their constants; a variant that does not read back as the same program (its
fingerprint) fails the task rather than be measured as something else.
"""

from __future__ import annotations

from typing import Any


def variants(program: dict[str, Any], k: int, models: list[str], extractors: list[str]) -> dict[str, Any]:
    from eval.study.programs import load_program, program_spec
    from ir.typecheck import fingerprint
    from rewrites.costs import get_cost_model, jaxpr_cost
    from rewrites.engine import extract_program, saturated
    from rewrites.extract import sample_saturated

    closed = load_program(program)
    programs = {fingerprint(closed): closed}

    def add(variant) -> str:
        fp = fingerprint(variant)
        programs.setdefault(fp, variant)
        return fp

    sat = saturated(closed)
    sampled = [add(p) for p in sample_saturated(sat, k=k, seed=0)]
    extracted = {f"{model}/{extractor}": add(extract_program(sat, model, extractor)[0])
                 for model in models for extractor in extractors}
    cost_models = {m: get_cost_model(m) for m in models}
    specs = {}
    for fp, variant in programs.items():
        if variant is closed:
            continue
        specs[fp] = program_spec(program["name"], variant)
        if fingerprint(load_program(specs[fp])) != fp:
            raise ValueError(f"a variant of {program['name']} ({fp}) does not read back from its text as itself")
    return {"sampled": sampled, "extracted": extracted, "programs": specs,
            "predicted": {m: {fp: float(jaxpr_cost(model, p)) for fp, p in programs.items()}
                          for m, model in cost_models.items()}}
