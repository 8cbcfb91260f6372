"""Tests of ndx.function's fast call path (_Session.call: arrays by position checked in C against
the trace's inputs, results as new arrays): it gives what NumPy computes for every kind of result,
hands every argument it does not take as it is to the general path (which converts, retraces or
raises as before), never returns memory the session reuses (a large result is the block its
node wrote, no longer the session's), keeps variables in sync, and holds up
under threads."""
import sys
import threading

import numpy as np
import pytest

import ndx


def replace_minus_one_reference(x):
    return np.where(x != -1, x + 1, x).astype(x.dtype)


def replace_minus_one(x):
    mask = ndx.cast(ndx.not_equal(x, -1.0), ndx.int32)
    data = ndx.dynamic_partition(x, mask, 2)
    data[1] = data[1] + 1.0
    where = ndx.dynamic_partition(ndx.range(ndx.shape(x)[0]), mask, 2)
    return ndx.dynamic_stitch(where, data)


def replace_minus_one_input(n, seed=0):
    rng = np.random.default_rng(seed)
    return np.where(rng.random(n) < 0.3, -1, rng.normal(size=n)).astype(np.float32)


def test_results_are_new_arrays_never_the_sessions_memory():
    f = ndx.function(replace_minus_one, input_signature=[ndx.TensorSpec([None], ndx.float32)])
    # (100,000: past the size a result is copied at under the GIL)
    xs = [replace_minus_one_input(n, n) for n in (6, 6, 1000, 100_000, 100_000, 6)]
    results = [f(x) for x in xs]
    assert f._fast is not None  # the calls took the fast path
    for x, r in zip(xs, results):  # each still holds its own call's values
        np.testing.assert_array_equal(r, replace_minus_one_reference(x))
        assert r.flags.writeable and r.flags.c_contiguous and r.dtype == np.float32
        assert not np.shares_memory(r, x)
    for a in results:
        assert sum(np.shares_memory(a, b) for b in results) == 1


def test_large_known_shape_results_are_the_blocks_the_nodes_wrote():
    """A result whose shape the trace knows and which is large is the block its node wrote
    (sparse.reshape allocates its indices and writes them in one pass): right, each call's its
    own (the session does not write it again), and a failed call in between changes none."""
    in_shape, out_shape = (300, 400), (1000, 120)
    rng = np.random.default_rng(7)
    new = np.array(out_shape, np.int64)

    @ndx.function
    def reshape(i, v, d):
        return ndx.sparse.reshape(ndx.SparseTensor(i, v, d), new).indices

    def call(flat, bad=False):
        idx = np.stack(np.unravel_index(flat, in_shape), axis=1).astype(np.int64)
        if bad:
            idx[-2, 1] = in_shape[1]
        return reshape(idx, np.ones(len(flat), np.float32), np.array(in_shape, np.int64))

    flats = [np.sort(rng.choice(120_000, 40_000, replace=False)) for _ in range(4)]
    results = []
    for k, flat in enumerate(flats):  # 640,000 bytes a result: past the size copied under the GIL
        results.append(call(flat))
        if k == 1:
            with pytest.raises(ndx.InvalidArgumentError, match="outside input_shape"):
                call(flat, bad=True)
    assert reshape._fast is not None
    for flat, r in zip(flats, results):
        np.testing.assert_array_equal(r, np.stack(np.unravel_index(flat, out_shape), axis=1))
        assert r.flags.writeable and r.flags.c_contiguous and r.dtype == np.int64
    for a in results:
        assert sum(np.shares_memory(a, b) for b in results) == 1


