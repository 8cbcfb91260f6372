"""TensorFlow's own kernel tests for the index family, case by case, that the other tests of
ndx do not already make: gather_op_test.py, one_hot_op_test.py, unique_op_test.py,
segment_reduction_ops_test.py, embedding_ops_test.py and array_ops_test.py's BooleanMaskTest.
Each case names the TensorFlow test it comes from. Expected values are TensorFlow's where its
test states them, else computed here by naive loops over NumPy (never by ndx). Error cases
check that the call fails with an error naming the op (TensorFlow's words where ndx keeps
them) and that nothing changed. The last tests run every kind of the family once through the
text form (a traced graph saved and loaded back)."""
import itertools

import numpy as np
import pytest

import ndx
from test_gradients import check, taped

RNG = np.random.default_rng(2026)
M, S, NN = ndx.math, ndx.sparse, ndx.nn
REFUSED = (ndx.InvalidArgumentError, ValueError, TypeError)


def both(fn, *args):
    """fn(*args) eagerly and traced by ndx.function."""
    return [("eager", fn(*args)), ("traced", ndx.function(lambda xs: fn(*xs))(list(args)))]


def refused(call, op, *words, errors=REFUSED):
    """call() raises one of `errors`, naming op (as "gather" or its kind "GatherV2") and
    containing every one of `words`."""
    with pytest.raises(errors) as e:
        call()
    text = str(e.value)
    assert op.replace("_", "").lower() in text.replace("_", "").lower(), text
    for w in words:
        assert w in text, text
    return e.value


