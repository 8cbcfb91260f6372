"""Tests of the Python module ndx: TensorFlow's examples, properties against NumPy references
(tests/cli/clitest.py's plain loops, independent of ndx) for every op and dtype, the error
contract, zero copies, DLPack, threads and reference leaks. Run by scripts/test.sh with pytest."""
import gc
import os
import resource
import sys
import threading
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
import clitest as ref  # noqa: E402  (NumPy references shared with the command-line tests)

import ndx  # noqa: E402
from docstring_examples import check_docstring_examples  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
VALUE_DTYPES = ref.NUMERIC_DTYPES + ["S5", "U3"]
ARITH_DTYPES = [d for d in ref.NUMERIC_DTYPES if d != "bool"]
MINMAX_DTYPES = [d for d in ARITH_DTYPES if not d.startswith("complex")]


def expected_dtype(dtype):
    """What ndx returns for inputs of `dtype`: str arrays come back as bytes."""
    d = np.dtype(dtype)
    return np.dtype(f"S{d.itemsize // 4 * 4}") if d.kind == "U" else d


def as_bytes(a):
    a = np.asarray(a)
    if a.dtype.kind != "U":
        return a
    return np.char.encode(a, "utf-8") if a.size else a.astype("S1")  # (encode gives float64 here)


def assert_same(got, want):
    assert isinstance(got, np.ndarray), type(got)
    want = as_bytes(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "S":
        assert got.dtype.kind == "S"
        assert got.tolist() == want.tolist()
    else:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert ref.same(got, want), (got, want)


def snapshot(*arrays):
    return [np.array(a, copy=True) for a in arrays]


def assert_unchanged(before, arrays):
    for b, a in zip(before, arrays):
        assert ref.same(b, a) and b.dtype == np.asarray(a).dtype


# ---- TensorFlow's examples -----------------------------------------------------------------------

DOCUMENTED = [ndx.gather_nd, ndx.scatter_nd, ndx.tensor_scatter_nd_add, ndx.tensor_scatter_nd_sub,
              ndx.tensor_scatter_nd_update, ndx.tensor_scatter_nd_min, ndx.tensor_scatter_nd_max,
              ndx.dynamic_stitch, ndx.parallel_dynamic_stitch, ndx.dynamic_partition,
              ndx.SparseTensor, ndx.BFloat16Array, ndx.sparse_concat, ndx.sparse.concat,
              ndx.sparse.reorder, ndx.sparse.to_dense, ndx.sparse.from_dense]


@pytest.mark.parametrize("obj", DOCUMENTED, ids=lambda o: o.__name__)
def test_docstring_examples(obj):
    check_docstring_examples(obj)


P2 = [["a", "b"], ["c", "d"]]
P3 = [[["a0", "b0"], ["c0", "d0"]], [["a1", "b1"], ["c1", "d1"]]]
DOCUMENTED_GATHERS = [  # the GatherNd and tf.gather_nd pages: (indices, params, output)
    ([[0, 0], [1, 1]], P2, ["a", "d"]),
    ([[1], [0]], P2, [["c", "d"], ["a", "b"]]),
    ([[1]], P3, [[["a1", "b1"], ["c1", "d1"]]]),
    ([[0, 1], [1, 0]], P3, [["c0", "d0"], ["a1", "b1"]]),
    ([[0, 0, 1], [1, 0, 1]], P3, ["b0", "b1"]),
    ([[[0, 0]], [[0, 1]]], P2, [["a"], ["b"]]),
    ([[[1]], [[0]]], P2, [[["c", "d"]], [["a", "b"]]]),
    ([[[1]], [[0]]], P3, [[[["a1", "b1"], ["c1", "d1"]]], [[["a0", "b0"], ["c0", "d0"]]]]),
    ([[[0, 1], [1, 0]], [[0, 0], [1, 1]]], P3, [[["c0", "d0"], ["a1", "b1"]],
                                                [["a0", "b0"], ["c1", "d1"]]]),
    ([[[0, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 0]]], P3, [["b0", "b1"], ["d0", "c1"]]),
]


@pytest.mark.parametrize("indices,params,output", DOCUMENTED_GATHERS)
def test_documented_gathers_on_strings(indices, params, output):
    got = ndx.gather_nd(params, indices)  # str in, bytes out (as TensorFlow returns strings)
    assert got.dtype.kind == "S"
    assert got.tolist() == np.char.encode(np.array(output), "utf-8").tolist()
    as_objects = np.array(params, dtype=object)
    assert ndx.gather_nd(as_objects, np.array(indices, np.int64)).tolist() == got.tolist()


def test_gather_nd_arange_examples():
    x = np.arange(30).reshape(5, 6)
    r = ndx.gather_nd(x, [1, 2])
    assert isinstance(r, np.ndarray) and r.ndim == 0 and r == 8  # a 0-d array, not a scalar
    assert ndx.gather_nd(x, [[1, 2], [2, 3]]).tolist() == [8, 15]
    assert ndx.gather_nd(x, [[1], [2]]).tolist() == [list(range(6, 12)), list(range(12, 18))]
    y = np.arange(12).reshape(2, 3, 2)
    assert ndx.gather_nd(y, [[0, 0, 0], [1, 2, 1]]).tolist() == [0, 11]
    assert ndx.gather_nd(y, [[[0, 0], [0, 1]], [[1, 0], [1, 1]]]).tolist() == \
        [[[0, 1], [2, 3]], [[6, 7], [8, 9]]]
    assert ndx.gather_nd(y, [[0, 0], [0, 1], [1, 0], [1, 1]]).tolist() == \
        [[0, 1], [2, 3], [6, 7], [8, 9]]


def test_tensor_scatter_nd_add_slices_and_in_place():
    updates = np.array([[[5] * 4, [6] * 4, [7] * 4, [8] * 4]] * 2, dtype=np.int32)
    tensor = np.ones([4, 4, 4], dtype=np.int32)
    got = ndx.tensor_scatter_nd_add(tensor, [[0], [2]], updates)
    want = [[[6] * 4, [7] * 4, [8] * 4, [9] * 4], [[1] * 4] * 4,
            [[6] * 4, [7] * 4, [8] * 4, [9] * 4], [[1] * 4] * 4]
    assert got.tolist() == want and got.dtype == np.int32
    assert (tensor == 1).all()  # the input is not modified
    same = ndx.tensor_scatter_nd_add(tensor, [[0], [2]], updates, out=tensor)
    assert same is tensor and tensor.tolist() == want


def test_replace_minus_one_partition_then_stitch():
    x = np.array([0.1, -1., 5.2, 4.3, -1., 7.4], dtype=np.float32)
    mask = (x != np.float32(-1.)).astype(np.int32)
    parts = ndx.dynamic_partition(x, mask, 2)
    assert isinstance(parts, list) and len(parts) == 2
    parts[1] = parts[1] + np.float32(1.0)
    where = ndx.dynamic_partition(np.arange(6, dtype=np.int32), mask, 2)
    got = ndx.dynamic_stitch(where, parts)
    want = np.array([1.1, -1., 6.2, 5.3, -1., 8.4], dtype=np.float32)
    assert got.dtype == np.float32 and np.allclose(got, want)


def test_sparse_concat_expand_error_without_flag():
    a = ndx.SparseTensor([[0, 2], [1, 0], [2, 1]], ["a", "b", "c"], [3, 3])
    b = ndx.SparseTensor([[0, 1], [0, 2]], ["d", "e"], [2, 4])
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.sparse.concat(1, [a, b])
    c = ndx.sparse.concat(-1, [a, b], expand_nonconcat_dim=True)
    assert c.dense_shape.tolist() == [3, 7] and c.values.tolist() == [b"a", b"d", b"e", b"b", b"c"]


# ---- properties against NumPy references ---------------------------------------------------------

def rng_of(seed):
    return np.random.default_rng(seed)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from(VALUE_DTYPES),
       index_dtype=st.sampled_from(ref.INDEX_DTYPES), data=st.data())
