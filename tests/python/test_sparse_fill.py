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


# ---- tf.sparse.bincount (DenseCountSparseOutput, SparseCountSparseOutput) ----

DATA = np.array([[10, 20, 30, 20], [11, 101, 11, 10001]], dtype=np.int64)


def dense_of(st):
    out = np.zeros(tuple(np.asarray(st.dense_shape)), np.asarray(st.values).dtype)
    for i, v in zip(np.asarray(st.indices), np.asarray(st.values)):
        out[tuple(i)] = v
    return out


def count_reference(rows, weights, size, binary):
    """Per row, np.bincount of the values in [0, size), as a dense array."""
    out = []
    for r, row in enumerate(rows):
        keep = (row >= 0) & (row < size)
        w = None if weights is None else weights[r][keep]
        c = np.bincount(row[keep], w, minlength=size)[:size]
        out.append(np.minimum(c, 1) if binary else c)
    return np.array(out)


def test_bincount_tensorflow_examples():
    out = ndx.sparse.bincount(DATA, axis=-1)
    assert out.indices.tolist() == [[0, 10], [0, 20], [0, 30], [1, 11], [1, 101], [1, 10001]]
    assert out.values.tolist() == [1, 2, 1, 2, 1, 1] and out.dense_shape.tolist() == [2, 10002]
    out = ndx.sparse.bincount(DATA, axis=-1, minlength=500, maxlength=500)
    assert out.indices.tolist() == [[0, 10], [0, 20], [0, 30], [1, 11], [1, 101]]
    assert out.values.tolist() == [1, 2, 1, 2, 1] and out.dense_shape.tolist() == [2, 500]
    out = ndx.sparse.bincount(DATA, binary_output=True, axis=-1)
    assert out.values.tolist() == [1] * 6
    out = ndx.sparse.bincount(DATA, weights=[[2, 0.25, 15, 0.5], [2, 17, 3, 0.9]], axis=-1)
    np.testing.assert_array_equal(out.values, np.array([2, 0.75, 15, 5, 17, 0.9], np.float32))
    assert out.values.dtype == np.float32
    out = ndx.sparse.bincount(DATA)  # axis 0: everything counted together
    assert out.indices.tolist() == [[10], [11], [20], [30], [101], [10001]]
    assert out.values.tolist() == [1, 2, 2, 1, 1, 1] and out.dense_shape.tolist() == [10002]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("binary", [False, True])
def test_bincount_random_matches_numpy(weighted, binary):
    if weighted and binary:
        with pytest.raises(ValueError, match="mutually exclusive"):
            ndx.sparse.bincount(DATA, weights=np.ones((2, 4)), binary_output=True)
        return
    for dtype in ("int32", "int64"):
        rows = RNG.integers(-3, 12, (4, 9)).astype(dtype)
        w = RNG.standard_normal((4, 9)) if weighted else None
        for maxlength in (None, 7):
            args = dict(weights=w, axis=-1, maxlength=maxlength, binary_output=binary)
            size = maxlength or max(int(rows.max()) + 1, 1)
            want = count_reference(rows, w, size, binary)
            def parts(r):
                st = ndx.sparse.bincount(r, **args)
                return [st.indices, st.values, st.dense_shape]

            for mode, got in both(parts, rows):
                got = dense_of(ndx.SparseTensor(*got))
                np.testing.assert_allclose(got, want, err_msg=f"{mode} {dtype} {maxlength}")
            # the same counts through a SparseTensor (SparseCountSparseOutput)
            # (zeros become -1, which is not counted, so that from_dense keeps every entry)
            kept = np.where(rows == 0, -1, rows)
            sp = ndx.sparse.from_dense(kept)
            sw = None if w is None else ndx.SparseTensor(sp.indices, w.reshape(-1),
                                                         sp.dense_shape)
            got = dense_of(ndx.sparse.bincount(sp, weights=sw, axis=-1, maxlength=maxlength,
                                               binary_output=binary))
            want = count_reference(kept, w, got.shape[1], binary)
            np.testing.assert_allclose(got, want, err_msg=f"sparse {dtype}")


def test_bincount_errors():
    with pytest.raises(ValueError, match="Only 0 and -1"):
        ndx.sparse.bincount(DATA, axis=1)
    with pytest.raises(ndx.InvalidArgumentError, match="Input must be a 1 or 2-dimensional"):
        ndx.sparse.bincount(np.zeros((2, 2, 2), np.int32), axis=-1)
    with pytest.raises(ndx.InvalidArgumentError, match="Weights and data must have the same"):
        ndx.sparse.bincount(DATA, weights=np.ones((2, 3)), axis=-1)
    with pytest.raises(TypeError, match="int32 or int64 only"):
        ndx.sparse.bincount(np.zeros(3, np.float32))


# ---- retain, to_indicator, eye, mask (compositions, as TensorFlow writes them) ----

def test_retain_and_its_gradient():
    st = ndx.SparseTensor([[0, 1], [0, 3], [2, 0], [3, 1]], np.array([1., 2., 3., 4.]), [4, 5])
    for mode, got in both(lambda v: ndx.sparse.retain(ndx.SparseTensor(st.indices, v, [4, 5]),
                                                      [True, False, False, True]).values,
                          np.array([1., 2., 3., 4.])):
        np.testing.assert_array_equal(got, [1., 4.], err_msg=mode)
    r = ndx.sparse_retain(st, np.array([0, 1, 1, 0]))
    assert r.indices.tolist() == [[0, 3], [2, 0]] and r.dense_shape.tolist() == [4, 5]
    keep = [True, False, True, True]
    check(lambda v: ndx.sparse.retain(ndx.SparseTensor(st.indices, v, [4, 5]), keep).values,
          [RNG.standard_normal(4)], [0])