def tf_input(shape, dtype):
    """segment_reduction_ops_test's _input: 1..n in `shape`, complex ones minus 1j times that."""
    values = np.arange(1, int(np.prod(shape)) + 1).reshape(shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        values = values - 1j * values
    return values


def tf_params(data, dtype):
    """gather_op_test's _buildParams: complex params get an imaginary part 10 times the real."""
    data = data.astype(dtype)
    return data + 10j * data if np.dtype(dtype).kind == "c" else data


# ================================ gather (gather_op_test.py) ====================================

def naive_take(p, idx, axis):
    """np.take by loops: out[o..., i..., r...] = p[o..., idx[i...], r...]."""
    p, idx = np.asarray(p), np.asarray(idx)
    out = np.empty(p.shape[:axis] + idx.shape + p.shape[axis + 1:], p.dtype)
    for o in itertools.product(*map(range, p.shape[:axis])):
        for i in itertools.product(*map(range, idx.shape)):
            out[o + i] = p[o + (int(idx[i]),)]
    return out


def naive_batch_gather(p, idx, axis, batch_dims):
    """gather_op_test's _batchNumpyGather: recursive over the batch dims."""
    p, idx = np.asarray(p), np.asarray(idx)
    if batch_dims == 0:
        return naive_take(p, idx, axis)
    return np.stack([naive_batch_gather(p[k], idx[k], axis - 1, batch_dims - 1)
                     for k in range(p.shape[0])])


GATHER_DTYPES = ["int64", "float32", "complex64", "complex128"]


# GatherTest.testScalar1D
@pytest.mark.parametrize("dtype", GATHER_DTYPES)
@pytest.mark.parametrize("itype", ["int16", "int32", "int64"])
@pytest.mark.parametrize("indices", [4, [1, 2, 2, 4, 5]])
def test_gather_scalar_1d(dtype, itype, indices):
    params = tf_params(np.array([0, 1, 2, 3, 7, 5]), dtype)
    idx = np.array(indices, itype)
    for mode, got in both(ndx.gather, params, idx):
        np.testing.assert_array_equal(got, params[indices], err_msg=mode)
        assert np.shape(got) == np.shape(params[indices])


# GatherTest.testScalar2D and testSimpleTwoD32
@pytest.mark.parametrize("dtype", GATHER_DTYPES)
@pytest.mark.parametrize("itype", ["int16", "int32", "int64"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("indices", [2, [0, 1, 0, 2]])
def test_gather_2d_scalar_and_vector_indices(dtype, itype, axis, indices):
    params = tf_params(np.arange(15).reshape(5, 3), dtype)
    idx = np.array(indices, itype)
    want = naive_take(params, idx, axis)
    for mode, got in both(lambda p, i: ndx.gather(p, i, axis=axis), params, idx):
        np.testing.assert_array_equal(got, want, err_msg=mode)
        assert np.shape(got) == params.shape[:axis] + idx.shape + params.shape[axis + 1:]


# GatherTest.testHigherRank and testHigherRankGradientTape: scalar and empty index shapes,
# positive and negative axis, and params' gradient against the scatter of the output's
# gradient (TensorFlow's reference loop, here as its own loop).
@pytest.mark.parametrize("indices_shape", [(), (0,), (2, 0), (2, 3)])
@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_gather_higher_rank_and_its_gradient(indices_shape, axis):
    shape = (2, 1, 3, 2)
    params = RNG.standard_normal(shape)
    idx = RNG.integers(shape[axis], size=indices_shape).astype(np.int64)
    want = naive_take(params, idx, axis)
    for ax in (axis, axis - len(shape)):
        for mode, got in both(lambda p, i: ndx.gather(p, i, axis=ax), params, idx):
            np.testing.assert_array_equal(got, want, err_msg=f"{mode} axis {ax}")
    dy = RNG.standard_normal(want.shape)
    correct = np.zeros(shape)
    flat = dy.reshape(shape[:axis] + (idx.size,) + shape[axis + 1:])
    for source, dest in enumerate(idx.flat):
        sel = (slice(None),) * axis
        correct[sel + (dest,)] += flat[sel + (source,)]
    p = params.copy()
    with ndx.GradientTape() as tape:
        tape.watch(p)
        y = ndx.gather(p, idx, axis=axis)
        loss = ndx.reduce_sum(ndx.multiply(y, dy))
    g = tape.gradient(loss, p)
    if axis == 0:
        assert isinstance(g, ndx.IndexedSlices)
    np.testing.assert_allclose(ndx.convert_to_tensor(g), correct, atol=2e-6, rtol=2e-6)


# GatherTest.testString and testUInt32AndUInt64
def test_gather_string_and_unsigned_scalars():
    params = np.array([[b"asdf", b"zxcv"], [b"qwer", b"uiop"]])
    np.testing.assert_array_equal(ndx.gather(params, 1, axis=0), [b"qwer", b"uiop"])
    np.testing.assert_array_equal(ndx.gather(params, 0, axis=1), [b"asdf", b"qwer"])
    for dtype in (np.uint32, np.uint64):
        params = np.array([[1, 2, 3], [7, 8, 9]], dtype)
        np.testing.assert_array_equal(ndx.gather(params, 1, axis=0), [7, 8, 9])
        np.testing.assert_array_equal(ndx.gather(params, 0, axis=1), [1, 7])


# GatherTest.testUnknownIndices / testUnknownAxis: the shapes are only known when run.
def test_gather_unknown_index_shape_runs():
    @ndx.function(input_signature=[ndx.TensorSpec(None, ndx.int32)])
    def f(i):
        return ndx.gather(np.array([[0, 1, 2]], np.int32), i)

    np.testing.assert_array_equal(f(np.array([[0, 0], [0, 0]], np.int32)),
                                  np.tile(np.arange(3, dtype=np.int32), (2, 2, 1)))


# GatherTest.testBadIndicesType: a float index is refused (TensorFlow: "float... not in list of
# allowed values: int16, int32, int64").
def test_gather_bad_indices_type():
    refused(lambda: ndx.gather([0], 0.), "gather", "int16, int32 or int64")
    refused(lambda: ndx.gather([0], np.float32(0)), "gather", "int16, int32 or int64")


# GatherTest.testBadIndicesCPU: TensorFlow's message, multi-dim index and all.
@pytest.mark.parametrize("axis, message", [(0, "indices[0,0] = 7 is not in [0, 2)"),
                                           (1, "indices[0,0] = 7 is not in [0, 3)")])
def test_gather_bad_indices_cpu(axis, message):
    params = np.array([[0, 1, 2], [3, 4, 5]])
    before = params.copy()
    for call in (lambda: ndx.gather(params, [[7]], axis=axis),
                 lambda: ndx.function(lambda: ndx.gather(params, [[7]], axis=axis))()):
        refused(call, "gather", message, errors=ndx.InvalidArgumentError)
    np.testing.assert_array_equal(params, before)


# GatherTest.testBadAxis: rank-1 params, axis 1, 2 and -2.
@pytest.mark.parametrize("axis", [1, 2, -2])
def test_gather_bad_axis(axis):
    refused(lambda: ndx.gather([0, 1, 2], 0, axis=axis), "gather", "axis")
    refused(lambda: ndx.function(lambda: ndx.gather([0, 1, 2], 0, axis=axis))(), "gather",
            "axis")


# GatherTest.testAxisExtremeBounds and testBatchDimsExtremeBounds
@pytest.mark.parametrize("kw", [{"axis": np.int64(-2**63)}, {"axis": np.int64(2**63 - 1)},
                                {"batch_dims": -2**31}, {"batch_dims": 2**31 - 1}])
def test_gather_extreme_axis_and_batch_dims(kw):
    params = np.array([[0.69]], np.float32)
    word = "axis" if "axis" in kw else "batch_dims"
    refused(lambda: ndx.gather(params, [0], **kw), "gather", word)
    refused(lambda: ndx.function(lambda p: ndx.gather(p, [0], **kw))(params), "gather", word)


# GatherTest.testEmptySlices: gathers along dims of size 7 among empty ones.
@pytest.mark.parametrize("dtype", GATHER_DTYPES)
@pytest.mark.parametrize("itype", ["int16", "int32", "int64"])
def test_gather_empty_slices(dtype, itype):
    idx = np.array([3, 4], itype)
    for shape, axis, want in (((7, 0, 0), 0, (2, 0, 0)), ((0, 7, 0), 1, (0, 2, 0)),
                              ((0, 0, 7), 2, (0, 0, 2))):
        got = ndx.gather(np.zeros(shape, dtype), idx, axis=axis)
        assert got.shape == want and got.dtype == np.dtype(dtype)


# GatherTest.testBatchDims: TensorFlow's parameter table with its expected values, then the
# same for strings, and the gradient against central differences.
BATCH_DIMS_CASES = [
    dict(batch_dims=0, params=[6, 7, 8, 9], indices=[[2, 1], [0, 3]],
         expected=[[8, 7], [6, 9]]),
    dict(batch_dims=0, params=[6, 7, 8, 9], indices=[[[3, 1], [2, 0]], [[0, 3], [2, 2]]],
         expected=[[[9, 7], [8, 6]], [[6, 9], [8, 8]]]),
    dict(batch_dims=0, params=[8, 9],
         indices=[[[[0, 1], [1, 0]], [[0, 0], [1, 1]]], [[[1, 1], [0, 0]], [[0, 1], [1, 0]]]],
         expected=[[[[8, 9], [9, 8]], [[8, 8], [9, 9]]], [[[9, 9], [8, 8]], [[8, 9], [9, 8]]]]),
    dict(batch_dims=1, params=[[10, 11, 12, 13], [20, 21, 22, 23]], indices=[[2, 1], [0, 3]],
         expected=[[12, 11], [20, 23]]),
    dict(batch_dims=2, params=[[[100, 101], [110, 111]], [[200, 201], [210, 211]]],
         indices=[[[0, 1], [1, 0]], [[0, 0], [1, 1]]],
         expected=[[[100, 101], [111, 110]], [[200, 200], [211, 211]]]),
    dict(batch_dims=-1, params=[[10, 11, 12, 13], [20, 21, 22, 23]], indices=[[2, 1], [0, 3]],
         expected=[[12, 11], [20, 23]]),
    dict(batch_dims=-1, params=[[[100, 101], [110, 111]], [[200, 201], [210, 211]]],
         indices=[[[0, 1], [1, 0]], [[0, 0], [1, 1]]],
         expected=[[[100, 101], [111, 110]], [[200, 200], [211, 211]]]),
    dict(batch_dims=1, params=[[10, 11, 12, 13], [20, 21, 22, 23]], indices=[2, 1],
         expected=[12, 21]),
    dict(batch_dims=2, params=[[[100, 101, 102, 103], [110, 111, 112, 113]],
                               [[200, 201, 202, 203], [210, 211, 212, 213]]],
         indices=[[2, 1], [0, 3]], expected=[[102, 111], [200, 213]]),
    dict(batch_dims=1, params=[[10, 11, 12, 13], [20, 21, 22, 23]],
         indices=[[[3, 1], [2, 0]], [[0, 3], [2, 2]]],
         expected=[[[13, 11], [12, 10]], [[20, 23], [22, 22]]]),
    dict(batch_dims=1, params=[[6, 7], [8, 9]],
         indices=[[[[0, 1], [1, 0]], [[0, 0], [1, 1]]], [[[1, 1], [0, 0]], [[0, 1], [1, 0]]]],
         expected=[[[[6, 7], [7, 6]], [[6, 6], [7, 7]]], [[[9, 9], [8, 8]], [[8, 9], [9, 8]]]]),
    dict(batch_dims=2, params=[[[2, 3], [4, 5]], [[6, 7], [8, 9]]],
         indices=[[[[0, 1], [1, 0]], [[0, 0], [1, 1]]], [[[1, 1], [0, 0]], [[0, 1], [1, 0]]]],
         expected=[[[[2, 3], [3, 2]], [[4, 4], [5, 5]]], [[[7, 7], [6, 6]], [[8, 9], [9, 8]]]]),
    dict(batch_dims=1, axis=2, params=[[[10, 11, 12], [13, 14, 15]],
                                       [[20, 21, 22], [23, 24, 25]]],
         indices=[[[0, 1, 2, 1, 0]], [[0, 1, 2, 1, 0]]],
         expected=[[[[10, 11, 12, 11, 10]], [[13, 14, 15, 14, 13]]],
                   [[[20, 21, 22, 21, 20]], [[23, 24, 25, 24, 23]]]]),
    dict(batch_dims=None, axis=1, params=[[10, 11, 12], [13, 14, 15]], indices=[1, 0],
         expected=[[11, 10], [14, 13]]),
    dict(batch_dims=-3, axis=1, params=[[0, 1, 2], [3, 4, 5]], indices=[[[0, 1], [1, 0]]],
         expected=[[[[0, 1], [1, 0]]], [[[3, 4], [4, 3]]]]),
]


@pytest.mark.parametrize("case", BATCH_DIMS_CASES, ids=lambda c: str(BATCH_DIMS_CASES.index(c)))
def test_gather_batch_dims_table(case):
    params, indices = np.array(case["params"], np.int32), np.array(case["indices"], np.int32)
    axis, batch_dims = case.get("axis"), case["batch_dims"]
    kw = {"axis": axis, "batch_dims": 0 if batch_dims is None else batch_dims}
    for mode, got in both(lambda p, i: ndx.gather(p, i, **kw), params, indices):
        np.testing.assert_array_equal(got, case["expected"], err_msg=mode)
    strings = np.char.encode(params.astype(str))
    np.testing.assert_array_equal(ndx.gather(strings, indices, **kw),
                                  np.char.encode(np.array(case["expected"]).astype(str)))
    check(lambda p: ndx.gather(p, indices, **kw), [params.astype(np.float64)], [0])
    check(lambda p: ndx.gather(p, indices, **kw), [params.astype(np.float64)], [0],
          gradients=taped)


# GatherTest.testBatchDimsMatchesPythonBatching: big shapes, batch_dims 2, every axis.
@pytest.mark.parametrize("axis", [2, 3, 4, 5, -4, -3, -2, -1])
def test_gather_batch_dims_matches_python_batching(axis):
    params_shape, indices_shape = (2, 3, 4, 5, 6, 7), (2, 3, 8, 9, 10)
    params = np.arange(np.prod(params_shape)).reshape(params_shape)
    indices = np.arange(np.prod(indices_shape)).reshape(indices_shape) % params_shape[axis]
    got = ndx.gather(params, indices, axis=axis, batch_dims=2)
    ax = axis % len(params_shape)
    assert got.shape == params_shape[:ax] + indices_shape[2:] + params_shape[ax + 1:]
    want = np.stack([np.stack([np.take(params[a, b], indices[a, b], axis=ax - 2)
                               for b in range(3)]) for a in range(2)])
    np.testing.assert_array_equal(got, want)


# GatherTest.testGatherResourceVariable
def test_gather_resource_variable():
    v = ndx.Variable(np.array([[1, 2], [3, 4], [5, 6]], np.int32))
    np.testing.assert_array_equal(ndx.gather(v, [0, 2]), [[1, 2], [5, 6]])


# =============================== one_hot (one_hot_op_test.py) ===================================

def naive_one_hot(indices, depth, on, off, axis, dtype):
    """Loops: on where indices[...] == d, off elsewhere, the new dim at axis."""
    idx = np.asarray(indices).astype(np.int64)
    out = np.full(idx.shape + (depth,), off, dtype)
    for pos in itertools.product(*map(range, idx.shape)):
        if 0 <= idx[pos] < depth:
            out[pos + (idx[pos],)] = on
    return out if axis == -1 else np.moveaxis(out, -1, axis)


ONE_HOT_DTYPES = ["float16", "float32", "float64", "int32", "int64", "complex64", "complex128"]


# OneHotTest._testBasic, _testDefaultBasic, _testBatch, _testDefaultValuesBatch and
# _testValueTypeBatch for each dtype (testFloatBasic ... testComplexBatch)
@pytest.mark.parametrize("dtype", ONE_HOT_DTYPES)
@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("values", [True, False])
def test_one_hot_basic_and_batch(dtype, batch, values):
    indices = np.array([[0, 2, -1, 1], [1, 0, 1, -1]] if batch else [0, 2, -1, 1], np.int64)
    kw = {"on_value": np.asarray(1.0, dtype), "off_value": np.asarray(-1.0, dtype)} \
        if values else {}
    on, off = (1, -1) if values else (1, 0)
    for axis in (-1, 1 if batch else 0):
        want = naive_one_hot(indices, 3, on, off, axis, dtype)
        for mode, got in both(lambda i: ndx.one_hot(i, 3, axis=axis, dtype=dtype, **kw),
                              indices):
            np.testing.assert_array_equal(got, want, err_msg=mode)
            assert got.dtype == np.dtype(dtype)


# OneHotTest.testDefaultNoDtype: float32
def test_one_hot_default_no_dtype():
    got = ndx.one_hot(np.array([0, 2, -1, 1], np.int64), 3, axis=0)
    np.testing.assert_array_equal(got, naive_one_hot([0, 2, -1, 1], 3, 1, 0, 0, np.float32))
    assert got.dtype == np.float32


# OneHotTest._testEmpty (testHalfBatch ... testComplexBatch)
@pytest.mark.parametrize("dtype", ONE_HOT_DTYPES)
def test_one_hot_empty(dtype):
    for mode, got in both(lambda i: ndx.one_hot(i, 3, on_value=np.asarray(1.0, dtype),
                                                off_value=np.asarray(-1.0, dtype), dtype=dtype),
                          np.zeros((0, 16), np.int64)):
        assert got.shape == (0, 16, 3) and got.dtype == np.dtype(dtype), mode


# OneHotTest.testSimpleCases and testSingleValueGiven: TensorFlow's truths and dtypes
@pytest.mark.parametrize("kw, truth, dtype", [
    ({}, np.eye(3), np.float32),
    ({"dtype": np.int32}, np.eye(3), np.int32),
    ({"on_value": 1, "off_value": -1}, 2 * np.eye(3) - 1, np.int32),
    ({"on_value": 1}, np.eye(3), np.int32),
    ({"off_value": 0.0}, np.eye(3), np.float32),
])
def test_one_hot_simple_cases(kw, truth, dtype):
    for mode, got in both(lambda i: ndx.one_hot(i, 3, **kw), [0, 1, 2]):
        np.testing.assert_array_equal(got, truth, err_msg=mode)
        assert got.dtype == np.dtype(dtype), mode


# OneHotTest.testString: bytes on and off values, as NumPy scalars and as Python bytes
@pytest.mark.parametrize("on, off", [(np.asarray(b"1.0"), np.asarray(b"0.0")), (b"1.0", b"0.0")])
def test_one_hot_string(on, off):
    truth = [[b"1.0", b"0.0", b"0.0"], [b"0.0", b"1.0", b"0.0"], [b"0.0", b"0.0", b"1.0"]]
    for mode, got in both(lambda i: ndx.one_hot(i, 3, on_value=on, off_value=off), [0, 1, 2]):
        np.testing.assert_array_equal(got, truth, err_msg=mode)


# OneHotTest.testIndicesTypes: uint8's -1 is 255, out of range like -1
@pytest.mark.parametrize("itype", ["uint8", "int32", "int64"])
def test_one_hot_indices_types(itype):
    indices = np.array([[0, 2, -1, 1], [1, 0, 1, -1]]).astype(itype)
    on, off = np.float32(1.0), np.float32(-1.0)
    for axis in (-1, 1):
        want = naive_one_hot(indices, 3, 1, -1, axis, np.float32)
        for mode, got in both(lambda i: ndx.one_hot(i, 3, on_value=on, off_value=off,
                                                    axis=axis), indices):
            np.testing.assert_array_equal(got, want, err_msg=mode)


# OneHotTest.testPrefixDimOverflow: 65536 indices of depth 2
@pytest.mark.parametrize("itype", ["int32", "int64", "uint8"])
def test_one_hot_prefix_dim_overflow(itype):
    x = np.arange(65536) % 2
    truth = np.zeros((65536, 2), np.float32)
    truth[np.arange(65536), x] = 1.0
    np.testing.assert_array_equal(ndx.one_hot(x.astype(itype), 2, on_value=1.0, off_value=0.0),
                                  truth)


# OneHotTest.testOnOffMismatchTypeError and testDtypeMismatchTypeError
def test_one_hot_type_mismatches():
    with pytest.raises(TypeError):
        ndx.one_hot([0, 1, 2], 3, on_value=np.float64(1.0), off_value=np.float32(0.0))
    for value in (np.float32(1.0), np.float32(0.0)):
        with pytest.raises(TypeError):
            ndx.one_hot([0, 1, 2], 3, on_value=value, dtype=np.int32)


# OneHotTest.testConvertToTensorOfCorrectDtype: Python values take dtype float16
@pytest.mark.parametrize("kw", [{"on_value": 1.0, "off_value": np.float16(0.0)},
                                {"on_value": np.float16(1.0), "off_value": 0.0},
                                {"on_value": 1.0, "off_value": 0.0}])
def test_one_hot_convert_to_correct_dtype(kw):
    got = ndx.one_hot([0, 1, 2], 3, dtype=np.float16, **kw)
    np.testing.assert_array_equal(got, np.eye(3))
    assert got.dtype == np.float16


# OneHotTest.testOneHotUint8WithLargeArray
def test_one_hot_uint8_large_array():
    x = (RNG.random(256) * 10).astype(np.uint8)
    got = ndx.one_hot(x, depth=10, axis=0)
    assert got.shape == (10, 256)
    np.testing.assert_array_equal(got, naive_one_hot(x, 10, 1, 0, 0, np.float32))


# ================================ unique (unique_op_test.py) ====================================

def naive_unique(x):
    """First-occurrence order by a loop, with idx and counts."""
    y, idx, count, where = [], [], [], {}
    for v in np.asarray(x).tolist():
        if v != v:  # every NaN is a value of its own (std::unordered_map)
            where_v = None
        else:
            where_v = where.get(v)
        if where_v is None:
            where_v = len(y)
            if v == v:
                where[v] = where_v
            y.append(v)
            count.append(0)
        idx.append(where_v)
        count[where_v] += 1
    return y, idx, count


# UniqueTest / UniqueWithCountsTest: testInt32, testInt32OutIdxInt64, testString, testBool
@pytest.mark.parametrize("kind", ["int32", "string", "bool"])
@pytest.mark.parametrize("out_idx", ["int32", "int64"])
def test_unique_7000(kind, out_idx):
    if kind == "int32":
        x = RNG.integers(2, 10, 7000).astype(np.int32)
    elif kind == "string":
        x = np.array([chr(c).encode() for c in RNG.integers(65, 122, 7000)])
    else:
        x = RNG.choice([True, False], 7000)
    wy, widx, wcount = naive_unique(x)
    y, idx, count = ndx.unique_with_counts(x, out_idx=out_idx)
    np.testing.assert_array_equal(y, wy)
    np.testing.assert_array_equal(idx, widx)
    np.testing.assert_array_equal(count, wcount)
    assert idx.dtype == np.dtype(out_idx)
    np.testing.assert_array_equal(np.asarray(y)[np.asarray(idx)], x)
    y, idx = ndx.unique(x, out_idx=out_idx)
    np.testing.assert_array_equal(np.asarray(y)[np.asarray(idx)], x)


# UniqueTest.testOrderedByAppearance and UniqueWithCountsTest.testOrderedByAppearance
def test_unique_ordered_by_appearance():
    x = np.array([3, 5, 3, 4, 1, 4, 9, 8, 6, 3, 5, 7, 8, 8, 4, 6, 4, 2, 5, 6])
    for mode, got in both(ndx.unique_with_counts, x):
        np.testing.assert_array_equal(got.y, [3, 5, 4, 1, 9, 8, 6, 7, 2], err_msg=mode)
        np.testing.assert_array_equal(
            got.idx, [0, 1, 0, 2, 3, 2, 4, 5, 6, 0, 1, 7, 5, 5, 2, 6, 2, 8, 1, 6], err_msg=mode)
        np.testing.assert_array_equal(got.count, [3, 3, 4, 1, 1, 3, 3, 1, 1], err_msg=mode)


# UniqueTest.testEmpty and UniqueWithCountsTest.testEmpty
def test_unique_empty():
    for mode, got in both(ndx.unique_with_counts, np.zeros(0, np.int64)):
        assert got.y.shape == got.idx.shape == got.count.shape == (0,), mode


# UniqueWithCountsTest.testFloat: each NaN is its own key with count 1
def test_unique_float_nan():
    x = np.array([0.0, 1.0, np.nan, np.nan])
    y, idx, count = ndx.unique_with_counts(x)
    assert len(idx) == 4
    for i, v in enumerate(x):
        assert np.isnan(y[idx[i]]) if np.isnan(v) else y[idx[i]] == v
    for v, c in zip(y, count):
        assert c == (1 if np.isnan(v) else np.sum(x == v))


UNIQUE_V2_TEXT = """ndx-graph 1
x = Placeholder() : {x_type}
axis = Placeholder() : {axis_type}
u = UniqueV2(x, axis) out_idx={out_idx} : {y_type}, {out_idx}[?]
"""


def unique_v2(x, axis, tmp_path, out_idx="int32"):
    """UniqueV2 (no Python function: TensorFlow's gen_array_ops.unique_v2) through a graph
    written in the text form and loaded back."""
    x, axis = np.asarray(x), np.asarray(axis)
    dims = lambda a: ", ".join(["?"] * a.ndim)  # noqa: E731
    text = UNIQUE_V2_TEXT.format(x_type=f"{x.dtype.name}[{dims(x)}]",
                                 axis_type=f"{axis.dtype.name}[{dims(axis)}]", out_idx=out_idx,
                                 y_type=f"{x.dtype.name}[{dims(x)}]")
    path = tmp_path / "unique_v2.txt"
    path.write_text(text)
    got = ndx.load(path)(["u", "u:1"], x=x, axis=axis)
    return got["u"], got["u:1"]


# UniqueTest.testInt32Axis: TensorFlow's expected slices
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_unique_v2_axis(dtype, tmp_path):
    x = np.array([[1, 0, 0], [1, 0, 0], [2, 0, 0]], np.int64)
    y0, idx0 = unique_v2(x, np.array([0], dtype), tmp_path)
    np.testing.assert_array_equal(y0, [[1, 0, 0], [2, 0, 0]])
    np.testing.assert_array_equal(idx0, [0, 0, 1])
    y1, idx1 = unique_v2(x, np.array([1], dtype), tmp_path)
    np.testing.assert_array_equal(y1, [[1, 0], [1, 0], [2, 0]])
    np.testing.assert_array_equal(idx1, [0, 1, 1])


# UniqueWithCountsTest.testInt32Axis: UniqueWithCountsV2, TensorFlow's expected slices and counts
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_unique_with_counts_v2_axis(dtype, tmp_path):
    x = np.array([[1, 0, 0], [1, 0, 0], [2, 0, 0]], np.int64)
    path = tmp_path / "unique_with_counts_v2.txt"
    for axis, y, idx, count in ((0, [[1, 0, 0], [2, 0, 0]], [0, 0, 1], [2, 1]),
                                (1, [[1, 0], [1, 0], [2, 0]], [0, 1, 1], [1, 2])):
        path.write_text(UNIQUE_V2_TEXT.replace("UniqueV2", "UniqueWithCountsV2").replace(
            "{out_idx}[?]", "{out_idx}[?], {out_idx}[?]").format(
                x_type="int64[?, ?]", axis_type=f"{np.dtype(dtype).name}[?]", out_idx="int32",
                y_type="int64[?, ?]"))
        got = ndx.load(path)(["u", "u:1", "u:2"], x=x, axis=np.array([axis], dtype))
        np.testing.assert_array_equal(got["u"], y)
        np.testing.assert_array_equal(got["u:1"], idx)
        np.testing.assert_array_equal(got["u:2"], count)


# UniqueTest.testInt32V2 and testBoolV2: an empty axis is unique of a vector
@pytest.mark.parametrize("kind", ["int32", "bool"])
def test_unique_v2_empty_axis(kind, tmp_path):
    x = RNG.integers(2, 10, 7000).astype(np.int32) if kind == "int32" else \
        RNG.choice([True, False], 7000)
    y, idx = unique_v2(x, np.zeros(0, np.int32), tmp_path)
    wy, widx, _ = naive_unique(x)
    np.testing.assert_array_equal(y, wy)
    np.testing.assert_array_equal(idx, widx)


# UniqueTest.testShapeInferenceV2: idx's length along each axis, negative ones too, and the
# refusals (TensorFlow's words)
def test_unique_v2_shapes_and_refusals(tmp_path):
    x = np.arange(6).reshape(3, 2, 1)
    for axis, n in ((0, 3), (1, 2), (2, 1), (-1, 1), (-2, 2), (-3, 3)):
        _, idx = unique_v2(x, np.array([axis], np.int32), tmp_path)
        assert idx.shape == (n,), axis
    _, idx = unique_v2(np.array([0, 1, 2]), np.zeros(0, np.int32), tmp_path)
    assert idx.shape == (3,)
    for axis, words in (([[0]], "axis expects a 1D vector"), ([], "1D vector"),
                        ([1, 2], "1 element"),
                        ([3], "axis has to be between [0, 3)"),  # (the kernel's words)
                        ([-4], "axis has to be between [0, 3)")):
        refused(lambda: unique_v2(x, np.array(axis, np.int32).reshape(np.shape(axis)),
                                  tmp_path), "unique", words)


# ============================ boolean_mask (array_ops_test.py) ==================================

def naive_mask(arr, mask, axis):
    """The kept slices by a loop over the mask's positions in row-major order."""
    arr, mask = np.asarray(arr), np.asarray(mask)
    moved = np.moveaxis(arr.reshape(arr.shape[:axis] + (-1,) + arr.shape[axis + mask.ndim:])
                        if mask.size else arr.reshape(arr.shape[:axis] + (0,) +
                                                      arr.shape[axis + mask.ndim:]), axis, 0)
    rows = [moved[k] for k, keep in enumerate(mask.reshape(-1)) if keep]
    rest = moved.shape[1:]
    out = np.array(rows, arr.dtype).reshape((len(rows),) + rest)
    return np.moveaxis(out, 0, axis)


# BooleanMaskTest.testMaskDim1ArrDim1 ... testMaskDim2ArrDim3, testMaskDim1ArrDim2Axis1,
# testMaskDim2ArrDim2Axis1 (whose mask is 1-D: arr_shape[1:3] of a 2-D arr)
@pytest.mark.parametrize("ndims_mask, arr_shape, axis", [
    (1, (1,), None), (1, (2,), None), (1, (3,), None), (1, (10,), None),
    (1, (1, 1), None), (1, (2, 2), None), (1, (2, 5), None),
    (2, (1, 1), None), (2, (2, 2), None), (2, (2, 5), None),
    (2, (1, 1, 1), None), (2, (1, 2, 2), None), (2, (2, 2, 1), None),
    (1, (1, 1), 1), (1, (2, 2), 1), (1, (2, 5), 1),
    (2, (1, 1), 1), (2, (2, 2), 1), (2, (2, 5), 1),
])
def test_boolean_mask_versus_numpy(ndims_mask, arr_shape, axis):
    arr = RNG.random(arr_shape)
    a = axis or 0
    mask = RNG.integers(0, 2, arr_shape[a:a + ndims_mask]).astype(bool)
    want = naive_mask(arr, mask, a)
    for mode, got in both(lambda t, m: ndx.boolean_mask(t, m, axis=axis), arr, mask):
        np.testing.assert_array_equal(got, want, err_msg=mode)


# BooleanMaskTest.testEmptyInput2D, testEmptyInput1D and testEmptyOutput
def test_boolean_mask_empty_inputs_and_outputs():
    arr = np.zeros((2, 0), np.float32)
    assert ndx.boolean_mask(arr, np.array([True, False])).shape == (1, 0)
    assert ndx.boolean_mask(np.zeros(0, np.float32), np.zeros(0, bool)).shape == (0,)
    for ndims_mask in range(1, 4):
        for ndims_arr in range(ndims_mask, ndims_mask + 3):
            shape = tuple(RNG.integers(1, 5, ndims_arr))
            arr = RNG.random(shape)
            mask = np.zeros(shape[:ndims_mask], bool)
            for mode, got in both(ndx.boolean_mask, arr, mask):
                assert got.shape == (0,) + shape[ndims_mask:], mode


# BooleanMaskTest.testWorksWithDimensionsEqualToNoneDuringGraphBuild
def test_boolean_mask_unknown_dims_during_trace():
    @ndx.function(input_signature=[ndx.TensorSpec(None, ndx.int32),
                                   ndx.TensorSpec([None], ndx.bool)])
    def f(t, m):
        return ndx.boolean_mask(t, m)

    arr = np.array([[1, 2], [3, 4]], np.int32)
    np.testing.assert_array_equal(f(arr, np.array([False, True])), [[3, 4]])


# BooleanMaskTest.testMaskDimensionsSetToNoneRaises: TensorFlow refuses a mask of unknown rank
# when it builds its composition; ndx's one BooleanMask node takes the rank when it runs
# (docs/differences-from-tensorflow.md), so the trace succeeds and the run is right.
def test_boolean_mask_unknown_mask_rank_runs_as_documented():
    @ndx.function(input_signature=[ndx.TensorSpec([None, 2], ndx.int32),
                                   ndx.TensorSpec(None, ndx.bool)])
    def f(t, m):
        return ndx.boolean_mask(t, m)

    arr = np.array([[1, 2], [3, 4]], np.int32)
    np.testing.assert_array_equal(f(arr, np.array([True, False])), [[1, 2]])
    np.testing.assert_array_equal(f(arr, np.array([[True, False], [False, True]])), [1, 4])


# BooleanMaskTest.testMaskHasMoreDimsThanTensorRaises, testMaskIsScalarRaises and
# testMaskShapeDifferentThanFirstPartOfTensorShapeRaises
@pytest.mark.parametrize("tensor, mask, words", [
    ([1, 2, 3, 4], [[True, True], [False, False]], ["mask has rank 2", "rank 1"]),
    (1, True, ["mask cannot be scalar"]),
    ([[1, 2], [3, 4]], [True, True, True], ["mask.shape = [3]", "[2]"]),
])
def test_boolean_mask_shape_refusals(tensor, mask, words):
    refused(lambda: ndx.boolean_mask(tensor, mask), "boolean_mask", *words)
    refused(lambda: ndx.function(lambda: ndx.boolean_mask(tensor, mask))(), "boolean_mask",
            *words)


# BooleanMaskTest.testStringMask: a string tensor under a 2-D mask, both made in the trace
# (TensorFlow tiles them; ndx.fill makes the same tensors)
def test_boolean_mask_strings():
    @ndx.function
    def f(reps):
        strings = ndx.fill(reps, np.array(b"hello"))
        mask = ndx.fill(reps, np.array(True))
        return ndx.boolean_mask(strings, mask)

    np.testing.assert_array_equal(f(np.array([2, 2], np.int32)), [b"hello"] * 4)


# BooleanMaskTest.testMaskWithAxisTensor: an axis given as a typed scalar
def test_boolean_mask_axis_as_a_typed_scalar():
    for axis in (np.int32(0), np.int64(0)):
        for mode, got in both(lambda: ndx.boolean_mask([1, 2, 3], [True, False, True],
                                                       axis=axis)):
            np.testing.assert_array_equal(got, [1, 3], err_msg=mode)


# ============================ segment reductions (segment_reduction_ops_test.py) =================

@np.errstate(over="ignore")  # float16 products overflow to inf, as the kernel's
def tf_segment_reduce(ids, x, op, num_segments=None, empty=0):
    """SegmentReductionHelper._segmentReduce: rows combined in order into their id's slot;
    untouched slots `empty`; mean and sqrt_n divide by the count at the end."""
    ids = np.asarray(ids)
    if num_segments is None:
        num_segments = int(ids[-1]) + 1 if ids.size else 0
    tail = x.shape[ids.ndim:]
    rows = x.reshape((ids.size,) + tail)
    out, count = [None] * num_segments, [0] * num_segments
    for r, s in enumerate(ids.reshape(-1)):
        if s < 0:
            continue
        v = rows[r].astype(x.dtype)
        if out[s] is None:
            out[s] = v.copy()
        elif op in ("sum", "mean", "sqrt_n"):
            out[s] = out[s] + v
        elif op == "prod":
            out[s] = out[s] * v
        elif op == "min":
            out[s] = np.minimum(out[s], v)
        else:
            out[s] = np.maximum(out[s], v)
        count[s] += 1
    result = np.empty((num_segments,) + tail, x.dtype)
    for s in range(num_segments):
        if out[s] is None:
            result[s] = empty
        elif op == "mean":
            result[s] = out[s] / count[s]
        elif op == "sqrt_n":
            result[s] = out[s] / np.sqrt(count[s])
        else:
            result[s] = out[s]
    return result


def tolerance(dtype):
    return {"float16": 1e-3, "complex64": 1e-6, "float32": 1e-6}.get(np.dtype(dtype).name, 1e-12)


SORTED_OPS = {"sum": M.segment_sum, "mean": M.segment_mean, "prod": M.segment_prod,
              "min": M.segment_min, "max": M.segment_max}


# SegmentReductionOpTest.testValues: every dtype, inner sizes 1, 2, 3 and 32, ids i // 3
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "complex64",
                                   "complex128"])
@pytest.mark.parametrize("inner", [1, 2, 3, 32])
def test_segment_values(dtype, inner):
    ids = [i // 3 for i in range(10)]
    x = tf_input((10, inner), dtype)
    ops = ("sum", "prod", "mean") if dtype.startswith("complex") else tuple(SORTED_OPS)
    for op in ops:
        want = tf_segment_reduce(ids, x, op)
        if op == "mean" and dtype.startswith("int"):
            want = tf_segment_reduce(ids, x, "sum") // np.bincount(ids)[:, None]
        for mode, got in both(lambda d: SORTED_OPS[op](d, ids), x):
            np.testing.assert_allclose(got, want, rtol=tolerance(dtype), err_msg=f"{op} {mode}")


# SegmentReductionOpTest.testSegmentIdsValid, testSegmentIdsGreaterThanZero,
# testSegmentIdsHole and testSegmentIdsHoleEmptyValue
def test_segment_ids_valid_holes_and_leading_gap():
    x = tf_input((4, 4), "float32")
    np.testing.assert_array_equal(M.segment_sum(x, [0, 0, 0, 1]),
                                  [[15, 18, 21, 24], [13, 14, 15, 16]])
    for ids in ([1, 1, 2, 2], [0, 0, 3, 3]):
        np.testing.assert_allclose(M.segment_sum(x, ids), tf_segment_reduce(ids, x, "sum"))
    np.testing.assert_allclose(M.segment_max(x, [0, 0, 3, 3]),
                               tf_segment_reduce([0, 0, 3, 3], x, "max", empty=0))


# SegmentReductionOpTest.testSegmentIdsShape, testSegmentIdsSize, testSegmentIdsInvalid1..5,
# testDataInvalid and testInvalidIds
@pytest.mark.parametrize("data, ids, op, words", [
    (tf_input((4, 4), "int32"), np.array([[0, 1], [2, 2]]), "segment_sum", ["vector"]),
    (tf_input((4, 4), "int32"), [0, 1], "segment_sum", ["should be the same size"]),
    (tf_input((4, 4), "int32"), [-1, -1, 0, 0], "segment_sum", ["-1"]),
    (tf_input((4, 4), "int32"), [0, 1, 0, 1], "segment_sum", ["not increasing"]),
    (tf_input((4, 4), "int32"), [0, 1, 2, 0], "segment_sum", ["not increasing"]),
    (tf_input((4, 4), "float32"), [0, 0, 0, -1], "segment_sum", ["must be >= 0"]),
    (tf_input((4, 4), "float32"), [0, 0, 0, -2], "segment_sum", ["must be >= 0"]),
    (np.uint16(10), np.array([], np.int64), "segment_mean", ["at least rank 1"]),
] + [(np.ones((1, 10, 1)), np.array([1676240524292489355]), "segment_" + op, [])
     for op in ("max", "min", "mean", "sum", "prod")])
def test_segment_refusals(data, ids, op, words):
    fn = getattr(M, op)
    refused(lambda: fn(data, ids), op, *words)
    refused(lambda: ndx.function(lambda: fn(data, ids))(), op, *words)


# SegmentReductionOpTest.testNaNPropagation and UnsortedSegmentTest.testNaNPropagation: a NaN
# in a segment makes its min and max NaN, column by column.
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16"])
@pytest.mark.parametrize("family", ["sorted", "unsorted"])
def test_segment_min_max_propagate_nan(dtype, family):
    def run(op, data):
        data = ndx.cast(np.array(data, np.float64), dtype)
        if family == "sorted":
            out = getattr(M, "segment_" + op)(data, [0, 0, 0])
        else:
            out = getattr(M, "unsorted_segment_" + op)(data, [0, 0, 0], 1)
        return np.asarray(ndx.cast(out, "float64"))

    assert np.isnan(run("min", [1.0, np.nan, 3.0])[0])
    assert np.isnan(run("max", [3.0, np.nan, 1.0])[0])
    data_2d = [[1.0, 2.0], [np.nan, 3.0], [3.0, 1.0]]
    got = run("min", data_2d)
    assert np.isnan(got[0][0]) and got[0][1] == 1.0
    got = run("max", data_2d)
    assert np.isnan(got[0][0]) and got[0][1] == 3.0


UNSORTED_OPS = {"sum": (M.unsorted_segment_sum, lambda info: 0),
                "mean": (M.unsorted_segment_mean, lambda info: 0),
                "sqrt_n": (M.unsorted_segment_sqrt_n, lambda info: 0),
                "prod": (M.unsorted_segment_prod, lambda info: 1),
                "min": (M.unsorted_segment_min, lambda info: info.max),
                "max": (M.unsorted_segment_max, lambda info: info.min)}


# UnsortedSegmentTest.testValues: every dtype, flat and [5, 2] ids, inner sizes 1, 2, 3, 32,
# empty segments at the op's initial value (the dtype's max for min, its min for max)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "int32",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("shaped", [False, True])
@pytest.mark.parametrize("inner", [1, 2, 3, 32])
def test_unsorted_values(dtype, shaped, inner):
    ids = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3])
    if shaped:
        ids = ids.reshape(5, 2)
    x = tf_input(ids.shape + (inner,), dtype)
    kind = np.dtype(dtype).kind
    for op, (fn, init) in UNSORTED_OPS.items():
        if kind == "c" and op not in ("sum", "prod"):
            continue
        if kind == "i" and op == "sqrt_n":
            continue
        info = (np.finfo if kind == "f" else np.iinfo)(dtype) if kind in "fi" else None
        empty = init(info) if info is not None else init(None)
        want = tf_segment_reduce(ids, x, op, 12, empty)
        if op == "mean" and kind == "i":  # TensorFlow's Python: sum / max(N, 1), true division
            total = tf_segment_reduce(ids, x, "sum", 12)
            counts = np.bincount(ids.reshape(-1), minlength=12)
            want = total / np.maximum(counts, 1)[:, None]
        for mode, got in both(lambda d, i: fn(d, i, 12), x, ids):
            np.testing.assert_allclose(got, want, rtol=tolerance(dtype), err_msg=f"{op} {mode}")
            assert got.shape == want.shape


