"""ndx.gather, one_hot, unique, unique_with_counts and boolean_mask against NumPy (np.take, rows
of np.eye, np.unique reordered to first occurrence, boolean indexing) and TensorFlow's documented
examples, eagerly and inside ndx.function (traced == eager), their gradients (ndx.gradients and
the eager GradientTape) against central differences, their errors in both modes, and the text
form of the new kinds."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples
from test_gradients import check, f64, taped

RNG = np.random.default_rng(11)
NUMBERS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"]


def both(fn, *args):
    """fn(*args) eagerly and traced by ndx.function."""
    return [("eager", fn(*args)), ("traced", ndx.function(lambda xs: fn(*xs))(list(args)))]


def naive_gather(params, indices, axis, batch_dims):
    """GatherV2 by loops over NumPy: output[b, o, i, r] = params[b, o, indices[b, i], r]."""
    p, i = np.asarray(params), np.asarray(indices)
    if batch_dims < 0:
        batch_dims += i.ndim
    if axis < 0:
        axis += p.ndim
    if batch_dims == 0:
        return np.take(p, i, axis=axis)
    return np.stack([naive_gather(p[k], i[k], axis - 1, batch_dims - 1) for k in range(p.shape[0])])


@pytest.mark.parametrize("dtype", NUMBERS + ["bool", "S"])
def test_gather_matches_numpy_for_every_dtype(dtype):
    if dtype == "S":
        p = np.array([b"a", b"bc", b"", b"def", b"g", b"hi"], "S3").reshape(2, 3)
    else:
        p = (RNG.standard_normal((2, 3)) * 20).astype(np.dtype(dtype))
    idx = np.array([[2, 0], [1, 1]], np.int64)
    for axis in (1, -1):
        for mode, got in both(lambda a, i: ndx.gather(a, i, axis=axis), p, idx):
            np.testing.assert_array_equal(got, np.take(p, idx, axis=axis), err_msg=mode)
    for mode, got in both(lambda a: ndx.gather(a, [1, 0, 1]), p):
        np.testing.assert_array_equal(got, p[[1, 0, 1]], err_msg=mode)


@pytest.mark.parametrize("axis, batch_dims, pshape, ishape", [
    (0, 0, (5,), ()), (1, 0, (2, 5, 3), (4,)), (2, 1, (2, 3, 5), (2, 4)),
    (None, 1, (2, 5, 3), (2, 4)), (None, -1, (2, 5), (2, 3)), (-1, -1, (2, 3, 5), (2, 3)),
    (1, 1, (2, 5), (2,)), (3, 2, (2, 2, 3, 5), (2, 2, 1, 2)),
])
def test_gather_axes_and_batch_dims_match_a_naive_gather(axis, batch_dims, pshape, ishape):
    p = RNG.standard_normal(pshape)
    ax = batch_dims if axis is None else axis
    n = pshape[ax if ax >= 0 else ax + len(pshape)]
    idx = RNG.integers(0, n, ishape).astype(np.int32)
    want = naive_gather(p, idx, ax, batch_dims)
    for mode, got in both(lambda a, i: ndx.gather(a, i, axis=axis, batch_dims=batch_dims), p,
                          idx):
        np.testing.assert_array_equal(got, want, err_msg=mode)


def test_tensorflow_examples():
    # tf.gather's guide
    params = np.array(["p0", "p1", "p2", "p3", "p4", "p5"]).astype("S2")
    np.testing.assert_array_equal(ndx.gather(params, [2, 0, 2, 5]), params[[2, 0, 2, 5]])
    params = np.array([[0, 1.0, 2.0], [10.0, 11.0, 12.0], [20.0, 21.0, 22.0], [30.0, 31.0, 32.0]])
    np.testing.assert_array_equal(ndx.gather(params, [3, 1]), [[30, 31, 32], [10, 11, 12]])
    np.testing.assert_array_equal(ndx.gather(params, [2, 1], axis=1),
                                  [[2, 1], [12, 11], [22, 21], [32, 31]])
    # tf.one_hot's docs
    np.testing.assert_array_equal(ndx.one_hot([0, 1, 2], 3), np.eye(3, dtype=np.float32))
    got = ndx.one_hot([0, 2, -1, 1], 3, on_value=5.0, off_value=0.0, axis=-1)
    np.testing.assert_array_equal(got, [[5, 0, 0], [0, 0, 5], [0, 0, 0], [0, 5, 0]])
    assert got.dtype == np.float32
    got = ndx.one_hot([[0, 2], [1, -1]], 3, on_value=1.0, off_value=0.0, axis=-1)
    np.testing.assert_array_equal(got, [[[1, 0, 0], [0, 0, 1]], [[0, 1, 0], [0, 0, 0]]])
    # tf.unique's and tf.unique_with_counts' docs
    y, idx = ndx.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
    np.testing.assert_array_equal(y, [1, 2, 4, 7, 8])
    np.testing.assert_array_equal(idx, [0, 0, 1, 2, 2, 2, 3, 4, 4])
    y, idx, count = ndx.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8])
    np.testing.assert_array_equal(count, [2, 1, 3, 1, 2])
    # tf.boolean_mask's docs
    np.testing.assert_array_equal(ndx.boolean_mask([0, 1, 2, 3], np.array([True, False, True,
                                                                           False])), [0, 2])
    t = np.array([[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(ndx.boolean_mask(t, np.array([True, False, True])),
                                  [[1, 2], [5, 6]])


@pytest.mark.parametrize("idx_dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_one_hot_matches_rows_of_eye(idx_dtype):
    idx = RNG.integers(-1, 6, (3, 4)).astype(np.dtype(idx_dtype))
    eye = np.vstack([np.eye(5), np.zeros((1, 5))])  # row -1 (and 5): all off
    want = eye[np.where((idx.astype(np.int64) >= 0) & (idx.astype(np.int64) < 5), idx, 5)]
    for axis in (None, -1, 0, 1, 2):
        w = want if axis in (None, -1, 2) else np.moveaxis(want, -1, axis)
        for mode, got in both(lambda i: ndx.one_hot(i, 5, axis=axis, dtype=ndx.float64), idx):
            np.testing.assert_array_equal(got, w, err_msg=mode)


def test_one_hot_dtype_rules():
    assert ndx.one_hot([0], 2).dtype == np.float32
    assert ndx.one_hot([0], 2, on_value=3).dtype == np.int32
    assert ndx.one_hot([0], 2, off_value=np.int64(-1)).dtype == np.int64
    assert ndx.one_hot([0], 2, on_value=1, dtype=ndx.float64).dtype == np.float64
    np.testing.assert_array_equal(ndx.one_hot([1], 2, on_value=b"yes", off_value=b"no"),
                                  [[b"no", b"yes"]])
    with pytest.raises(TypeError, match="of on_value does not match dtype"):
        ndx.one_hot([0], 2, on_value=1.5, off_value=0)
    with pytest.raises(TypeError, match="does not match dtype parameter"):
        ndx.one_hot([0], 2, on_value=np.float32(1), dtype=ndx.float64)
    with pytest.raises(TypeError, match="does not match dtype parameter"):
        ndx.one_hot([0], 2, on_value=1.5, dtype=ndx.int32)


def first_occurrence_unique(x):
    """np.unique reordered to the order of first occurrence, with idx and counts to match."""
    vals, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                             return_counts=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return vals[order], rank[inverse.reshape(-1)], counts[order]


@pytest.mark.parametrize("dtype", NUMBERS[:-2] + ["bool", "S"])
def test_unique_matches_numpy_in_order_of_first_occurrence(dtype):
    if dtype == "S":
        x = np.array([b"b", b"a", b"b", b"", b"a"])
    else:
        x = RNG.integers(0, 5, 40).astype(np.dtype(dtype))
    wy, widx, wcount = first_occurrence_unique(x)
    for out_idx in ("int32", "int64"):
        for mode, got in both(lambda v: ndx.unique_with_counts(v, out_idx=out_idx), x):
            y, idx, count = got
            np.testing.assert_array_equal(y, wy, err_msg=mode)
            np.testing.assert_array_equal(idx, widx, err_msg=mode)
            np.testing.assert_array_equal(count, wcount, err_msg=mode)
            assert idx.dtype == np.dtype(out_idx) and count.dtype == np.dtype(out_idx)
        for mode, got in both(lambda v: ndx.unique(v, out_idx), x):
            assert type(got).__name__ == "Unique" and got._fields == ("y", "idx")
            np.testing.assert_array_equal(got.y, wy, err_msg=mode)
            np.testing.assert_array_equal(got.idx, widx, err_msg=mode)


@pytest.mark.parametrize("axis, mshape, tshape", [
    (0, (4,), (4, 3)), (0, (2, 3), (2, 3, 2)), (1, (3,), (2, 3, 2)), (1, (3, 2), (2, 3, 2)),
    (None, (5,), (5,)),
])
def test_boolean_mask_matches_numpy_indexing(axis, mshape, tshape):
    t = RNG.standard_normal(tshape)
    m = RNG.random(mshape) < 0.5
    a = axis or 0
    want = t[(slice(None),) * a + (m,)]
    for mode, got in both(lambda x, k: ndx.boolean_mask(x, k, axis=axis), t, m):
        np.testing.assert_array_equal(got, want, err_msg=mode)


def test_traced_with_unknown_dims_and_text_form(tmp_path):
    @ndx.function(input_signature=[ndx.TensorSpec([None, 4], ndx.float32),
                                   ndx.TensorSpec([None], ndx.int32),
                                   ndx.TensorSpec([4], ndx.bool)])
    def f(p, i, m):
        return [ndx.gather(p, i, axis=1), ndx.one_hot(i, 4), ndx.unique(i).y,
                ndx.boolean_mask(p, m, axis=1)]

    p = RNG.standard_normal((3, 4)).astype(np.float32)
    i = np.array([3, 0, 3], np.int32)
    m = np.array([True, False, False, True])
    want = f(p, i, m)
    text = f.get_concrete_function().graph.to_text()
    for kind in ("GatherV2(", "OneHot(", "Unique(", "BooleanMask("):
        assert kind in text
    f.get_concrete_function().graph.save(tmp_path / "g.txt")
    loaded = ndx.load(tmp_path / "g.txt")
    assert loaded.graph.to_text() == text

    @ndx.function(input_signature=[ndx.TensorSpec([None, 4], ndx.float32),
                                   ndx.TensorSpec([None], ndx.int32)])
    def g(p, i):
        return ndx.gather(p, i, axis=1, batch_dims=0)

    g.get_concrete_function().graph.save(tmp_path / "g2.txt")
    np.testing.assert_array_equal(ndx.load(tmp_path / "g2.txt")(p=p, i=i), p[:, i])
    np.testing.assert_array_equal(want[0], p[:, i])
    np.testing.assert_array_equal(want[1], np.eye(4, dtype=np.float32)[i])
    np.testing.assert_array_equal(want[2], [3, 0])
    np.testing.assert_array_equal(want[3], p[:, m])


@pytest.mark.parametrize("gradients", ["traced", "taped"])
def test_gradients_against_central_differences(gradients):
    kw = {} if gradients == "traced" else {"gradients": taped}
    p = f64(5, 3)
    (g,) = check(lambda a: ndx.gather(a, [1, 4, 1]), [p], [0], **kw)
    assert isinstance(g, ndx.IndexedSlices) and list(np.ravel(g.indices)) == [1, 4, 1]
    check(lambda a: ndx.gather(a, [[2, 0], [2, 2]], axis=1), [p], [0], **kw)
    check(lambda a: ndx.gather(a, np.array([[2, 0], [1, 2]]), axis=-1, batch_dims=1),
          [f64(2, 4, 3)], [0], **kw)
    check(lambda a: ndx.gather(a, np.array([[1], [0]]), batch_dims=-1), [f64(2, 3)], [0], **kw)
    check(lambda a: ndx.boolean_mask(a, np.array([True, False, True, True, False])), [p], [0],
          **kw)
    check(lambda a: ndx.boolean_mask(a, np.array([False, True, True]), axis=1), [p], [0], **kw)


def test_tape_gradient_of_a_variable_gather_is_indexed_slices():
    v = ndx.Variable(np.arange(8.0).reshape(4, 2))
    with ndx.GradientTape() as tape:
        y = ndx.gather(v, [3, 0, 3])
        loss = ndx.reduce_sum(ndx.multiply(y, y))
    g = tape.gradient(loss, v)
    assert isinstance(g, ndx.IndexedSlices)
    want = np.zeros((4, 2))
    np.add.at(want, [3, 0, 3], 2 * np.arange(8.0).reshape(4, 2)[[3, 0, 3]])
    out = np.zeros((4, 2))
    np.add.at(out, np.ravel(g.indices), g.values)
    np.testing.assert_allclose(out, want)


def test_one_hot_has_no_gradient_and_unique_none_defined():
    x = f64(3)
    with ndx.GradientTape() as tape:
        tape.watch(x)
        y = ndx.one_hot([0, 1], 2, on_value=ndx.reduce_sum(x), off_value=np.float64(0))
    assert tape.gradient(y, x) is None

    @ndx.function
    def f(a):
        return ndx.gradients(ndx.unique(a).y, [a])

    with pytest.raises(Exception, match="no gradient is defined"):
        f(x)


@pytest.mark.parametrize("call, message", [
    (lambda: ndx.gather(np.zeros((2, 3)), [0, 3], axis=1), "indices[1] = 3 is not in [0, 3)"),
    (lambda: ndx.gather(np.zeros((2, 3)), [0], axis=2),
     "Expected axis in the range [-2, 2), but got 2"),
    (lambda: ndx.gather(np.zeros((2, 3)), [[0]], batch_dims=2, axis=1),
     "batch_dims (2) must be less than rank(params) (2)"),
    (lambda: ndx.gather(np.float32(1), [0]), "params must be at least 1 dimensional"),
    (lambda: ndx.gather(np.zeros(3), [0], axis=[0]), "axis must be a scalar"),
    (lambda: ndx.one_hot([0, 1], -1), "depth must be non-negative, got: -1"),
    (lambda: ndx.unique(np.zeros((2, 2))), "unique"),
    (lambda: ndx.boolean_mask(np.zeros(3), np.array(True)), "mask cannot be scalar"),
    (lambda: ndx.boolean_mask(np.zeros((2, 3)), np.array([True, False, True])),
     "mask dims must match tensor dims"),
])
def test_errors_name_the_op_and_argument_in_both_modes(call, message):
    with pytest.raises(ndx.InvalidArgumentError) as e:
        call()
    assert message in str(e.value)
    with pytest.raises(ndx.InvalidArgumentError) as e:
        ndx.function(call)()
    assert message in str(e.value)


def test_a_failed_call_changes_nothing():
    p = np.arange(6.0).reshape(2, 3)
    v = ndx.Variable(p.copy())
    before = p.copy()
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.gather(p, [0, 7], axis=1)
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.gather(v, [5])
    np.testing.assert_array_equal(p, before)
    np.testing.assert_array_equal(np.asarray(v), before)


@pytest.mark.parametrize("fn", [ndx.gather, ndx.one_hot, ndx.unique, ndx.unique_with_counts,
                                ndx.boolean_mask], ids=lambda f: f.__name__)
def test_docstring_examples(fn):
    check_docstring_examples(fn)


def test_tensorflow_1_spellings():
    p = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ndx.gather(p, [2], validate_indices=True, name="g", axis=1),
                                  p[:, [2]])
    # tf.compat.v1.boolean_mask(tensor, mask, name, axis)
    np.testing.assert_array_equal(ndx.boolean_mask(p, [True, False, True], "bm", 1), p[:, [0, 2]])
    with pytest.raises(TypeError, match="by keyword"):
        ndx.gather(p, [0], None, "g", 1)