def test_known_shapes_structures_and_dtypes_of_results():
    @ndx.function
    def many(x, i):
        g = ndx.gather_nd(x, i)
        return {"g": g, "pair": (g * 2, ndx.cast(g, ndx.int64)), "none": None,
                "n": ndx.reduce_sum(x, 0)}

    x = np.arange(12, dtype=np.float64).reshape(4, 3)
    i = np.array([[3], [1]], np.int32)
    for _ in range(3):
        r = many(x, i)
        np.testing.assert_array_equal(r["g"], x[[3, 1]])
        np.testing.assert_array_equal(r["pair"][0], x[[3, 1]] * 2)
        assert r["pair"][1].dtype == np.int64 and r["none"] is None
        np.testing.assert_array_equal(r["n"], x.sum(0))
        assert isinstance(r["pair"], tuple) and list(r) == ["g", "pair", "none", "n"]
    assert many._fast is not None and many.experimental_get_tracing_count() == 1

    @ndx.function
    def strings_and_bfloat16(s, b):
        return ndx.gather_nd(s, np.array([[1], [0]], np.int32)), ndx.identity(b)

    s = np.array([b"ab", b"c"])
    b = ndx.BFloat16Array.from_bits(np.array([0x3F80, 0x4000], np.uint16))
    for _ in range(2):
        got_s, got_b = strings_and_bfloat16(s, b)
        assert got_s.tolist() == [b"c", b"ab"]
        assert isinstance(got_b, ndx.BFloat16Array) and got_b.bits.tolist() == [0x3F80, 0x4000]

    @ndx.function
    def sparse(x):
        return ndx.sparse.from_dense(x)

    d = np.array([[0, 2], [3, 0]], np.int32)
    for _ in range(2):
        st = sparse(d)
        np.testing.assert_array_equal(st.indices, [[0, 1], [1, 0]])
        np.testing.assert_array_equal(st.values, [2, 3])


class MyArray(np.ndarray):
    pass


def test_arguments_the_fast_path_does_not_take_go_the_general_way():
    f = ndx.function(replace_minus_one, input_signature=[ndx.TensorSpec([None], ndx.float32)])
    x = replace_minus_one_input(20)
    np.testing.assert_array_equal(f(x), replace_minus_one_reference(x))
    for arg in (x[::2], x[::-1], x.astype(">f4"), x.tolist(), x.view(MyArray),
                np.frombuffer(b"\0" + x.tobytes(), np.float32, offset=1)):  # (misaligned)
        ref = replace_minus_one_reference(np.asarray(arg, np.float32))
        np.testing.assert_array_equal(f(arg), ref)
    with pytest.raises(TypeError, match="float32"):
        f(x.astype(np.float64))
    with pytest.raises(ndx.InvalidArgumentError, match="shape"):
        f(x.reshape(4, 5))
    with pytest.raises(TypeError):
        f(x, x)
    np.testing.assert_array_equal(f(x[:0]), x[:0])  # no elements
    assert f.experimental_get_tracing_count() == 1


def test_retracing_defaults_and_python_values_with_the_fast_path():
    @ndx.function
    def scaled(x, k=2):
        return x * k

    a3, a4 = np.arange(3, dtype=np.int32), np.arange(4, dtype=np.int32)
    k3, k4 = np.array(3, np.int32), np.array(4, np.int32)
    np.testing.assert_array_equal(scaled(a3), a3 * 2)  # (k=2 baked in, one input)
    np.testing.assert_array_equal(scaled(a3, 5), a3 * 5)  # another value: another trace
    np.testing.assert_array_equal(scaled(a3, k3), a3 * 3)  # both arrays
    np.testing.assert_array_equal(scaled(a4, k4), a4 * 4)  # a new shape
    np.testing.assert_array_equal(scaled(a3.astype(np.int64), k4.astype(np.int64)), a3 * 4)
    traces = scaled.experimental_get_tracing_count()
    assert traces == 5
    for k in range(3):  # each case again: the fast path only takes its own trace's arrays
        np.testing.assert_array_equal(scaled(a3, k4), a3 * 4)
        np.testing.assert_array_equal(scaled(a3), a3 * 2)
        np.testing.assert_array_equal(scaled(a4, k3), a4 * 3)
        np.testing.assert_array_equal(scaled(a3, 5), a3 * 5)
        np.testing.assert_array_equal(scaled(a3, k3), a3 * 3)
        np.testing.assert_array_equal(scaled(a3.astype(np.int64), k3.astype(np.int64)), a3 * 3)
        np.testing.assert_array_equal(scaled(x=a3, k=k4), a3 * 4)
    assert scaled.experimental_get_tracing_count() == traces
    cf = scaled.get_concrete_function(a3, np.array(1, np.int32))
    np.testing.assert_array_equal(cf(a3, np.array(9, np.int32)), a3 * 9)
    with pytest.raises(TypeError, match="int32"):
        cf(a3.astype(np.float32), np.array(9, np.int32))


