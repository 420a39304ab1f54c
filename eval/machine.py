"""The fingerprint of the machine a measurement was taken on: CPU, cores, BLAS, library versions and
thread settings. A time means nothing without it; a latency profile for another machine is refused by
comparing `machine_key()`s.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from functools import cache
from importlib import metadata

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "NUMEXPR_MAX_THREADS", "XLA_FLAGS")
LIBRARIES = ("numpy", "scipy", "numexpr", "egglog", "jax", "jaxlib", "ml_dtypes", "eqjax")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def thread_pools() -> list[dict]:
    """The native thread pools loaded in this process (BLAS, OpenMP), as threadpoolctl reports them."""
    from threadpoolctl import threadpool_info

    return [{k: p.get(k) for k in ("user_api", "internal_api", "version", "num_threads", "architecture")}
            for p in threadpool_info()]


@cache
def _static() -> dict:
    return {
        "cpu": _cpu_model(),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "libraries": {name: _version(name) for name in LIBRARIES},
    }


def fingerprint() -> dict:
    """The machine and the software a measurement ran on (thread settings read now)."""
    import numpy as np  # noqa: F401  (loads BLAS, so threadpoolctl sees it)

    return {**_static(), "blas": thread_pools(),
            "threads": {k: os.environ[k] for k in THREAD_VARIABLES if k in os.environ}}


def machine_key(fp: dict | None = None) -> str:
    """A short hash of what makes times comparable: CPU model, core count, architecture."""
    fp = fp or fingerprint()
    basis = {k: fp.get(k) for k in ("cpu", "machine", "cores")}
    return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()[:16]