# UnsortedSegmentTest.testNumSegmentsTypes and testIndicesTypes (int32 and int64 here;
# int16 ids: see the next test)
@pytest.mark.parametrize("ntype", ["int32", "int64"])
@pytest.mark.parametrize("itype", ["int32", "int64"])
@pytest.mark.parametrize("shaped", [False, True])
def test_unsorted_num_segments_and_index_types(ntype, itype, shaped):
    ids = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3])
    if shaped:
        ids = ids.reshape(5, 2)
    x = tf_input(ids.shape + (2,), "int32")
    got = M.unsorted_segment_sum(x, ids.astype(itype), np.array(12, ntype))
    np.testing.assert_array_equal(got, tf_segment_reduce(ids, x, "sum", 12))


# UnsortedSegmentTest.testIndicesTypes with int16 ids: TensorFlow's newer kernels take them;
# ndx documents its ids as int32 or int64 (include/ndx.h, "Segment reductions") and refuses
# int16 with the op named.
def test_unsorted_int16_ids_are_refused_as_documented():
    ids = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3], np.int16)
    refused(lambda: M.unsorted_segment_sum(tf_input((10, 2), "int32"), ids, 12),
            "unsorted_segment_sum", "int32 or int64")


# UnsortedSegmentTest.testGradientsTFGradients and testGradientsGradientTape: dropped (-1) ids,
# flat and [5, 2], every op, against central differences
@pytest.mark.parametrize("op", list(UNSORTED_OPS))
@pytest.mark.parametrize("shaped", [False, True])
def test_unsorted_gradients(op, shaped):
    ids = np.array([0, 4, 0, -1, 3, -1, 4, 7, 7, 3])
    if shaped:
        ids = ids.reshape(5, 2)
    fn = UNSORTED_OPS[op][0]
    x = tf_input(ids.shape + (2,), "float64") + RNG.random(ids.shape + (2,))
    # Empty segments of min and max hold the dtype's extremes: masked out of the weighted sum
    # (their gradient is 0 either way), as TensorFlow's per-element Jacobian never sums them.
    used = np.isin(np.arange(10), ids)[:, None].astype(np.float64)
    check(lambda d: ndx.multiply(fn(d, ids, 10), used), [x], [0])
    check(lambda d: ndx.multiply(fn(d, ids, 10), used), [x], [0], gradients=taped)