def test_gather_nd_matches_reference(seed, dtype, index_dtype, data):
    rng = rng_of(seed)
    rank = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    batch_dims = data.draw(st.integers(0, rank - 1))
    depth = data.draw(st.integers(0, rank - batch_dims))
    if any(d == 0 for d in shape[batch_dims:batch_dims + depth]):
        depth = 0
    rows = tuple(data.draw(st.lists(st.integers(0, 3), min_size=0, max_size=2)))
    params = ref.random_array(rng, dtype, shape)
    high = list(shape[batch_dims:batch_dims + depth]) or [1]
    indices = ref.random_indices(rng, index_dtype, shape[:batch_dims] + rows + (depth,), high)
    before = snapshot(params, indices)
    if params.size == 0 and np.prod(indices.shape[:-1]) > 0:  # rows asked of an empty params
        with pytest.raises(ndx.InvalidArgumentError, match="empty"):
            ndx.gather_nd(params, indices, batch_dims=batch_dims)
        return
    got = ndx.gather_nd(params, indices, batch_dims=batch_dims)
    assert_unchanged(before, [params, indices])
    if depth == 0:  # every index row names all of params[b...]
        lead, rest = shape[:batch_dims], shape[batch_dims:]
        want = np.broadcast_to(params.reshape(lead + (1,) * len(rows) + rest), lead + rows + rest)
    else:
        want = ref.ref_gather_nd(params, indices, batch_dims)
    assert_same(got, want)
    assert not np.shares_memory(got, params)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), op=st.sampled_from(["update", "add", "sub", "min", "max"]),
       dtype=st.sampled_from(ref.NUMERIC_DTYPES), data=st.data())
