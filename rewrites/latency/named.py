"""Profiled cost models by name, as `rewrites.costs.get_cost_model` resolves them.

| name            | model                                                                          |
|-----------------|--------------------------------------------------------------------------------|
| `latency-numpy` | the calibrated latency profile of generated NumPy on this machine (`default_profile`) |
| `latency-xla`   | the same for XLA                                                               |
| `learned:PATH`  | a `LearnedModel` saved at PATH (`rewrites.latency.learned`)                    |

(`latency` alone is resolved first to the profile of the backend the program runs on,
`rewrites.costs.for_backend`.) A model is loaded once per file content: editing or recalibrating a
profile gives a new model, and `source_digest` changes with it, so caches keyed by the name follow.
A profile or learned model measured on another machine is refused (`ProfileMachineError`).
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from rewrites.costs import CostModel


def _path_of(name: str) -> Path:
    if name.startswith("learned:"):
        path = Path(name.removeprefix("learned:")).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"cost model {name!r}: no learned model at {path}")
        return path
    if name in ("latency-numpy", "latency-xla"):
        from rewrites.latency.profile import default_profile

        return Path(default_profile(name.removeprefix("latency-")))
    raise ValueError(f"unknown profiled cost model {name!r}; known: latency-numpy, latency-xla, learned:PATH")


def source_digest(name: str) -> str:
    """SHA-256 of the file `name` is read from."""
    return hashlib.sha256(_path_of(name).read_bytes()).hexdigest()


def named_model(name: str) -> CostModel:
    path = _path_of(name)
    return _load(name, str(path), source_digest(name))


@cache
def _load(name: str, path: str, digest: str) -> CostModel:
    if name.startswith("learned:"):
        from eval.machine import machine_key
        from rewrites.latency.learned import LearnedModel
        from rewrites.latency.profile import ProfileMachineError, describe_machine

        model = LearnedModel.load(path)
        if model.machine_key != machine_key():
            raise ProfileMachineError(
                f"learned cost model {path} was fitted on times of {describe_machine(model.machine)} (key "
                f"{model.machine_key}), not this machine (key {machine_key()}): its seconds do not apply here; "
                "fit one here (papers/cost-models/run.py writes results/learned-<backend>.json)")
        return model.cost_model()
    from rewrites.latency.model import LatencyModel

    return LatencyModel(path)
