"""Calibrated latency profiles: cost models in seconds, measured on this machine, per backend.

    eqjax calibrate --backend numpy                      # measure and fit; writes ~/.cache/eqjax/profiles/
    model = LatencyModel.for_backend("numpy")            # a CostModel named "latency-numpy"
    optimize(closed, cost=model); model.program_seconds(closed)

| module        | owns                                                                               |
|---------------|------------------------------------------------------------------------------------|
| `probes`      | the one-equation programs timed: oracle samples, scaled elementwise, grid families  |
| `calibrate`   | timing them on a backend net of the call overhead, and the whole calibration        |
| `fit`         | the per-primitive piecewise non-negative model and the fallback                     |
| `profile`     | the JSON format, validation, where profiles live, the machine check and its errors  |
| `model`       | `LatencyModel`: a profile as a cost model                                           |
"""

from ir.lazy import lazy_exports

# `calibrate` is not among them: the name is its module's (`from rewrites.latency.calibrate import calibrate`).
_LAZY = {"CalibrationError": "rewrites.latency.calibrate",
         "LatencyModel": "rewrites.latency.model",
         "default_profile": "rewrites.latency.profile", "load_profile": "rewrites.latency.profile",
         "save_profile": "rewrites.latency.profile", "validate_profile": "rewrites.latency.profile",
         "ProfileError": "rewrites.latency.profile", "ProfileMachineError": "rewrites.latency.profile",
         "ProfileNotFound": "rewrites.latency.profile"}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = list(_LAZY)
