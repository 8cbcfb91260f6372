"""The segment reductions (ndx.math.unsorted_segment_*, segment_*, ndx.sparse.segment_* and
TensorFlow 1's top-level names) against NumPy references (np.add.at, np.multiply.at, ...) and
TensorFlow's documented examples, eagerly and inside ndx.function (traced == eager), their
gradients (ndx.gradients and the eager GradientTape) against central differences, and their
errors in both modes with nothing changed."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples
from test_gradients import check, f64, taped

RNG = np.random.default_rng(5)

_AT = {"sum": (np.add, 0), "prod": (np.multiply, 1), "min": (np.minimum, None),
       "max": (np.maximum, None)}


def reference(op, data, ids, n):
    """The unsorted reduction by NumPy's ufunc.at over the rows with a non-negative id."""
    data, ids = np.asarray(data), np.asarray(ids)
    rows = data.reshape((-1,) + data.shape[ids.ndim:])
    flat = ids.reshape(-1)
    keep = flat >= 0
    tail = data.shape[ids.ndim:]
    if op in ("mean", "sqrt_n"):
        total = reference("sum", data.astype(np.float64), ids, n)
        count = np.zeros(n)
        np.add.at(count, flat[keep], 1)
        scale = np.maximum(count, 1) if op == "mean" else np.sqrt(np.maximum(count, 1))
        return (total / scale.reshape((-1,) + (1,) * len(tail))).astype(data.dtype)
    ufunc, start = _AT[op]
    if start is None:
        info = np.finfo(data.dtype) if data.dtype.kind == "f" else np.iinfo(data.dtype)
        start = info.max if op == "min" else info.min
    out = np.full((n,) + tail, start, data.dtype)
    ufunc.at(out, flat[keep], rows[keep])
    return out


def both(fn, *args):
    """fn(*args) eagerly and traced by ndx.function."""
    return [("eager", fn(*args)), ("traced", ndx.function(lambda xs: fn(*xs))(list(args)))]


@pytest.mark.parametrize("op", ["sum", "prod", "min", "max", "mean", "sqrt_n"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_unsorted_matches_numpy(op, dtype):
    if op in ("mean", "sqrt_n") and dtype.startswith("int"):
        pytest.skip("mean and sqrt_n are for floats")
    data = RNG.integers(-4, 5, (6, 2, 3)).astype(dtype)
    ids = np.array([[2, -1], [0, 2], [4, 0], [2, 2], [-1, 0], [1, 4]], np.int32)
    fn = getattr(ndx.math, "unsorted_segment_" + op)
    want = reference(op, data, ids, 5)
    for mode, got in both(lambda d, i: fn(d, i, 5), data, ids):
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=mode)
        assert np.asarray(got).dtype == np.dtype(dtype)


@pytest.mark.parametrize("op", ["sum", "prod", "min", "max", "mean"])
def test_sorted_matches_numpy(op):
    data = RNG.standard_normal((7, 3))
    ids = np.array([0, 0, 1, 3, 3, 3, 4], np.int64)
    want = reference(op, data, ids, 5)
    if op in ("min", "max"):  # TensorFlow's sorted ops give 0 for an empty segment
        want[2] = 0
    fn = getattr(ndx.math, "segment_" + op)
    for mode, got in both(fn, data, ids):
        np.testing.assert_allclose(got, want, err_msg=mode)
    assert getattr(ndx, "segment_" + op) is fn


@pytest.mark.parametrize("op", ["sum", "mean", "sqrt_n"])
def test_sparse_matches_numpy(op):
    data = RNG.standard_normal((5, 2)).astype(np.float32)
    indices = np.array([4, 0, 0, 2], np.int32)
    ids = np.array([0, 0, 2, 2], np.int32)
    fn = getattr(ndx.sparse, "segment_" + op)
    want = reference(op, data[indices], ids, 3)
    for mode, got in both(fn, data, indices, ids):
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=mode)
    got = fn(data, indices, ids, num_segments=5)
    np.testing.assert_allclose(got, reference(op, data[indices], ids, 5), rtol=1e-6)
    v1 = getattr(ndx, "sparse_segment_" + op)  # TensorFlow 1's order: name before num_segments
    np.testing.assert_allclose(v1(data, indices, ids, None, 5), got)


def test_traced_text_form(tmp_path):
    @ndx.function(input_signature=[ndx.TensorSpec([None, 2], ndx.float32),
                                   ndx.TensorSpec([None], ndx.int32)])
    def f(d, i):
        return [ndx.math.unsorted_segment_max(d, i, 3), ndx.math.segment_sum(d, i),
                ndx.sparse.segment_mean(d, i, i, num_segments=4)]

    d = RNG.standard_normal((4, 2)).astype(np.float32)
    i = np.array([0, 1, 1, 2], np.int32)
    want = f(d, i)
    text = f.get_concrete_function().graph.to_text()
    for kind in ("UnsortedSegmentMax(", "SegmentSum(", "SparseSegmentMeanWithNumSegments("):
        assert kind in text
    f.get_concrete_function().graph.save(tmp_path / "g.txt")
    loaded = ndx.load(tmp_path / "g.txt")
    assert loaded.graph.to_text() == text
    np.testing.assert_allclose(want[0], reference("max", d, i, 3))