def test_to_indicator_matches_numpy():
    # TensorFlow's example: ids [[0, 10], [], [3, 3]] over a vocabulary of 12 (rank 2) and a rank
    # 3 input, each against a NumPy scatter of True
    idx = np.array([[0, 0], [0, 1], [2, 0], [2, 1]])
    st = ndx.SparseTensor(idx, np.array([0, 10, 3, 3]), [3, 4])
    want = np.zeros((3, 12), bool)
    want[0, [0, 10]] = want[2, 3] = True
    for mode, got in both(lambda v: ndx.sparse.to_indicator(ndx.SparseTensor(idx, v, [3, 4]), 12),
                          np.array([0, 10, 3, 3])):
        np.testing.assert_array_equal(got, want, err_msg=mode)
    idx3 = np.array([[0, 1, 0], [1, 0, 2], [1, 0, 0]])
    got = ndx.sparse_to_indicator(ndx.SparseTensor(idx3, np.array([4, 1, 4], np.int32),
                                                   [2, 2, 3]), 5)
    want = np.zeros((2, 2, 5), bool)
    want[0, 1, 4] = want[1, 0, 1] = want[1, 0, 4] = True
    np.testing.assert_array_equal(got, want)
    rank1 = ndx.SparseTensor([[0], [3], [1]], [2, 0, 2], [4])  # rank 1: one row of ids
    np.testing.assert_array_equal(ndx.sparse.to_indicator(rank1, 3), [True, False, True])
    with pytest.raises(TypeError, match="int32 or int64"):
        ndx.sparse.to_indicator(ndx.SparseTensor(idx, np.zeros(4, np.float32), [3, 4]), 3)
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.sparse.to_indicator(st, 5)  # id 10 is outside the vocabulary


def test_eye():
    for n, m in ((3, None), (2, 5), (4, 1), (0, 3)):
        e = ndx.sparse.eye(n, m, dtype="float64")
        np.testing.assert_array_equal(dense_of(e), np.eye(n, n if m is None else m))
    for mode, got in both(lambda n: ndx.sparse.eye(n, 2, dtype="int32").values, np.int32(3)):
        np.testing.assert_array_equal(got, [1, 1], err_msg=mode)


def test_mask_matches_setdiff():
    values = np.arange(10.0).reshape(5, 2)
    a = ndx.IndexedSlices(values, np.array([12, 26, 37, 45, 26]), np.array([1000, 2]))
    for masked in ([12, 45], [26], [], [1, 2, 3]):
        keep = ~np.isin([12, 26, 37, 45, 26], masked)
        b = ndx.sparse.mask(a, np.array(masked, np.int64))
        np.testing.assert_array_equal(b.indices, np.array([12, 26, 37, 45, 26])[keep])
        np.testing.assert_array_equal(b.values, values[keep])
        assert b.dense_shape.tolist() == [1000, 2]
    traced = ndx.function(lambda v: ndx.sparse.mask(ndx.IndexedSlices(v, np.array([1, 2, 3])),
                                                    [2]).values)
    np.testing.assert_array_equal(traced(values[:3]), values[[0, 2]])
    assert ndx.sparse_mask is ndx.sparse.mask


@pytest.mark.parametrize("fn", ["fill_empty_rows", "bincount", "retain", "to_indicator", "eye",
                                "mask"])
def test_docstring_examples_of_each(fn):
    check_docstring_examples(getattr(ndx.sparse, fn))


def test_tensorflow_documented_examples_of_the_compositions():
    # tf.sparse.to_indicator's: dense_shape [2, 3, 4], vocab_size 200
    idx = [[0, 0, 0], [0, 1, 0], [1, 0, 3], [1, 1, 1], [1, 1, 2], [1, 1, 3], [1, 2, 1]]
    st = ndx.SparseTensor(idx, np.array([0, 10, 103, 150, 149, 150, 121], np.int64), [2, 3, 4])
    got = ndx.sparse.to_indicator(st, 200)
    assert got.shape == (2, 3, 200)
    assert sorted(zip(*np.nonzero(got))) == [(0, 0, 0), (0, 1, 10), (1, 0, 103), (1, 1, 149),
                                             (1, 1, 150), (1, 2, 121)]
    # tf.sparse.mask's: slices at [12, 26, 37, 45] of a [1000, 10] tensor, 12 and 45 masked
    a = ndx.IndexedSlices(RNG.standard_normal((4, 10)), np.array([12, 26, 37, 45]),
                          np.array([1000, 10]))
    b = ndx.sparse.mask(a, [12, 45])
    assert b.indices.tolist() == [26, 37] and b.values.shape == (2, 10)
    np.testing.assert_array_equal(b.values, a.values[1:3])
    # tf.sparse.retain's: 4 string values of a [4, 5] tensor, the first and last kept
    st = ndx.SparseTensor([[0, 1], [0, 3], [2, 0], [3, 1]], np.array([b"a", b"b", b"c", b"d"]),
                          [4, 5])
    r = ndx.sparse.retain(st, [True, False, False, True])
    assert r.indices.tolist() == [[0, 1], [3, 1]] and r.values.tolist() == [b"a", b"d"]
    assert r.dense_shape.tolist() == [4, 5]