# UnsortedSegmentTest.testProdGrad: zeros in a segment, TensorFlow's ground truth
@pytest.mark.parametrize("ids, truth", [
    ([0, 0, 0, 1, 1, 1, 2, 2, 2], [0, 0, 0, 4, 0, 0, 9, 9, 9]),
    ([-1, 0, 0, -1, 1, 1, -1, 2, 2], [0, 1, 0, 0, 2, 2, 0, 3, 3]),
])
def test_unsorted_prod_gradient_with_zeros(ids, truth):
    values = np.array([0, 0, 1, 0, 2, 2, 3, 3, 3], np.float64)
    ids = np.array(ids, np.int32)
    jacobian = np.zeros((9, 3))
    for s in range(3):
        with ndx.GradientTape() as tape:
            v = values.copy()
            tape.watch(v)
            y = M.unsorted_segment_prod(v, ids, 3)
            pick = ndx.reduce_sum(ndx.multiply(y, np.eye(3)[s]))
        jacobian[:, s] = ndx.convert_to_tensor(tape.gradient(pick, v))
    want = np.zeros((9, 3))
    want[np.arange(9), np.where(ids < 0, 0, ids)] = truth
    want[ids < 0] = 0
    np.testing.assert_allclose(jacobian, want)


# UnsortedSegmentTest.testGradientMatchesSegmentSum
def test_unsorted_gradient_matches_segment_sum():
    ids = [0, 0, 1, 1, 1, 2, 3, 4, 5]
    x = tf_input((9, 2), "float64")
    dy = RNG.standard_normal((6, 2))
    grads = []
    for fn in (lambda d: M.unsorted_segment_sum(d, ids, 6), lambda d: M.segment_sum(d, ids)):
        with ndx.GradientTape() as tape:
            v = x.copy()
            tape.watch(v)
            loss = ndx.reduce_sum(ndx.multiply(fn(v), dy))
        grads.append(np.asarray(ndx.convert_to_tensor(tape.gradient(loss, v))))
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], dy[ids])