@pytest.mark.parametrize("gradients", ["traced", "taped"])
def test_gradients_against_central_differences(gradients):
    kw = {} if gradients == "traced" else {"gradients": taped}
    ids = [1, 0, 1, -1, 0, 2]
    for op in ("sum", "mean", "sqrt_n", "min", "max", "prod"):
        fn = getattr(ndx.math, "unsorted_segment_" + op)
        check(lambda a, fn=fn: fn(a, ids, 3), [f64(6, 2)], [0], **kw)
    ties = np.array([[0.5, 0.0], [0.5, 1.0], [2.0, 1.0], [0.0, 0.0], [0.0, 3.0]])
    check(lambda a: ndx.math.unsorted_segment_max(a, [0, 0, 1, 1, 1], 2), [ties], [0], **kw)
    check(lambda a: ndx.math.unsorted_segment_prod(a, [0, 0, 1, 1, 1], 2), [ties], [0], **kw)
    for op in ("sum", "mean", "min", "max", "prod"):
        fn = getattr(ndx.math, "segment_" + op)
        check(lambda a, fn=fn: fn(a, [0, 0, 1, 3, 3, 3]), [f64(6, 2)], [0], **kw)
    for op in ("sum", "mean", "sqrt_n"):
        fn = getattr(ndx.sparse, "segment_" + op)
        check(lambda a, fn=fn: fn(a, [4, 0, 0, 2], [0, 0, 2, 2]), [f64(5, 2)], [0], **kw)


def test_tape_gradient_of_a_sparse_segment_is_indexed_slices():
    v = ndx.Variable(np.arange(8.0).reshape(4, 2))
    with ndx.GradientTape() as tape:
        y = ndx.sparse.segment_sum(v, [3, 0, 3], [0, 0, 1])
        loss = ndx.reduce_sum(y)
    g = tape.gradient(loss, v)
    assert isinstance(g, ndx.IndexedSlices)
    out = np.zeros((4, 2))
    np.add.at(out, np.ravel(g.indices), g.values)
    np.testing.assert_allclose(out, [[1, 1], [0, 0], [0, 0], [2, 2]])


@pytest.mark.parametrize("call, message", [
    (lambda: ndx.math.unsorted_segment_sum(np.zeros((3, 2)), [0, 5, 1], 2), "5"),
    (lambda: ndx.math.unsorted_segment_sum(np.zeros((3, 2)), [0, 1, 1], -1), "num_segments"),
    (lambda: ndx.math.unsorted_segment_sum(np.zeros((3, 2)), [0, 1], 2), "segment_ids"),
    (lambda: ndx.math.segment_sum(np.zeros((3, 2)), [1, 0, 1]), "not increasing"),
    (lambda: ndx.sparse.segment_sum(np.zeros((3, 2)), [0, 3], [0, 0]), "3"),
])
def test_errors_name_the_op_and_argument_in_both_modes(call, message):
    with pytest.raises(ndx.InvalidArgumentError) as e:
        call()
    assert message in str(e.value)
    with pytest.raises(ndx.InvalidArgumentError) as e:
        ndx.function(call)()
    assert message in str(e.value)


@pytest.mark.parametrize("call, error, message", [
    (lambda: ndx.math.unsorted_segment_sum(np.zeros((3, 2)), np.array([0., 1., 1.]), 2),
     ndx.InvalidArgumentError, "segment_ids must be int32 or int64, not float64"),
    (lambda: ndx.math.unsorted_segment_sum(np.zeros((3, 2)), [0, 1, 1], [2]),
     ndx.InvalidArgumentError, "num_segments should be a scalar"),
    (lambda: ndx.math.segment_sum(np.zeros((3, 2)), [[0, 1, 1]]), ndx.InvalidArgumentError,
     "segment_ids should be a vector"),
    (lambda: ndx.sparse.segment_sum(np.zeros((3, 2)), [0, 1], [0, -1]),
     ndx.InvalidArgumentError, "segment_ids[1] = -1 is negative"),
    (lambda: ndx.math.unsorted_segment_sum(np.zeros((3, 2)), [0, 1, 1], 2**40), TypeError,
     "out of the range of int32"),
    (lambda: ndx.math.segment_sum(np.array([b"a", b"b"]), [0, 0]), TypeError,
     "data of dtype string is not supported"),
])
def test_hostile_inputs_are_refused(call, error, message):
    with pytest.raises(error) as e:
        call()
    assert message in str(e.value)


def test_a_failed_call_changes_nothing():
    data = np.arange(6.0).reshape(3, 2)
    before = data.copy()
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.math.unsorted_segment_sum(data, [0, 9, 1], 2)
    np.testing.assert_array_equal(data, before)


@pytest.mark.parametrize("fn", [getattr(ndx.math, n) for n in (
    "unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_min",
    "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_sqrt_n", "segment_sum",
    "segment_prod", "segment_min", "segment_max", "segment_mean")] + [
    ndx.sparse.segment_sum, ndx.sparse.segment_mean, ndx.sparse.segment_sqrt_n,
    ndx.sparse_segment_sum, ndx.sparse_segment_mean, ndx.sparse_segment_sqrt_n],
    ids=lambda f: f.__module__ + "." + f.__name__)
def test_docstring_examples(fn):
    check_docstring_examples(fn)