def test_tensor_scatter_matches_reference(seed, op, dtype, data):
    if (op in ("add", "sub") and dtype == "bool") or (op in ("min", "max") and dtype not in MINMAX_DTYPES):
        with pytest.raises(TypeError):
            getattr(ndx, f"tensor_scatter_nd_{op}")(np.zeros(3, dtype), [[0]], np.zeros(1, dtype))
        return
    rng = rng_of(seed)
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    depth = data.draw(st.integers(1, rank))
    n = data.draw(st.integers(0, 6))
    tensor = ref.random_array(rng, dtype, shape)
    indices = ref.random_indices(rng, "int64", (n, depth), list(shape[:depth]))
    updates = ref.random_array(rng, dtype, (n,) + shape[depth:])
    before = snapshot(tensor, indices, updates)
    fn = getattr(ndx, f"tensor_scatter_nd_{op}")
    got = fn(tensor, indices, updates)
    assert_unchanged(before, [tensor, indices, updates])
    want = ref.ref_tensor_scatter(op, tensor, indices, updates)
    assert_same(got, want)
    target = np.array(tensor, copy=True)
    assert fn(target, indices, updates, out=target) is target
    assert_same(target, want)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from(VALUE_DTYPES), data=st.data())
def test_scatter_nd_matches_reference(seed, dtype, data):
    rng = rng_of(seed)
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    depth = data.draw(st.integers(1, rank))
    n = data.draw(st.integers(0, 6))
    indices = ref.random_indices(rng, "int32", (n, depth), list(shape[:depth]))
    updates = ref.random_array(rng, dtype, (n,) + shape[depth:])
    got = ndx.scatter_nd(indices, updates, list(shape))
    want = ref.ref_scatter_nd(indices, as_bytes(updates), shape)
    assert got.shape == want.shape and got.tolist() == want.tolist()
    if np.dtype(dtype).kind not in "SU":
        assert got.dtype == want.dtype


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from(VALUE_DTYPES), data=st.data())
def test_stitch_and_partition_match_reference(seed, dtype, data):
    rng = rng_of(seed)
    inner = tuple(data.draw(st.lists(st.integers(0, 3), min_size=0, max_size=2)))
    pieces = data.draw(st.integers(1, 3))
    size = data.draw(st.integers(0, 8))
    indices, chunks = [], []
    for _ in range(pieces):
        shape = tuple(data.draw(st.lists(st.integers(0, 3), min_size=0, max_size=2)))
        idx = ref.random_indices(rng, "int32", shape, max(size, 1))
        indices.append(idx)
        chunks.append(ref.random_array(rng, dtype, shape + inner))
    for fn in (ndx.dynamic_stitch, ndx.parallel_dynamic_stitch):
        assert_same(fn(indices, chunks), ref.ref_dynamic_stitch(indices, chunks))
    n = data.draw(st.integers(1, 4))
    pshape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=0, max_size=2)))
    values = ref.random_array(rng, dtype, pshape + inner)
    partitions = ref.random_indices(rng, "int64", pshape, n)
    got = ndx.dynamic_partition(values, partitions, n)
    want = ref.ref_dynamic_partition(values, partitions, n)
    assert isinstance(got, list) and len(got) == n
    for g, w in zip(got, want):
        assert_same(g, w)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from(VALUE_DTYPES), data=st.data())
