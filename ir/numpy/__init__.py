"""A `jax.numpy`-like namespace for traced code, emitting the primitives JAX 0.10.2 emits.

One module per family, all re-exported here: `creation`, `manipulation` and `layout` (shapes, stacking,
diagonals, grids), `elementwise` and `ufuncs`, `reductions` and `statistics`, `contractions` and
`polynomials`, `indexing` (`x[idx]` with integer arrays as JAX's gather, `x.at[idx]` as its scatter),
`selection` and `sets` (data-dependent results need `size=`, as under `jax.jit`), `dtype_queries`, `misc`;
`linalg` and `fft` are the `jnp.linalg` / `jnp.fft` submodules. tests/ir/test_numpy_surface.py prints
which of jax.numpy's names are still missing.

Binary functions promote dtypes on JAX's x64 lattice with weak types (`ir.dtypes.promote`):
a Python scalar next to an f32 array becomes an f32 literal, an i32 array next to 2.5 is
converted to a weak f64 first. Shapes broadcast as in JAX: operands of different nonzero ranks
get leading 1s through `broadcast_in_dim`, and the primitive itself broadcasts size-1 and
rank-0 operands (JAX prints `add g h` with g:f64[4,5], h:f64[1,5]).

Departures from JAX's traced text, all numerically identical: JAX's `jit` wrappers around some
functions (`_where`, `clip`, `cumsum`, `remainder`, ...) are inlined; `logaddexp` is inlined
without its `custom_jvp_call`; `einsum` contracts left to right instead of opt_einsum's order;
`var`/`std` divide by a static normalizer; `searchsorted` compares all pairs (JAX's
`method="compare_all"`); the linalg functions are not wrapped in JAX's custom_jvps.
Constants (`asarray(2.0)`, `zeros(())`, `arange(1, 9, 2)`) are tracers of the current trace
holding a Literal or a constvar, so operations on them are recorded, as JAX stages them out.
"""

from ir.numpy import fft, linalg  # noqa: E402, F401  (jnp.fft, jnp.linalg)
from ir.numpy._base import (  # noqa: F401
    bfloat16,
    bool_,
    broadcast_shapes,
    complex64,
    complex128,
    complex_,
    e,
    float16,
    float32,
    float64,
    float_,
    inf,
    int8,
    int16,
    int32,
    int64,
    int_,
    nan,
    ndim,
    newaxis,
    pi,
    promote_dtypes,
    promote_dtypes_inexact,
    promote_dtypes_numeric,
    promote_shapes,
    result_type,
    shape,
    size,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ir.numpy.contractions import *  # noqa: F403
from ir.numpy.creation import *  # noqa: F403
from ir.numpy.dtype_queries import *  # noqa: F403
from ir.numpy.elementwise import *  # noqa: F403
from ir.numpy.indexing import *  # noqa: F403
from ir.numpy.layout import *  # noqa: F403
from ir.numpy.manipulation import *  # noqa: F403
from ir.numpy.misc import *  # noqa: F403
from ir.numpy.polynomials import *  # noqa: F403
from ir.numpy.reductions import *  # noqa: F403
from ir.numpy.selection import *  # noqa: F403
from ir.numpy.sets import *  # noqa: F403
from ir.numpy.statistics import *  # noqa: F403
from ir.numpy.ufuncs import *  # noqa: F403