# UnsortedSegmentTest.testBadIndices: TensorFlow's message for a 2-D id
@pytest.mark.parametrize("bad", [2, 7])
def test_unsorted_bad_indices(bad):
    refused(lambda: M.unsorted_segment_sum([[17]], [[bad]], num_segments=2),
            "unsorted_segment_sum", f"segment_ids[0,0] = {bad} is out of range [0, 2)",
            errors=ndx.InvalidArgumentError)


# UnsortedSegmentTest.testEmptySecondDimension
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "int32",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("itype", ["int32", "int64"])
def test_unsorted_empty_second_dimension(dtype, itype):
    got = M.unsorted_segment_sum(np.zeros((2, 0), dtype), np.array([0, 1], itype), 2)
    assert got.shape == (2, 0) and got.dtype == np.dtype(dtype)


# UnsortedSegmentTest.testDropNegatives and testAllNegatives
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "int32",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("shaped", [False, True])
def test_unsorted_drop_negatives(dtype, shaped):
    ids = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3])
    if shaped:
        ids = ids.reshape(5, 2)
    x = tf_input(ids.shape + (2,), dtype)
    want = tf_segment_reduce(ids, x, "sum", 12)
    want[8:] = 0  # TensorFlow's test: everything from 8 on, 8 being the dropped id
    dropped = np.where(ids == 8, -1, ids)
    np.testing.assert_allclose(M.unsorted_segment_sum(x, dropped, 12), want,
                               rtol=tolerance(dtype))
    np.testing.assert_array_equal(
        M.unsorted_segment_sum(np.ones((2, 1), np.float32), np.array([-1, -1], np.int32), 2),
        np.zeros((2, 1)))