def test_sparse_ops_match_reference(seed, dtype, data):
    rng = rng_of(seed)
    rank = data.draw(st.integers(1, 3))
    axis = data.draw(st.integers(-rank, rank - 1))
    expand = data.draw(st.booleans())
    inputs = []
    base = data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    for _ in range(data.draw(st.integers(1, 3))):
        shape = [d + (data.draw(st.integers(0, 2)) if expand or k == axis % rank else 0)
                 for k, d in enumerate(base)]
        dense = ref.random_array(rng, dtype, tuple(shape))
        dense[rng.random(dense.shape) < 0.5] = np.zeros((), dtype)
        sp = ndx.sparse.from_dense(dense)
        assert_same(ndx.sparse.to_dense(sp), dense)  # round trip
        perm = rng.permutation(sp.values.shape[0])
        shuffled = ndx.SparseTensor(sp.indices[perm], sp.values[perm], sp.dense_shape)
        back = ndx.sparse.reorder(shuffled)
        assert back.indices.tolist() == sp.indices.tolist()
        assert back.values.tolist() == sp.values.tolist()
        inputs.append(shuffled)
    got = ndx.sparse.concat(axis, inputs, expand_nonconcat_dim=expand)
    want = ref.ref_sparse_concat_dense(
        [(s.indices, s.values, s.dense_shape) for s in inputs], axis, expand)
    assert_same(ndx.sparse.to_dense(got), want)
    assert got.indices.tolist() == sorted(got.indices.tolist())


def test_bfloat16_round_trip_and_ops():
    values = np.array([1.5, -2.0, 3.0, 0.0, 65280.0], dtype=np.float32)
    x = ndx.bfloat16(values)
    assert x.bits.dtype == np.uint16 and (x.to_float32() == values).all()
    assert ndx.bfloat16([1.00390625]).bits.tolist() == [0x3F80]  # ties round to even
    assert ndx.bfloat16([1.01171875]).bits.tolist() == [0x3F82]
    got = ndx.gather_nd(x, [[4], [0]])
    assert isinstance(got, ndx.BFloat16Array) and got.to_float32().tolist() == [65280.0, 1.5]
    summed = ndx.tensor_scatter_nd_add(x, [[0], [0]], [0.5, 0.5])  # the list takes bfloat16
    assert summed.to_float32().tolist()[0] == 2.5
    stitched = ndx.dynamic_stitch([[1], [0]], [ndx.bfloat16([7.0]), ndx.bfloat16([8.0])])
    assert stitched.to_float32().tolist() == [8.0, 7.0]
    before = x.bits.copy()
    assert ndx.tensor_scatter_nd_max(x, [[3]], ndx.bfloat16([9.0]), out=x) is x
    assert x.to_float32()[3] == 9.0 and (x.bits[:3] == before[:3]).all()


def test_list_arguments_take_the_other_arrays_dtype():
    t = np.zeros(4, np.float64)
    assert ndx.tensor_scatter_nd_add(t, [[1]], [2]).dtype == np.float64
    assert ndx.tensor_scatter_nd_add([0.0, 0.0], [[1]], np.array([2], np.int8)).dtype == np.int8 \
        if False else True  # (a float list beside int8 updates is refused below)
    with pytest.raises(TypeError):
        ndx.tensor_scatter_nd_add([0.5, 0.0], [[1]], np.array([2], np.int8))
    assert ndx.tensor_scatter_nd_add([1, 2], [[1]], [5]).dtype == np.int32  # TensorFlow's default
    assert ndx.tensor_scatter_nd_add([1.0, 2.0], [[1]], [5.0]).dtype == np.float32
    assert ndx.dynamic_stitch([[0], [1]], [np.array([1], np.uint8), [2]]).dtype == np.uint8


# ---- errors: the right exception, nothing changed ----------------------------------------------

