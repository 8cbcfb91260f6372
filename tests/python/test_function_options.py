"""ndx.function's TensorFlow keywords (reduce_retracing, autograph, jit_compile), functions of
*args, keyword-only parameters and **kwargs (binding, retracing keys, input_signature over
*args), and symbolic ndx.SparseTensor built inside a trace. Expected values by NumPy."""
import numpy as np
import pytest

import ndx


def f64(*shape):
    return np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 0.5


# ---- *args, keyword-only, **kwargs ----------------------------------------------------------

def test_star_args_bind_and_retrace_on_their_count_and_shapes():
    @ndx.function
    def total(x, *rest, scale=2.0):
        out = x
        for r in rest:
            out = out + r
        return out * scale
    a, b, c = f64(3), f64(3) * 2, f64(3) * 3
    np.testing.assert_allclose(total(a), a * 2)
    np.testing.assert_allclose(total(a, b, c), (a + b + c) * 2)
    np.testing.assert_allclose(total(a, b, scale=0.5), (a + b) * 0.5)
    np.testing.assert_allclose(total(a, b, c), (a + b + c) * 2)   # cached
    assert total.experimental_get_tracing_count() == 3
    np.testing.assert_allclose(total(f64(2), f64(2)), (f64(2) + f64(2)) * 2)
    assert total.experimental_get_tracing_count() == 4
    names = [t.node.name for t in total.get_concrete_function(a, b, c).inputs]
    assert names == ["x", "rest_0", "rest_1"]


def test_keyword_only_and_var_keyword_parameters():
    @ndx.function
    def f(x, *, w, shift=1.0, **extra):
        y = x * w + shift
        for k in sorted(extra):
            y = y + extra[k]
        return y
    x, w = f64(2), np.array([3.0, -1.0])
    np.testing.assert_allclose(f(x, w=w), x * w + 1.0)
    np.testing.assert_allclose(f(x, w=w, shift=0.0, b=np.ones(2), a=np.ones(2)),
                               x * w + 2.0)
    with pytest.raises(TypeError):
        f(x)                                   # w is required
    names = [t.node.name for t in f.get_concrete_function(x, w=w, z=np.ones(2)).inputs]
    assert names == ["x", "w", "extra_z"]


def test_input_signature_covers_star_args():
    @ndx.function(input_signature=[ndx.TensorSpec([None], ndx.float64),
                                   ndx.TensorSpec([None], ndx.float64),
                                   ndx.TensorSpec([None], ndx.float64)])
    def f(x, *rest):
        return x - rest[0] * rest[1]
    a, b, c = f64(4), f64(4) + 1, f64(4) - 2
    np.testing.assert_allclose(f(a, b, c), a - b * c)
    np.testing.assert_allclose(f(a[:2], b[:2], c[:2]), a[:2] - b[:2] * c[:2])
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match="sequence of 2 items"):
        f(a, b)
    with pytest.raises(TypeError, match="specs for"):
        ndx.function(lambda x: x, input_signature=[ndx.TensorSpec([1]), ndx.TensorSpec([1])])

    @ndx.function(input_signature=[ndx.TensorSpec([None], ndx.float64)])
    def g(x, *rest):
        return x * 2.0
    np.testing.assert_allclose(g(a), a * 2)
    with pytest.raises(TypeError, match="more positional arguments than input_signature"):
        g(a, b)


# ---- reduce_retracing, autograph, jit_compile -----------------------------------------------

def test_reduce_retracing_relaxes_the_dims_that_changed():
    @ndx.function(reduce_retracing=True)
    def f(x, y, n):
        return ndx.reduce_sum(x, 1) * y + n
    np.testing.assert_allclose(f(f64(2, 3), 2.0, 1), f64(2, 3).sum(1) * 2 + 1)
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(f(f64(4, 3), 2.0, 1), f64(4, 3).sum(1) * 2 + 1)
    assert f.experimental_get_tracing_count() == 2       # traced once more, dim 0 None
    for rows in (1, 5, 7):
        np.testing.assert_allclose(f(f64(rows, 3), 2.0, 1), f64(rows, 3).sum(1) * 2 + 1)
    assert f.experimental_get_tracing_count() == 2
    shapes = [tuple(t.shape) for t in f.get_concrete_function(f64(6, 3), 2.0, 1).inputs]
    assert shapes[0] == (None, 3)
    np.testing.assert_allclose(f(f64(3, 2), 2.0, 1), f64(3, 2).sum(1) * 2 + 1)
    assert f.experimental_get_tracing_count() == 3       # both dims now None
    np.testing.assert_allclose(f(f64(2, 9), 2.0, 1), f64(2, 9).sum(1) * 2 + 1)
    assert f.experimental_get_tracing_count() == 3
    f(f64(2, 3), 2.0, 5)                                 # a Python value retraces
    assert f.experimental_get_tracing_count() == 4
    f(f64(2, 3, 1)[..., 0].astype(np.float32), 2.0, 1)   # another dtype retraces
    assert f.experimental_get_tracing_count() == 5


