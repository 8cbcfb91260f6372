"""ndx.sparse.fill_empty_rows (and TensorFlow 1's ndx.sparse_fill_empty_rows) against a NumPy
reference and TensorFlow's kernel-test values (sparse_ops_test.py SparseFillEmptyRowsTest),
eagerly, traced by ndx.function and under a GradientTape; the gradient of the values and the
default value against central differences; errors in both modes."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples
from test_gradients import check, taped

RNG = np.random.default_rng(32)


def reference(indices, values, dense_shape, default):
    """Rows in increasing order, each row's entries in input order; [r, 0, ...] for an empty row."""
    indices, values = np.asarray(indices).reshape(-1, len(dense_shape)), np.asarray(values)
    out_i, out_v, empty = [], [], np.zeros(dense_shape[0], bool)
    for r in range(dense_shape[0]):
        mine = np.flatnonzero(indices[:, 0] == r)
        if mine.size == 0:
            empty[r] = True
            out_i.append([r] + [0] * (len(dense_shape) - 1))
            out_v.append(np.asarray(default, values.dtype))
        for i in mine:
            out_i.append(list(indices[i]))
            out_v.append(values[i])
    return (np.array(out_i, np.int64).reshape(-1, len(dense_shape)),
            np.array(out_v, values.dtype), empty)


def both(fn, *args):
    """fn(*args) eagerly and traced by ndx.function."""
    return [("eager", fn(*args)), ("traced", ndx.function(lambda xs: fn(*xs))(list(args)))]


def fill_parts(indices, values, dense_shape, default):
    out, empty = ndx.sparse.fill_empty_rows(ndx.SparseTensor(indices, values, dense_shape),
                                            default)
    return [out.indices, out.values, out.dense_shape, empty]


CASES = [  # TensorFlow's: testFillNumber, testNoEmptyRows, testNoEmptyRowsAndUnordered,
    # testUnordered, testEmptyIndicesTensor
    ([[0, 0], [1, 0], [1, 3], [1, 4], [3, 2], [3, 3]], [0, 10, 13, 14, 32, 33], [5, 6],
     [[0, 0], [1, 0], [1, 3], [1, 4], [2, 0], [3, 2], [3, 3], [4, 0]],
     [0, 10, 13, 14, -1, 32, 33, -1], [0, 0, 1, 0, 1]),
    ([[0, 0], [1, 0], [1, 3], [1, 4]], [0, 10, 13, 14], [2, 6],
     [[0, 0], [1, 0], [1, 3], [1, 4]], [0, 10, 13, 14], [0, 0]),
    ([[1, 2], [1, 3], [0, 1], [0, 3]], [1, 3, 2, 4], [2, 5],
     [[0, 1], [0, 3], [1, 2], [1, 3]], [2, 4, 1, 3], [0, 0]),
    ([[2, 3], [2, 2], [0, 1], [0, 3]], [1, 3, 2, 4], [3, 5],
     [[0, 1], [0, 3], [1, 0], [2, 3], [2, 2]], [2, 4, -1, 1, 3], [0, 1, 0]),
    (np.zeros((0, 2), np.int64), np.zeros(0, np.int32), [2, 5],
     [[0, 0], [1, 0]], [-1, -1], [1, 1]),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_tensorflow_cases(case):
    idx, vals, shape, want_i, want_v, want_e = CASES[case]
    for mode, got in both(fill_parts, np.asarray(idx, np.int64), np.asarray(vals, np.int32),
                          np.asarray(shape, np.int64), np.int32(-1)):
        np.testing.assert_array_equal(got[0], np.array(want_i).reshape(-1, 2), err_msg=mode)
        np.testing.assert_array_equal(got[1], want_v, err_msg=mode)
        assert np.asarray(got[1]).dtype == np.int32
        np.testing.assert_array_equal(got[2], shape, err_msg=mode)
        np.testing.assert_array_equal(got[3], np.array(want_e, bool), err_msg=mode)


def test_empty_output_and_strings_and_tf1_name():
    out, empty = ndx.sparse_fill_empty_rows(
        ndx.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, np.float32), [0, 3]), -1.0)
    assert out.indices.shape == (0, 2) and out.values.shape == (0,) and empty.shape == (0,)
    st = ndx.SparseTensor([[0, 0], [1, 0], [1, 3], [1, 4], [3, 2], [3, 3]],
                          np.array([b"a", b"b", b"c", b"d", b"e", b"f"]), [5, 6])
    out, empty = ndx.sparse.fill_empty_rows(st, b"")
    assert out.values.tolist() == [b"a", b"b", b"c", b"d", b"", b"e", b"f", b""]
    assert empty.tolist() == [False, False, True, False, True]
    assert ndx.sparse_fill_empty_rows is ndx.sparse.fill_empty_rows


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32",
                                   "float64", "complex64", "complex128"])