# UnsortedSegmentTest.testBadNumSegments: an output too large to address is refused
def test_unsorted_bad_num_segments():
    refused(lambda: M.unsorted_segment_sum(np.ones(3), np.int64(898042203),
                                           np.int64(8327099846119777499)),
            "unsorted_segment_sum", errors=ndx.InvalidArgumentError)


SPARSE_OPS = {"sum": S.segment_sum, "mean": S.segment_mean, "sqrt_n": S.segment_sqrt_n}


# SparseSegmentReductionOpTest.testValues: dtypes, int32/int64 indices and segment ids mixed,
# 20 segments of 1..20 ids over 400 rows
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("itype, stype", list(itertools.product(["int32", "int64"], repeat=2)))
def test_sparse_segment_values(dtype, itype, stype):
    seg = np.array([i for i in range(20) for _ in range(i + 1)])
    for inner in (1, 2, 3, 32):
        x = tf_input((400, inner), dtype)
        indices = RNG.integers(0, 400, len(seg))
        for op in ("sum", "mean"):
            if op == "mean" and dtype.startswith("int"):
                continue
            want = tf_segment_reduce(seg, x[indices], op)
            got = SPARSE_OPS[op](x, indices.astype(itype), seg.astype(stype))
            np.testing.assert_allclose(got, want, rtol=tolerance(dtype), err_msg=op)


# SparseSegmentReductionOpTest.testSegmentIdsHole, testSegmentIdsGreaterThanZero and
# testWithNumSegments
@pytest.mark.parametrize("seg, num", [([0, 2, 2, 2], None), ([1, 2, 2, 2], None),
                                      ([0, 2, 2, 2], 5)])
@pytest.mark.parametrize("op", ["sum", "mean", "sqrt_n"])
def test_sparse_segment_holes_and_num_segments(seg, num, op):
    x = tf_input((10, 4), "float32")
    indices = [8, 3, 0, 9]
    want = tf_segment_reduce(seg, x[indices], op, num)
    for mode, got in both(lambda d: SPARSE_OPS[op](d, indices, seg, num_segments=num), x):
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=mode)


# SparseSegmentReductionOpTest.testWithEmptySegments and testWithEmptySegmentsWithNumSegments
@pytest.mark.parametrize("op", ["sum", "mean", "sqrt_n"])
def test_sparse_segment_with_no_ids(op):
    x = np.zeros((0, 4), np.float32)
    np.testing.assert_array_equal(SPARSE_OPS[op](x, [], []), np.zeros((0, 4)))
    np.testing.assert_array_equal(SPARSE_OPS[op](x, [], [], num_segments=5), np.zeros((5, 4)))


# SparseSegmentReductionOpTest.testSegmentScalarIdiRaisesInvalidArgumentError,
# testIndicesInvalid1/2, testSegmentsInvalid2/3/4/6/7/8, testSegmentWithNumSegmentsInvalid1/2
@pytest.mark.parametrize("op", ["sum", "mean", "sqrt_n"])
@pytest.mark.parametrize("data, indices, seg, num, words", [
    (1.0, [0], [3], None, ["at least rank 1"]),
    (None, [8, -1, 0, 9], [0, 1, 2, 2], None, ["indices[1] = -1", "[0, 10)"]),
    (None, [8, 3, 0, 10], [0, 1, 2, 2], None, ["indices[3] = 10", "[0, 10)"]),
    (None, [8, 3, 0, 9], [0, 1, 0, 1], None, ["segment ids are not increasing"]),
    (None, [8, 3, 0, 9], [0, 1, 2, 0], None, ["segment ids are not increasing"]),
    (None, [8, 3, 0, 9], [-1, 0, 1, 1], None, ["must be >= 0"]),
    (None, [8, 3, 0, 9], [0, 0, 0, -1], None, ["must be >= 0"]),
    (None, [8, 3, 0, 9], [0, 0, 0, -2], None, ["must be >= 0"]),
    (None, np.array([2**62 - 1]), np.array([2**62 - 1]), None, []),
    (None, [8, 3, 0, 9], [0, 1, 3, 5], 5, ["segment ids must be < num_segments"]),
    (None, [8, 3, 0, 9], [0, 1, 3, 3], -2, ["num_segments", "negative"]),
])
def test_sparse_segment_refusals(op, data, indices, seg, num, words):
    x = tf_input((10, 4), "float32") if data is None else data
    before = None if data is not None else x.copy()
    fn = SPARSE_OPS[op]
    refused(lambda: fn(x, indices, seg, num_segments=num), "sparse_segment_" + op, *words)
    refused(lambda: ndx.function(lambda: fn(x, indices, seg, num_segments=num))(),
            "sparse_segment_" + op, *words)
    if before is not None:
        np.testing.assert_array_equal(x, before)


# SparseSegmentReductionOpTest.testGradient, testGradientWithEmptySegmentsAtEnd and
# testSparseGradient (an IndexedSlices, dense equal to the central differences)
@pytest.mark.parametrize("op", ["sum", "mean", "sqrt_n"])
@pytest.mark.parametrize("num", [None, 5])
def test_sparse_segment_gradients(op, num):
    x = tf_input((10, 4), "float64")
    indices = RNG.integers(0, 10, 4)
    seg = [0, 1, 2, 2]
    fn = SPARSE_OPS[op]
    check(lambda d: fn(d, indices, seg, num_segments=num), [x], [0])
    (g,) = check(lambda d: fn(d, indices, seg, num_segments=num, sparse_gradient=True), [x],
                 [0], gradients=taped)
    assert isinstance(g, ndx.IndexedSlices)
    v1 = getattr(ndx, "sparse_segment_" + op)  # TensorFlow 1's order takes the keyword too
    np.testing.assert_array_equal(v1(x, indices, seg, None, num, sparse_gradient=False),
                                  fn(x, indices, seg, num))


# =============================== embeddings (embedding_ops_test.py) =============================

def tf_embedding_params(num_shards, vocab, shape, dtype=np.float32):
    """_EmbeddingParams: shards of [vocab // num_shards (+1 for the first vocab % num_shards)] +
    shape, values in [1, 2)."""
    shards = []
    for i in range(num_shards):
        rows = vocab // num_shards + (1 if i < vocab % num_shards else 0)
        shards.append((RNG.random([rows] + list(shape)) + 1).astype(dtype))
    return shards