def test_threads_out_and_max_memory_take_the_general_path():
    f = ndx.function(replace_minus_one, input_signature=[ndx.TensorSpec([None], ndx.float32)])
    x = replace_minus_one_input(50)
    out = np.empty(50, np.float32)
    assert f(x, out=out) is out
    np.testing.assert_array_equal(out, replace_minus_one_reference(x))
    np.testing.assert_array_equal(f(x, threads=2), replace_minus_one_reference(x))
    with pytest.raises(ndx.OutOfMemoryError):
        f(replace_minus_one_input(100_000), max_memory=1000)
    np.testing.assert_array_equal(f(x), replace_minus_one_reference(x))


def test_errors_at_run_time_change_nothing():
    @ndx.function
    def gather(p, i):
        return ndx.gather_nd(p, i)

    p = np.arange(4, dtype=np.float32)
    good, bad = np.array([[1], [2]], np.int64), np.array([[1], [9]], np.int64)
    np.testing.assert_array_equal(gather(p, good), [1, 2])
    for _ in range(3):
        with pytest.raises(ndx.InvalidArgumentError, match="9"):
            gather(p, bad)
        np.testing.assert_array_equal(gather(p, good), [1, 2])


def test_variables_stay_in_sync_through_fast_calls():
    v = ndx.Variable(np.zeros(3, np.float32), name="acc")

    @ndx.function
    def add(x):
        v.assign_add(x)
        return v + 0.0  # (after the update: program order)

    @ndx.function
    def double(x):
        v.assign_add(ndx.identity(v) * x)
        return ndx.identity(v)

    one = np.ones(3, np.float32)
    expect = np.zeros(3, np.float32)
    for k in range(4):
        expect = expect + 1
        np.testing.assert_array_equal(add(one), expect)
        expect = expect * 2
        np.testing.assert_array_equal(double(np.full(3, 1.0, np.float32)), expect)
        np.testing.assert_array_equal(v.numpy(), expect)
        v.assign(v.numpy() - 1)
        expect = expect - 1
    with pytest.raises(ndx.InvalidArgumentError, match="float64"):
        add(one.astype(np.float64))  # (a new trace, which fails: nothing ran)
    np.testing.assert_array_equal(v.numpy(), expect)
    assert add._fast is not None and double._fast is not None


def test_many_threads_on_one_session_small_and_large_calls():
    f = ndx.function(replace_minus_one, input_signature=[ndx.TensorSpec([None], ndx.float32)])
    small, large = replace_minus_one_input(7, 1), replace_minus_one_input(300_000, 2)
    f(small)
    errors = []

    def worker(x, n):
        try:
            for _ in range(n):
                np.testing.assert_array_equal(f(x), replace_minus_one_reference(x))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(small, 300)) for _ in range(4)]
    threads += [threading.Thread(target=worker, args=(large, 5)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_reference_counts_stay_put():
    f = ndx.function(replace_minus_one, input_signature=[ndx.TensorSpec([None], ndx.float32)])
    x = replace_minus_one_input(10)
    f(x)
    before = sys.getrefcount(x)
    results = [f(x) for _ in range(100)]
    assert sys.getrefcount(x) == before
    assert all(sys.getrefcount(results[k]) == 2 for k in range(100))  # (the list's, the call's)