def test_random_matches_numpy(dtype):
    for rank in (1, 2, 3):
        shape = [int(RNG.integers(1, 9))] + [int(RNG.integers(1, 4)) for _ in range(rank - 1)]
        n = int(RNG.integers(0, 12))
        idx = np.stack([RNG.integers(0, d, n) for d in shape], 1).astype(np.int64)
        vals = RNG.integers(0, 2 if dtype == "bool" else 9, n).astype(dtype)
        default = np.array(1, dtype)
        want = reference(idx, vals, shape, default)
        for mode, got in both(fill_parts, idx, vals, np.array(shape, np.int64), default):
            np.testing.assert_array_equal(got[0], want[0], err_msg=f"{mode} {dtype}")
            np.testing.assert_array_equal(got[1], want[1], err_msg=f"{mode} {dtype}")
            np.testing.assert_array_equal(got[3], want[2], err_msg=f"{mode} {dtype}")


@pytest.mark.parametrize("gradients", ["traced", "taped"])
def test_gradients_against_central_differences(gradients):
    kw = {} if gradients == "traced" else {"gradients": taped}
    idx = np.array([[2, 3], [2, 2], [0, 1], [0, 3], [4, 1]], np.int64)

    def f(values, default):
        out, _ = ndx.sparse.fill_empty_rows(ndx.SparseTensor(idx, values, [6, 5]), default)
        return out.values

    check(f, [RNG.standard_normal(5), np.array(0.5)], [0, 1], **kw)


def test_traced_node_is_one_sparse_fill_empty_rows():
    @ndx.function(input_signature=[ndx.TensorSpec([None, 2], ndx.int64),
                                   ndx.TensorSpec([None], ndx.float32)])
    def f(i, v):
        out, empty = ndx.sparse.fill_empty_rows(ndx.SparseTensor(i, v, [3, 3]), 0.0)
        return [out.values, empty]

    text = f.get_concrete_function().graph.to_text()
    assert text.count("SparseFillEmptyRows(") == 1
    values, empty = f(np.array([[2, 0]], np.int64), np.array([5], np.float32))
    np.testing.assert_array_equal(values, [0, 0, 5])
    np.testing.assert_array_equal(empty, [True, True, False])


@pytest.mark.parametrize("call, message", [
    (lambda: ndx.sparse.fill_empty_rows(ndx.SparseTensor([[1, 2], [9, 1]], [1, 2], [2, 5]), 0),
     "indices[1] = [9, 1] is outside dense_shape [2, 5]"),
    (lambda: ndx.sparse.fill_empty_rows(ndx.SparseTensor([[1, 2]], [1], [2, 5]), [0, 1]),
     "default_value must be a scalar, saw: ["),
])
def test_errors_in_both_modes(call, message):
    with pytest.raises(ndx.InvalidArgumentError) as e:
        call()
    assert message in str(e.value)
    with pytest.raises(ndx.InvalidArgumentError) as e:
        ndx.function(call)()
    assert message in str(e.value)
    with pytest.raises(TypeError):
        ndx.sparse.fill_empty_rows(np.zeros((2, 2)), 0)


def test_docstring_examples():
    check_docstring_examples(ndx.sparse.fill_empty_rows)