def test_bad_index_raises_and_changes_nothing():
    tensor = np.arange(8, dtype=np.float32)
    before = tensor.copy()
    with pytest.raises(ndx.InvalidArgumentError, match=r"out of range|outside") as info:
        ndx.tensor_scatter_nd_add(tensor, [[1], [9]], [1.0, 2.0], out=tensor)
    assert isinstance(info.value, ValueError)
    assert "tensor_scatter_nd_add" in str(info.value)
    assert (tensor == before).all()
    other = np.full(8, 7.0, np.float32)
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.tensor_scatter_nd_update(tensor, [[-1]], [1.0], out=other)
    assert (other == 7.0).all()
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.gather_nd(np.arange(4), [[4]])
    assert ndx.gather_nd(np.arange(4), [[4], [1]], bad_indices="ignore").tolist() == [0, 1]
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.dynamic_partition(np.arange(3), [0, 2, 1], 2)
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.dynamic_stitch([[0, -1]], [[1, 2]])


def test_shape_mismatch_raises():
    with pytest.raises(ndx.InvalidArgumentError, match="updates"):
        ndx.tensor_scatter_nd_add(np.zeros((4, 3)), [[0]], np.zeros((1, 2)))
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.gather_nd(np.zeros((2, 2)), [[0, 0, 0]])
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.dynamic_stitch([[0, 1]], [[1, 2, 3]])
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.dynamic_stitch([[0]], [])
    out = np.zeros(5)
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.tensor_scatter_nd_add(np.zeros(4), [[0]], [1.0], out=out)
    assert (out == 0).all()


def test_wrong_dtypes_and_kinds_raise_type_error():
    with pytest.raises(TypeError, match="indices"):
        ndx.gather_nd(np.arange(4), np.array([[1.0]]))  # float indices, as TensorFlow refuses
    with pytest.raises(TypeError):
        ndx.gather_nd(np.arange(4), np.array([[1]], np.uint8))
    with pytest.raises(TypeError):
        ndx.tensor_scatter_nd_min(np.zeros(2, np.complex64), [[0]], np.ones(1, np.complex64))
    with pytest.raises(TypeError):
        ndx.gather_nd({"a": 1}, [[0]])
    with pytest.raises(TypeError):
        ndx.dynamic_stitch(np.array([0]), [np.array([1])])  # indices must be a list
    with pytest.raises(TypeError):
        ndx.gather_nd(np.arange(4), [[0]], batch_dims=0.5)
    with pytest.raises(TypeError):
        ndx.sparse.concat(0, [np.zeros(2)])
    with pytest.raises(TypeError):
        ndx.tensor_scatter_nd_add(np.zeros(2), [[0]], [1.0], out=[0.0, 0.0])
    with pytest.raises(ValueError):
        ndx.gather_nd(np.arange(4), [[0]], bad_indices="skip")
    with pytest.raises(TypeError):
        ndx.gather_nd(np.arange(4, dtype=np.longdouble), [[0]])


def test_memory_budget_raises_memory_error():
    with pytest.raises(MemoryError) as info:
        ndx.gather_nd(np.zeros((1000, 100)), np.zeros((1000, 1), np.int32), max_memory=1024)
    assert isinstance(info.value, ndx.OutOfMemoryError)


def test_out_sharing_memory_or_strided_is_written_right():
    # An out that overlaps an input it is not, or that cannot be written in place, receives the
    # result through a scratch copy: right, not refused, not dropped.
    t = np.arange(6.0)
    want = ref.ref_tensor_scatter("add", t, np.array([[0]]), t[:1].copy())
    assert ndx.tensor_scatter_nd_add(t, [[0]], t[:1], out=t) is t
    assert (t == want).all()
    base = np.zeros(8)
    strided = base[::2]
    tensor = np.arange(4.0)
    assert ndx.tensor_scatter_nd_add(tensor, [[1]], [5.0], out=strided) is strided
    assert strided.tolist() == [0.0, 6.0, 2.0, 3.0] and (base[1::2] == 0).all()
    swapped = np.zeros(4, ">f8")
    ndx.tensor_scatter_nd_add(tensor, [[1]], [5.0], out=swapped)
    assert swapped.tolist() == [0.0, 6.0, 2.0, 3.0]


# ---- zero copies, DLPack, layouts ---------------------------------------------------------------

def test_large_contiguous_inputs_are_not_copied():
    params = np.ones((1 << 20, 16), np.float32)  # 64 MiB
    indices = np.array([[5], [7]], np.int64)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        ndx.gather_nd(params, indices)
        in_place_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        ndx.gather_nd(params[:, ::2], indices)  # not contiguous: converted once
        copied_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert in_place_peak < 1 << 20, in_place_peak
    assert copied_peak >= params.nbytes // 2  # the check can see a copy when there is one