def test_without_reduce_retracing_each_shape_is_traced():
    @ndx.function
    def f(x):
        return x + 1.0
    for rows in (1, 2, 3):
        f(f64(rows))
    assert f.experimental_get_tracing_count() == 3
    assert f.reduce_retracing is False


@pytest.mark.parametrize("autograph", [True, False])
def test_autograph_does_not_rewrite_python_control_flow(autograph):
    @ndx.function(autograph=autograph, jit_compile=True)
    def f(x):
        if ndx.reduce_sum(x):
            return x
        return -x
    with pytest.raises(TypeError, match="symbolic: it has no truth value while tracing"):
        f(f64(2))

    @ndx.function(autograph=autograph, jit_compile=False)
    def g(x, n):
        for _ in range(n):          # a loop over a Python value is unrolled
            x = x * 2.0
        return x
    np.testing.assert_allclose(g(f64(2), 3), f64(2) * 8)
    assert g.autograph is autograph and g.jit_compile is False


def test_keywords_are_tensorflow_s_positions_and_defaults():
    spec = [ndx.TensorSpec([2], ndx.float64)]
    f = ndx.function(lambda x: x * 3.0, spec, True, None, False)
    np.testing.assert_allclose(f(f64(2)), f64(2) * 3)
    g = ndx.function(lambda x: x)
    assert (g.autograph, g.jit_compile, g.reduce_retracing) == (True, None, False)


# ---- symbolic SparseTensor ------------------------------------------------------------------

def test_a_sparse_tensor_of_traced_tensors_feeds_the_sparse_ops_and_is_returned():
    @ndx.function
    def f(indices, values, shape):
        st = ndx.SparseTensor(indices, values * 2.0, shape)
        other = ndx.SparseTensor(indices, values, shape)
        both = ndx.sparse.concat(1, [st, other])
        return st, ndx.sparse.to_dense(ndx.sparse.reorder(st)), both
    indices = np.array([[1, 0], [0, 2]], np.int64)
    values = np.array([1.5, -2.0])
    shape = np.array([2, 3], np.int64)
    st, dense, both = f(indices, values, shape)
    assert isinstance(st, ndx.SparseTensor)
    np.testing.assert_array_equal(st.indices, indices)
    np.testing.assert_array_equal(st.values, values * 2)
    np.testing.assert_array_equal(st.dense_shape, shape)
    want = np.zeros((2, 3))
    want[1, 0], want[0, 2] = 3.0, -4.0
    np.testing.assert_array_equal(dense, want)
    assert isinstance(both, ndx.SparseTensor)
    np.testing.assert_array_equal(ndx.sparse.to_dense(both),
                                  np.concatenate([want, want / 2], axis=1))


def test_a_symbolic_sparse_tensor_mixes_traced_and_python_parts():
    @ndx.function(input_signature=[ndx.TensorSpec([None], ndx.float32)])
    def f(values):
        st = ndx.SparseTensor([[0, 0], [1, 1], [2, 0]], values, [3, 2])
        assert st.shape == (3, 2) and st.dtype == ndx.float32
        return ndx.sparse.to_dense(st)
    np.testing.assert_array_equal(f(np.array([1, 2, 3], np.float32)),
                                  np.array([[1, 0], [0, 2], [3, 0]], np.float32))


def test_a_symbolic_sparse_tensor_checks_what_the_trace_knows():
    @ndx.function
    def wrong_rank(indices, values):
        return ndx.SparseTensor(indices, values, [4])
    with pytest.raises(ValueError, match="indices"):
        wrong_rank(np.zeros([2], np.int64), np.ones(2))

    @ndx.function
    def float_indices(indices, values):
        return ndx.SparseTensor(indices, values, [4])
    with pytest.raises(TypeError, match="indices must hold integers"):
        float_indices(np.zeros([2, 1]), np.ones(2))

    @ndx.function
    def counts(indices, values):
        return ndx.SparseTensor(indices, values, [4])
    with pytest.raises(ValueError, match="values"):
        counts(np.zeros([2, 1], np.int64), np.ones(3))

    @ndx.function
    def int32_indices(indices, values):
        st = ndx.SparseTensor(indices, values, [4])
        return ndx.sparse.to_dense(st)
    np.testing.assert_array_equal(int32_indices(np.array([[3], [1]], np.int32),
                                                np.array([5.0, 6.0])), [0, 6, 0, 5])


def test_a_symbolic_sparse_tensor_as_input_signature_and_argument():
    @ndx.function(input_signature=[ndx.SparseTensorSpec([None, 3], ndx.float64)])
    def scaled(st):
        return ndx.SparseTensor(st.indices, st.values * 10.0, st.dense_shape)
    st = ndx.SparseTensor([[0, 1], [2, 2]], np.array([1.0, 2.0]), [3, 3])
    out = scaled(st)
    np.testing.assert_array_equal(out.values, [10.0, 20.0])
    np.testing.assert_array_equal(out.indices, st.indices)
