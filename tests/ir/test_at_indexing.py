"""Integer-array indexing and `x.at[idx]` updates against jax.numpy, and the gather JAX prints for `x[idx]`."""

import jax
import numpy as np
import pytest

import ir.numpy as inp
from ir.tracing import make_jaxpr
from tests.ir.test_numpy_surface import check

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

X = np.arange(24.0).reshape(2, 3, 4)
IDX = np.array([2, -1, 0, 1], np.int32)
MASK = X[..., 0] > 5

CASES = {
    "rows": (lambda m, x: x[IDX[:2]], (X,)),
    "middle_axis": (lambda m, x: x[:, IDX[:3]], (X,)),
    "int_then_array": (lambda m, x: x[0, :, IDX], (X,)),
    "separated_arrays_go_first": (lambda m, x: x[IDX[:2], :, IDX[:2]], (X,)),
    "2d_index_after_ellipsis": (lambda m, x: x[..., np.array([[0, 3], [1, 2]])], (X,)),
    "slice_newaxis_and_array": (lambda m, x: x[1:, None, IDX[:3]], (X,)),
    "constant_mask": (lambda m, x: x[MASK], (X,)),
    "traced_index": (lambda m, x, i: x[:, i], (X, IDX[:3])),
    "set": (lambda m, x: x.at[1, IDX[:3]].set(7.0), (X,)),
    "add_broadcast": (lambda m, x: x.at[:, IDX[:3]].add(1.0), (X,)),
    "add_repeated_indices": (lambda m, x: x.at[..., np.array([0, 0, 3])].add(1.0), (X,)),
    "multiply_scalar_index": (lambda m, x: x.at[0, 1].multiply(3.0), (X,)),
    "min": (lambda m, x: x.at[IDX[:2]].min(2.0), (X,)),
    "max_traced_values": (lambda m, x, v: x.at[1, :, 2].max(v), (X, np.array([5.0, 50.0, 0.0]))),
    "set_out_of_bounds_dropped": (lambda m, x: x.at[1, 9].set(5.0), (X,)),
    "get_fill": (lambda m, x: x.at[np.array([0, 5])].get(mode="fill", fill_value=-1.0), (X[0, 0],)),
    "set_slice": (lambda m, x: x.at[1, 1:3].set(-1.0), (X,)),
    "add_slices_and_array": (lambda m, x: x.at[:, 1:, IDX[:2]].add(10.0), (X,)),
    "add_slice_traced_values": (lambda m, x, v: x.at[0, :2, 1:3].add(v), (X, np.ones((2, 2)))),
    "set_empty_slice": (lambda m, x: x.at[0, 3:].set(1.0), (X,)),
    "set_traced_index": (lambda m, x, i: x.at[i].set(0.0), (X[0], IDX[:2])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_indexing_matches_jax(name):
    check(name, CASES, inp, jnp, rtol=0, atol=0)


def test_gather_is_what_jax_prints():
    closed = make_jaxpr(lambda x, i: x[i])(np.zeros((3, 4)), np.zeros(4, np.int32))
    assert [e.primitive for e in closed.jaxpr.eqns] == ["lt", "add", "select_n", "broadcast_in_dim", "gather"]
    jax_text = str(jax.make_jaxpr(lambda x, i: x[i])(jnp.zeros((3, 4)), jnp.zeros(4, jnp.int32)))
    assert str(closed.jaxpr.eqns[-1].params["dimension_numbers"]) in jax_text