def test_large_results_are_kept_until_released():
    ndx.release_memory()
    params = np.arange(1 << 20, dtype=np.float32).reshape(-1, 1)
    rows = np.arange((1 << 20) - 1, -1, -1).reshape(-1, 1)
    first = ndx.gather_nd(params, rows)  # a 4 MiB result
    address = first.__array_interface__["data"][0]
    del first
    gc.collect()
    again = ndx.gather_nd(params, rows)  # the kept block, written again in full
    assert again.__array_interface__["data"][0] == address
    assert (again[:, 0] == params[::-1, 0]).all()
    del again
    gc.collect()
    assert ndx.release_memory() >= 4 << 20
    assert ndx.release_memory() == 0


def test_results_never_share_memory_with_inputs():
    x = np.arange(12).reshape(3, 4)
    r = ndx.gather_nd(x, [[0], [1], [2]])
    assert (r == x).all() and not np.shares_memory(r, x)
    r = ndx.tensor_scatter_nd_update(x, np.zeros((0, 1), np.int32), np.zeros((0, 4), x.dtype))
    assert (r == x).all() and not np.shares_memory(r, x)


def test_other_layouts_and_protocols():
    x = np.arange(24, dtype=np.int32).reshape(4, 6)
    want = ref.ref_gather_nd(x, np.array([[1, 2], [3, 5]]))
    assert_same(ndx.gather_nd(np.asfortranarray(x), [[1, 2], [3, 5]]), want)
    assert_same(ndx.gather_nd(x.byteswap().view(x.dtype.newbyteorder()), [[1, 2], [3, 5]]), want)
    assert_same(ndx.gather_nd(memoryview(x), [[1, 2], [3, 5]]), want)

    class Iface:
        __array_interface__ = x.__array_interface__
    assert_same(ndx.gather_nd(Iface(), [[1, 2], [3, 5]]), want)
    with pytest.raises(ndx.InvalidArgumentError, match="scalar"):
        ndx.gather_nd(np.array(5), np.zeros((0,), np.int32))  # TensorFlow: params at least a vector


def test_dlpack_with_pytorch():
    torch = pytest.importorskip("torch", reason="PyTorch (Debian's python3-torch) not installed")
    params = torch.arange(20, dtype=torch.float32).reshape(5, 4)
    indices = torch.tensor([[4], [0]])
    got = ndx.gather_nd(params, indices)
    assert isinstance(got, np.ndarray)
    assert got.tolist() == params.numpy()[[4, 0]].tolist()
    t = torch.zeros(5)
    assert ndx.tensor_scatter_nd_add(t, torch.tensor([[1], [1]]), torch.tensor([1.0, 2.0])).tolist() \
        == [0, 3, 0, 0, 0]


# ---- threads and leaks --------------------------------------------------------------------------

def test_threads_give_serial_results():
    rng = rng_of(7)
    params = rng.standard_normal((20000, 8)).astype(np.float32)
    jobs = [rng.integers(0, 20000, (5000, 1)) for _ in range(16)]
    serial = [ndx.gather_nd(params, j) for j in jobs]
    results = [None] * len(jobs)

    def work(k):
        for _ in range(5):
            results[k] = ndx.gather_nd(params, jobs[k], threads=1)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(serial, results):
        assert (a == b).all()


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def test_reference_counts_do_not_leak():
    params = np.arange(64, dtype=np.float32).reshape(16, 4)
    indices = np.array([[1], [3]], np.int32)
    tensor = np.zeros(16)
    sp = ndx.SparseTensor([[0], [3]], [1.0, 2.0], [5])

    def calls(n):
        for _ in range(n):
            ndx.gather_nd(params, indices)
            ndx.tensor_scatter_nd_add(tensor, [[1]], [1.0])
            ndx.dynamic_partition(params, np.zeros(16, np.int32), 2)
            ndx.dynamic_stitch([[0], [1]], [params[:1], params[1:2]])
            ndx.sparse.to_dense(sp)
            try:
                ndx.gather_nd(params, [[99]])
            except ndx.InvalidArgumentError:
                pass

    refs = [sys.getrefcount(o) for o in (params, indices, tensor)]
    calls(20000)
    gc.collect()
    start = rss_kib()
    calls(100000)
    gc.collect()
    grown = rss_kib() - start
    assert [sys.getrefcount(o) for o in (params, indices, tensor)] == refs
    assert grown < 4096, f"RSS grew by {grown} KiB over 100,000 rounds of calls"