def tf_row(shards, i, vocab, strategy):
    """_EmbeddingResult's row of id i under the strategy."""
    n = len(shards)
    if strategy == "mod":
        return shards[i % n][i // n]
    per, extras = divmod(vocab, n)
    threshold = extras * (per + 1)
    if i < threshold:
        return shards[i // (per + 1)][i % (per + 1)]
    return shards[extras + (i - threshold) // per][(i - threshold) % per]


# EmbeddingLookupTest.testSimpleSharded, testShardedModPartitioningInt32Ids/Int64Ids and
# testShardedDivPartitioningInt32Ids/Int64Ids
@pytest.mark.parametrize("num_shards, vocab, n", [(2, 4, 2), (5, 13, 30)])
@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("itype", ["int32", "int64"])
def test_embedding_lookup_sharded(num_shards, vocab, n, strategy, itype):
    shards = tf_embedding_params(num_shards, vocab, [10])
    ids = np.zeros(2, itype) if n == 2 else RNG.integers(0, vocab, n).astype(itype)
    want = np.array([tf_row(shards, int(i), vocab, strategy) for i in ids])
    for mode, got in both(lambda *a: NN.embedding_lookup(list(a[:-1]), a[-1],
                                                         partition_strategy=strategy),
                          *shards, ids):
        np.testing.assert_array_equal(got, want, err_msg=mode)


# EmbeddingLookupTest.testMaxNorm and testMaxNormNontrivial
def test_embedding_lookup_max_norm():
    np.testing.assert_array_equal(
        NN.embedding_lookup([np.array([[2.0]], np.float32)], np.array([0], np.int32),
                            max_norm=1.0), [[1.0]])
    e = np.array([[2.0, 4.0], [3.0, 1.0]], np.float32)
    norms = np.sqrt(np.sum(e * e, axis=1, keepdims=True))
    np.testing.assert_allclose(NN.embedding_lookup([e], np.array([0, 1], np.int32),
                                                   max_norm=2.0), 2 * e / norms, rtol=1e-6)


# EmbeddingLookupTest.testHigherRank: 1-D and 2-D params, 2-D ids, equal to gather and to
# "mod" shards made by strided gathers (tf.compat.v1's default strategy, which the test uses)
@pytest.mark.parametrize("params_shape", [(12,), (6, 3)])
@pytest.mark.parametrize("ids_shape", [(3, 2), (4, 3)])
def test_embedding_lookup_higher_rank(params_shape, ids_shape):
    params = RNG.standard_normal(params_shape)
    ids = RNG.integers(0, params_shape[0], ids_shape)
    simple = NN.embedding_lookup(params, ids)
    np.testing.assert_array_equal(simple, naive_take(params, ids, 0))
    for procs in (1, 2, 3):
        stride = procs * np.arange(params_shape[0] // procs)
        split = [params[stride + p] for p in range(procs)]
        np.testing.assert_array_equal(NN.embedding_lookup(split, ids,
                                                          partition_strategy="mod"), simple)


# EmbeddingLookupTest.testHigherRankMaxNorm: embeddings of rank 0, 1, 2 and ids of rank 0..3,
# clipped to norm 1
@pytest.mark.parametrize("params_shape", [(12,), (6, 3), (6, 2, 3)])
@pytest.mark.parametrize("ids_shape", [(), (3,), (4, 3), (2, 3, 4)])
def test_embedding_lookup_higher_rank_max_norm(params_shape, ids_shape):
    params = 2 * np.ones(params_shape)
    axes = tuple(range(1, params.ndim))
    params_norm = params / np.sqrt(np.sum(params * params, axes, keepdims=True))
    ids = RNG.integers(0, params_shape[0], ids_shape)
    simple = NN.embedding_lookup(params, ids, max_norm=1.0)
    np.testing.assert_allclose(simple, naive_take(params_norm, ids, 0), rtol=1e-12)
    for procs in (1, 2, 3):
        stride = procs * np.arange(params_shape[0] // procs)
        split = [params[stride + p] for p in range(procs)]
        np.testing.assert_array_equal(
            NN.embedding_lookup(split, ids, max_norm=1.0, partition_strategy="mod"), simple)


# EmbeddingLookupSparseTest.testEmbeddingLookupSparse: 1 and 5 shards, every combiner, float16
# to float64, weighted or not, against _EmbeddingResult's sums
@pytest.mark.parametrize("num_shards", [1, 5])
@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_lookup_sparse(num_shards, combiner, dtype, weighted):
    vocab, batch = 13, 10
    per_row = RNG.integers(1, 6, batch)
    ids = RNG.integers(0, vocab, per_row.sum())
    weights = 1 + RNG.random(per_row.sum())
    indices = np.array([[r, k] for r, n in enumerate(per_row) for k in range(n)], np.int64)
    shards = tf_embedding_params(num_shards, vocab, [2, 5], dtype)
    sp_ids = ndx.SparseTensor(indices, ids.astype(np.int32), [batch, 6])
    sp_w = ndx.SparseTensor(indices, weights.astype(np.float32), [batch, 6]) if weighted \
        else None
    got = NN.embedding_lookup_sparse(shards, sp_ids, sp_w, combiner=combiner,
                                     partition_strategy="mod")
    assert got.dtype == np.dtype(dtype) and got.shape == (batch, 2, 5)
    w = weights.astype(np.float32).astype(np.float64) if weighted else np.ones(len(ids))
    want = np.zeros((batch, 2, 5))
    start = 0
    for r, n in enumerate(per_row):
        rows = [tf_row(shards, int(i), vocab, "mod").astype(np.float64) for i in
                ids[start:start + n]]
        ws = w[start:start + n]
        total = sum(wk * row for wk, row in zip(ws, rows))
        div = {"sum": 1.0, "mean": ws.sum(), "sqrtn": np.sqrt((ws ** 2).sum())}[combiner]
        want[r] = total / div
        start += n
    rtol = 1e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


# EmbeddingLookupSparseTest.testMissingInSparseIds: rows without ids are zero
@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_embedding_lookup_sparse_missing_rows(combiner):
    x = np.ones((4, 5), np.float32)
    sp_ids = ndx.SparseTensor([[1, 0], [3, 0]], np.array([0, 2], np.int32), [4, 1])
    sp_w = ndx.SparseTensor([[1, 0], [3, 0]], np.array([1, 1], np.float32), [4, 1])
    got = NN.embedding_lookup_sparse(x, sp_ids, sp_w, combiner=combiner)
    np.testing.assert_allclose(got, [np.zeros(5), np.ones(5), np.zeros(5), np.ones(5)])


# EmbeddingLookupSparseTest.testIncompatibleShapes: weights that do not match the ids
def test_embedding_lookup_sparse_incompatible_shapes():
    x = np.ones((10, 10), np.float32)
    sp_ids = ndx.SparseTensor([[0, 0], [0, 1], [1, 0]], np.array([0, 1, 2], np.int32), [2, 2])
    sp_w = ndx.SparseTensor([[0, 0], [0, 1]], np.array([12.0, 5.0], np.float32), [1, 2])
    refused(lambda: NN.embedding_lookup_sparse(x, sp_ids, sp_w, combiner="mean"), "embedding")


# SafeEmbeddingLookupSparseTest: _ids_and_weights_2d and _3d with TensorFlow's expected rows,
# 1 or 3 shards ("div", as tf.nn.safe_embedding_lookup_sparse's default)
IDS_2D = dict(indices=[[0, 0], [0, 1], [0, 2], [1, 0], [3, 0], [4, 0], [4, 1]], shape=[5, 4])
IDS_3D = dict(indices=[[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 1, 0], [1, 0, 0], [1, 1, 0],
                       [1, 1, 1]], shape=[2, 3, 4])
SAFE_IDS = [0, 1, -1, -1, 2, 0, 1]
SAFE_WEIGHTS = [1.0, 2.0, 1.0, 1.0, 3.0, 0.0, -0.5]


def safe_case(layout, weighted):
    ids = ndx.SparseTensor(np.array(layout["indices"], np.int64), np.array(SAFE_IDS, np.int64),
                           layout["shape"])
    w = ndx.SparseTensor(np.array(layout["indices"], np.int64),
                         np.array(SAFE_WEIGHTS, np.float32), layout["shape"]) if weighted \
        else None
    return ids, w


def random_weights(num_shards, vocab=4, dim=4):
    table = (RNG.standard_normal((vocab, dim)) / 2).astype(np.float32)
    bounds = np.cumsum([0] + [vocab // num_shards + (1 if i < vocab % num_shards else 0)
                              for i in range(num_shards)])
    return table, [table[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


@pytest.mark.parametrize("case", ["return_zero_vector", "return_special_vector", "no_weights",
                                  "partitioned", "3d_return_zero_vector",
                                  "3d_return_special_vector", "3d_no_weights",
                                  "3d_partitioned"])
def test_safe_embedding_lookup_sparse(case):
    three = case.startswith("3d")
    weighted = case.endswith("vector")
    table, shards = random_weights(3 if case.endswith("partitioned") else 1)
    ids, w = safe_case(IDS_3D if three else IDS_2D, weighted)
    default_id = 3 if "special" in case else None
    got = NN.safe_embedding_lookup_sparse(shards, ids, w, default_id=default_id)
    z = np.zeros(4) if default_id is None else table[3]
    weighted_mean = (1.0 * table[0] + 2.0 * table[1]) / 3.0
    mean = (table[0] + table[1]) / 2.0
    if not three:
        want = [weighted_mean if weighted else mean, z, z, table[2], z if weighted else mean]
    else:
        want = [[weighted_mean if weighted else mean, z, z],
                [table[2], z if weighted else mean, z]]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


# SafeEmbeddingLookupSparseTest.test_safe_embedding_lookup_sparse_partitioned_inconsistent_weights
# (and its 3-D twin): shards of two dtypes are refused
@pytest.mark.parametrize("layout", [IDS_2D, IDS_3D])
def test_safe_embedding_lookup_sparse_inconsistent_shards(layout):
    _, shards = random_weights(3)
    shards[1] = shards[1].astype(np.float64)
    ids, _ = safe_case(layout, False)
    refused(lambda: NN.safe_embedding_lookup_sparse(shards, ids), "safe_embedding_lookup_sparse",
            "float64", errors=TypeError)


# SafeEmbeddingLookupSparseTest.test_safe_embedding_lookup_sparse_partitioned_inconsistent_weights
# (its second half): tensors of float64 with float32 weights are refused (ValueError); arrays
# are converted to the weights' dtype, as TensorFlow converts them
def test_safe_embedding_lookup_sparse_table_takes_the_weights_dtype():
    table, shards = random_weights(3)
    ids, w = safe_case(IDS_2D, True)
    wide = [x.astype(np.float64) for x in shards]
    got = NN.safe_embedding_lookup_sparse(wide, ids, w)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, NN.safe_embedding_lookup_sparse(shards, ids, w))
    traced = ndx.function(lambda a, b, c: NN.safe_embedding_lookup_sparse([a, b, c], ids, w))
    refused(lambda: traced(*wide), "safe_embedding_lookup_sparse", "float32", "float64",
            errors=ValueError)
    v = ndx.Variable(table.astype(np.float64))
    refused(lambda: NN.safe_embedding_lookup_sparse(v, ids, w), "safe_embedding_lookup_sparse",
            "float64", errors=ValueError)
    np.testing.assert_array_equal(np.asarray(v), table.astype(np.float64))


# The bfloat16 rows of GatherTest._TEST_TYPES (testScalar1D, testSimpleTwoD32) and of the
# segment tests' dtypes (SegmentReductionOpTest.testValues, UnsortedSegmentTest.testValues,
# SparseSegmentReductionOpTest.testValues), through ndx.cast: bfloat16 holds these small
# integers exactly, and the sums (scaled as TensorFlow's _input scales bfloat16) to 1%.
# (float8_e5m2 and float8_e4m3fn, also in _TEST_TYPES, are dtypes ndx does not have.)
def test_bfloat16_gather_and_segments():
    data = np.arange(15, dtype=np.float64).reshape(5, 3)
    b = ndx.cast(data, "bfloat16")
    back = lambda t: np.asarray(ndx.cast(t, "float64"))  # noqa: E731
    for axis in (0, 1):
        np.testing.assert_array_equal(back(ndx.gather(b, [0, 1, 0, 2], axis=axis)),
                                      naive_take(data, [0, 1, 0, 2], axis))
    np.testing.assert_array_equal(back(ndx.gather(b, 4)), data[4])
    ids = [i // 3 for i in range(10)]
    x = tf_input((10, 3), "float64") * 0.00001
    xb = ndx.cast(x, "bfloat16")
    xr = back(xb)  # the values bfloat16 holds
    for op in SORTED_OPS:
        np.testing.assert_allclose(back(SORTED_OPS[op](xb, ids)), tf_segment_reduce(ids, xr, op),
                                   rtol=1e-2, err_msg=op)
    flat = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3])
    for op, (fn, init) in UNSORTED_OPS.items():
        if op in ("min", "max"):
            continue  # their empty segments hold bfloat16's extremes: checked in the C tests
        np.testing.assert_allclose(back(fn(xb, flat, 12)),
                                   tf_segment_reduce(flat, xr, op, 12, init(None)), rtol=1e-2,
                                   err_msg=op)
    indices = RNG.integers(0, 10, 6)
    seg = [0, 0, 1, 1, 1, 3]
    np.testing.assert_allclose(back(S.segment_sum(xb, indices, seg)),
                               tf_segment_reduce(seg, xr[indices], "sum"), rtol=1e-2)


# ============ the docstrings' examples (array_ops.py, math_ops.py, embedding_ops.py) ============

# array_ops.gather's docstring: a scalar index, an index matrix of strings, the result shapes,
# one slice of a random gather, batch_dims=1 and its manual loop, and batch_dims=-1
def test_gather_docstring_examples():
    params = np.array([b"p0", b"p1", b"p2", b"p3", b"p4", b"p5"])
    assert ndx.gather(params, 3) == b"p3"
    np.testing.assert_array_equal(ndx.gather(params, [[2, 0], [2, 5]]),
                                  [[b"p2", b"p0"], [b"p2", b"p5"]])
    params = np.array([[0, 1.0, 2.0], [10.0, 11.0, 12.0], [20.0, 21.0, 22.0],
                       [30.0, 31.0, 32.0]], np.float32)
    indices = np.array([[0, 2]], np.int32)
    assert ndx.gather(params, indices=indices, axis=0).shape == (1, 2, 3)
    assert ndx.gather(params, indices=indices, axis=1).shape == (4, 1, 2)
    params = RNG.standard_normal((5, 6, 7, 8)).astype(np.float32)
    indices = RNG.integers(0, 7, (10, 11)).astype(np.int32)
    result = ndx.gather(params, indices, axis=2)
    assert result.shape == (5, 6, 10, 11, 8)
    np.testing.assert_array_equal(result[:, :, 0, 1, :], params[:, :, indices[0, 1], :])
    params = np.array([[0, 0, 1, 0, 2], [3, 0, 0, 0, 4], [0, 5, 0, 6, 0]], np.int32)
    indices = np.array([[2, 4], [0, 4], [1, 3]], np.int32)
    want = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    np.testing.assert_array_equal(ndx.gather(params, indices, axis=1, batch_dims=1), want)
    np.testing.assert_array_equal(
        np.stack([ndx.gather(p, i, axis=0) for p, i in zip(params, indices)]), want)
    # "tf.gather(values, indices, batch_dims=-1)" with the indices of an argsort
    values = RNG.standard_normal((3, 5))
    order = np.argsort(values, axis=-1)
    np.testing.assert_array_equal(ndx.gather(values, order, batch_dims=-1),
                                  np.sort(values, axis=-1))


# math_ops.sparse_segment_sum's docstring: its five cases, the last equal to segment_sum
def test_sparse_segment_sum_docstring_examples():
    c = np.array([[1, 2, 3, 4], [-1, -2, -3, -4], [5, 6, 7, 8]], np.int32)
    np.testing.assert_array_equal(S.segment_sum(c, [0, 1], [0, 0]), [[0, 0, 0, 0]])
    np.testing.assert_array_equal(S.segment_sum(c, [0, 1], [0, 1]),
                                  [[1, 2, 3, 4], [-1, -2, -3, -4]])
    np.testing.assert_array_equal(S.segment_sum(c, [0, 1], [0, 2], num_segments=4),
                                  [[1, 2, 3, 4], [0, 0, 0, 0], [-1, -2, -3, -4], [0, 0, 0, 0]])
    np.testing.assert_array_equal(S.segment_sum(c, [0, 1, 2], [0, 0, 1]),
                                  [[0, 0, 0, 0], [5, 6, 7, 8]])
    np.testing.assert_array_equal(M.segment_sum(c, [0, 0, 1]), [[0, 0, 0, 0], [5, 6, 7, 8]])


# embedding_ops.embedding_lookup's docstring: a 5x2 table whole or in "div" shards of 2, 2, 1
# rows, ids [0, 3, 4]; and 13 ids over 5 shards split as [[0, 1, 2], [3, 4, 5], [6, 7, 8],
# [9, 10], [11, 12]]
def test_embedding_lookup_docstring_examples():
    table = np.array([[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]], np.int32)
    want = [[1, 2], [7, 8], [9, 10]]
    np.testing.assert_array_equal(NN.embedding_lookup(table, [0, 3, 4]), want)
    np.testing.assert_array_equal(NN.embedding_lookup([table[:2], table[2:4], table[4:]],
                                                      [0, 3, 4]), want)
    shards = [np.full((n, 1), k, np.int32) for k, n in enumerate([3, 3, 3, 2, 2])]
    got = NN.embedding_lookup(shards, np.arange(13))
    np.testing.assert_array_equal(got[:, 0], [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4])


# embedding_ops.safe_embedding_lookup_sparse's docstring: a 10x20 table, default_id 0, "mean"
def test_safe_embedding_lookup_sparse_docstring_example():
    params = RNG.standard_normal((10, 20))
    indices = [[0, 0], [0, 1], [1, 0], [2, 3]]
    ids = ndx.SparseTensor(indices, np.array([1, 3, -1, 1], np.int64), [3, 4])
    weights = ndx.SparseTensor(indices, np.array([2.0, 0.5, 1.0, 3.0]), [3, 4])
    got = NN.safe_embedding_lookup_sparse(params, ids, weights, combiner="mean", default_id=0)
    np.testing.assert_allclose(got, [(params[1] * 2.0 + params[3] * 0.5) / (2.0 + 0.5),
                                     (params[0] * 1.0) / 1.0, (params[1] * 3.0) / 3.0],
                               rtol=1e-12)

# ================================ the text form, every kind once =================================

def test_every_kind_through_the_text_form(tmp_path):
    """One traced graph holding every kind of the family (UniqueV2 has its own text graph
    above), saved, loaded back and run: the same text, and results equal to the loops'."""
    spec = [ndx.TensorSpec([None, 3], ndx.float64), ndx.TensorSpec([None], ndx.int32),
            ndx.TensorSpec([None], ndx.bool)]

    @ndx.function(input_signature=spec)
    def f(d, i, m):
        out = [ndx.gather(d, i, axis=0), ndx.one_hot(i, 4), ndx.unique(i).y,
               ndx.unique_with_counts(i).count, ndx.boolean_mask(d, m)]
        for op in ("sum", "prod", "min", "max", "mean", "sqrt_n"):
            out.append(getattr(M, "unsorted_segment_" + op)(d, i, 4))
        for op in ("sum", "prod", "min", "max", "mean"):
            out.append(getattr(M, "segment_" + op)(d, i))
        for op in ("sum", "mean", "sqrt_n"):
            out.append(getattr(S, "segment_" + op)(d, i, i))
            out.append(getattr(S, "segment_" + op)(d, i, i, num_segments=5))
        out.append(NN.embedding_bag(d, i, np.array([0, 2], np.int32), combiner="mean"))
        return out

    d = RNG.standard_normal((4, 3))
    i = np.array([0, 0, 1, 3], np.int32)
    m = np.array([True, False, True, True])
    path = tmp_path / "family.txt"
    f.get_concrete_function().graph.save(path)
    text = f.get_concrete_function().graph.to_text()
    loaded = ndx.load(path)
    assert loaded.graph.to_text() == text
    kinds = ["GatherV2", "OneHot", "Unique", "UniqueWithCounts", "BooleanMask", "EmbeddingBag"]
    kinds += ["UnsortedSegment" + k for k in ("Sum", "Prod", "Min", "Max", "Mean", "SqrtN")]
    kinds += ["Segment" + k for k in ("Sum", "Prod", "Min", "Max", "Mean")]
    kinds += ["SparseSegment" + k + w for k in ("Sum", "Mean", "SqrtN")
              for w in ("", "WithNumSegments")]
    for kind in kinds:
        assert f"= {kind}(" in text, kind
    # The nodes no other reads, in the order traced; of UniqueWithCounts its count (output 2).
    names = [n + ":2" if n == "UniqueWithCounts" else n for n in loaded.default_fetches]
    got = loaded(names, d=d, i=i, m=m)
    values = [got[name] for name in names]
    want = [naive_take(d, i, 0), naive_one_hot(i, 4, 1, 0, -1, np.float32), [0, 1, 3],
            [2, 1, 1], naive_mask(d, m, 0)]
    for op in ("sum", "prod", "min", "max", "mean", "sqrt_n"):
        info = np.finfo(np.float64)
        empty = {"prod": 1, "min": info.max, "max": info.min}.get(op, 0)
        want.append(tf_segment_reduce(i, d, op, 4, empty))
    for op in ("sum", "prod", "min", "max", "mean"):
        want.append(tf_segment_reduce(i, d, op, None, 1 if op == "prod" else 0))
    for op in ("sum", "mean", "sqrt_n"):
        want.append(tf_segment_reduce(i, d[i], op))
        want.append(tf_segment_reduce(i, d[i], op, 5))
    want.append(np.stack([d[i[:2]].mean(0), d[i[2:]].mean(0)]))
    assert len(values) == len(want)
    for k, (g, w) in enumerate(zip(values, want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=names[k])