def test_stubs_cover_the_public_names():
    import ast
    here = os.path.dirname(ndx.__file__)
    with open(os.path.join(here, "__init__.pyi")) as f:
        stub = ast.parse(f.read())
    declared = {n.name for n in ast.walk(stub) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared |= {a.asname for n in ast.walk(stub) if isinstance(n, ast.ImportFrom) for a in n.names}
    declared |= {n.target.id for n in stub.body if isinstance(n, ast.AnnAssign)}  # the dtypes
    assert set(ndx.__all__) <= declared, set(ndx.__all__) - declared
    assert os.path.exists(os.path.join(here, "py.typed"))


def stub_functions(stub_name):
    """The top-level functions a stub file declares, by name."""
    import ast
    with open(os.path.join(os.path.dirname(ndx.__file__), stub_name)) as f:
        tree = ast.parse(f.read())
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def stub_parameters(fn):
    """(name, kind, default) of a stub function's parameters, as inspect names kinds."""
    import ast
    import inspect
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for k, (arg, d) in enumerate(zip(positional, defaults)):
        kind = inspect.Parameter.POSITIONAL_ONLY if k < len(a.posonlyargs) else \
            inspect.Parameter.POSITIONAL_OR_KEYWORD
        out.append((arg.arg, kind, inspect.Parameter.empty if d is None else ast.literal_eval(d)))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, inspect.Parameter.KEYWORD_ONLY,
                    inspect.Parameter.empty if d is None else ast.literal_eval(d)))
    return out


def test_stubs_match_the_runtime_signatures():
    # The signatures are written once, in Python; each function's stub (in the .pyi of the
    # module that defines it) must give the same names, kinds and defaults, so they cannot drift.
    import inspect
    checked = 0
    for module in (ndx, ndx.sparse):
        for name in module.__all__:
            obj = getattr(module, name)
            if not callable(obj) or isinstance(obj, type):
                continue
            home = obj.__module__.rpartition(".")[2]
            declared = stub_functions("__init__.pyi" if home in ("ndx", "_ndx") else home + ".pyi")
            assert name in declared, f"{obj.__module__}.{name} has no stub"
            runtime = [(p.name, p.kind, p.default)
                       for p in inspect.signature(obj).parameters.values()]
            assert runtime == stub_parameters(declared[name]), name
            checked += 1
    assert checked >= 17


# ---- the eager entry points: builtins that bind their arguments in C ----------------------------

PUBLIC_DENSE = ["gather_nd", "scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
                "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max",
                "dynamic_stitch", "parallel_dynamic_stitch", "dynamic_partition"]


@pytest.mark.parametrize("name", PUBLIC_DENSE)
def test_dense_ops_look_like_plain_functions(name):
    import pickle
    fn = getattr(ndx, name)
    assert fn.__name__ == name and fn.__module__ == "ndx._dense"
    assert repr(fn) == f"<built-in function {name}>"
    assert pickle.loads(pickle.dumps(fn)) is fn
    assert "name=None" in str(inspect_signature(fn))


def inspect_signature(fn):
    import inspect
    return inspect.signature(fn)


def test_arguments_bind_as_in_python():
    params = np.arange(12, dtype=np.int32).reshape(3, 4)
    want = params[[2, 0]]
    # by position, by keyword in any order, with name= and ndx's keywords
    for got in (ndx.gather_nd(params, [[2], [0]]),
                ndx.gather_nd(indices=[[2], [0]], params=params),
                ndx.gather_nd(params, [[2], [0]], 0, "g", threads=1, bad_indices="error"),
                ndx.gather_nd(params, indices=np.array([[2], [0]]), max_memory=1 << 20),
                ndx.gather_nd(*[params, [[2], [0]]], **{"batch_dims": 0, "name": None})):
        np.testing.assert_array_equal(got, want)
    # what does not bind raises Python's own TypeError
    cases = [((params,), {}, "missing 1 required positional argument: 'indices'"),
             ((params, [[0]], 0, None, "error"), {}, "takes from 2 to 4 positional arguments"),
             ((params, [[0]]), {"params": params}, "multiple values for argument 'params'"),
             ((params, [[0]]), {"threds": 1}, "unexpected keyword argument 'threds'"),
             ((), {"indices": [[0]]}, "missing 1 required positional argument: 'params'")]
    for args, kwargs, message in cases:
        with pytest.raises(TypeError, match=message):
            ndx.gather_nd(*args, **kwargs)
    with pytest.raises(TypeError, match="multiple values for argument 'data'"):
        ndx.dynamic_stitch([[0]], [[1]], data=[[1]])
    # keywords given as strings built at run time (not interned) bind too
    key = "".join(["bad_", "indices"])
    np.testing.assert_array_equal(ndx.gather_nd(params, [[5]], **{key: "zero"}), [[0] * 4])


def test_small_tensor_scatter_results_are_new_arrays():
    tensor = np.arange(8, dtype=np.float64)
    before = tensor.copy()
    out = ndx.tensor_scatter_nd_add(tensor, [[1], [1]], [1.0, 2.0])
    np.testing.assert_array_equal(out, before + np.eye(8)[1] * 3)
    np.testing.assert_array_equal(tensor, before)
    assert out.flags.owndata and out.flags.writeable and not np.shares_memory(out, tensor)
    s = ndx.tensor_scatter_nd_update(np.array([b"a", b"bb"]), [[0]], np.array([b"ccc"]))
    assert s.dtype == np.dtype("S3") and list(s) == [b"ccc", b"bb"]
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.tensor_scatter_nd_add(tensor, [[8]], [1.0])
    np.testing.assert_array_equal(tensor, before)


def test_stitch_lists_of_arrays_take_the_general_path_when_they_must():
    i0, i1 = np.array([0, 2], np.int32), np.array([1], np.int64)
    d0, d1 = np.array([1.0, 3.0], np.float32), np.array([2.0], np.float32)
    np.testing.assert_array_equal(ndx.dynamic_stitch((i0, i1), (d0, d1)), [1.0, 2.0, 3.0])
    # a strided array among them is copied once; a list item beside arrays takes their dtype
    strided = np.array([1.0, 9.0, 3.0, 9.0], np.float32)[::2]
    got = ndx.dynamic_stitch([i0, i1], [strided, [2.0]])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"dynamic_stitch: indices\[1\] must be int16, int32 or "
                                        r"int64, not float64"):
        ndx.dynamic_stitch([i0, np.array([1.0])], [d0, d1])
    with pytest.raises(ndx.InvalidArgumentError):  # data of two dtypes
        ndx.dynamic_stitch([i0, i1], [d0, np.array([2.0])])


def test_small_gather_result_is_its_own_array():
    # Small results are NumPy arrays the library writes into: fresh, owning their memory, zeros
    # where an ignored row was, strings at the params' width; errors leave nothing behind.
    params = np.arange(12, dtype=np.float32).reshape(4, 3)
    a = ndx.gather_nd(params, np.array([[3], [9], [0]], np.int64), bad_indices="ignore")
    assert a.flags.owndata and a.flags.writeable and a.flags.c_contiguous
    assert a.tolist() == [[9, 10, 11], [0, 0, 0], [0, 1, 2]]
    b = ndx.gather_nd(params, np.array([[3], [0]], np.int64))
    assert b.tolist() == [[9, 10, 11], [0, 1, 2]] and not np.shares_memory(a, b)
    words = np.array([b"a", b"bcd", b"ef"])
    s = ndx.gather_nd(words, [[2], [1]])
    assert s.dtype == words.dtype and s.tolist() == [b"ef", b"bcd"]
    batched = ndx.gather_nd(params.reshape(2, 2, 3), np.array([[[1]], [[0]]]), batch_dims=1)
    assert batched.tolist() == [[[3, 4, 5]], [[6, 7, 8]]]
    with pytest.raises(ndx.InvalidArgumentError, match="out of range"):
        ndx.gather_nd(params, np.array([[3], [9]], np.int64))
    with pytest.raises(ndx.InvalidArgumentError):  # batch dims that differ
        ndx.gather_nd(params.reshape(2, 2, 3), np.zeros((3, 1, 1), np.int64), batch_dims=1)
