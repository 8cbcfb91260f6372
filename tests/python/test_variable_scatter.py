"""The row scatters of ndx.Variable (scatter_add .. scatter_update, TensorFlow 1's
ndx.scatter_add ..) against NumPy loops, eagerly and inside ndx.function, TensorFlow's
documented cases, refused calls that change nothing; Variable.sparse_read (ResourceGather):
eager, traced, in program order, its gradient (an IndexedSlices, against central differences)
and an embedding trained through it reaching the same values as through a gather of the read
value."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples

RNG = np.random.default_rng(41)
OPS = ("add", "sub", "mul", "div", "min", "max", "update")
REAL = ("int8", "int32", "int64", "uint8", "uint32", "float16", "float32", "float64")
COMPLEX = ("complex64", "complex128")


# ---- the reference: a NumPy loop, one index after another ---------------------------------------

def truncating_div(c, u):
    """C's integer division (TensorFlow's): the quotient rounded toward zero."""
    if c.dtype.kind == "u":
        return c // u
    q = np.abs(c) // np.abs(u)
    return np.where((c < 0) != (u < 0), -q, q).astype(c.dtype)


def combine(op, c, u):
    with np.errstate(all="ignore"):
        if op == "add":
            return c + u
        if op == "sub":
            return c - u
        if op == "mul":
            return c * u
        if op == "div":
            return truncating_div(c, u) if c.dtype.kind in "iu" else c / u
        if op == "min":
            return np.where(u < c, u, c)
        if op == "max":
            return np.where(c < u, u, c)
        return np.broadcast_to(u, c.shape).copy()


def scatter_loop(op, var, indices, updates):
    out = var.copy()
    flat = np.asarray(indices).reshape(-1)
    updates = np.asarray(updates, var.dtype)
    rows = updates.reshape((len(flat),) + var.shape[1:]) if updates.ndim else None
    for i, r in enumerate(flat):
        u = updates if rows is None else rows[i]
        out[r] = combine(op, out[r], u).astype(var.dtype)
    return out


def random_case(dtype, op, scalar, index_dtype=np.int32):
    dt = np.dtype(dtype)
    var = RNG.integers(-20, 21, (6, 3)).astype(dt) if dt.kind in "iuf" else \
        (RNG.integers(-20, 21, (6, 3)) + 1j * RNG.integers(-9, 10, (6, 3))).astype(dt)
    if dt.kind == "u":
        var = RNG.integers(0, 41, (6, 3)).astype(dt)
    indices = RNG.integers(0, 6, (2, 3)).astype(index_dtype)
    indices[1, 1] = indices[0, 0]  # a duplicate for sure
    shape = () if scalar else (2, 3, 3)
    updates = RNG.integers(1, 5, shape).astype(dt) if dt.kind in "iu" else \
        RNG.integers(-20, 21, shape).astype(dt)
    if op == "div" and dt.kind in "fc":
        updates[updates == 0] = 3
    return var, indices, updates


def check_same(op, got, want):
    if got.dtype.kind == "c" and op == "div":  # C's complex division vs NumPy's: last bits
        np.testing.assert_allclose(got, want, rtol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", REAL + COMPLEX)
@pytest.mark.parametrize("scalar", [False, True])
def test_eager_scatter_matches_loop(op, dtype, scalar):
    if op in ("min", "max") and dtype in COMPLEX:
        pytest.skip("min and max take real numbers")
    var, indices, updates = random_case(dtype, op, scalar)
    want = scatter_loop(op, var, indices, updates)
    v = ndx.Variable(var)
    assert getattr(v, "scatter_" + op)(ndx.IndexedSlices(updates, indices)) is v
    check_same(op, v.numpy(), want)
    w = ndx.Variable(var)
    assert getattr(ndx, "scatter_" + op)(w, indices.astype(np.int64), updates) is w
    check_same(op, w.numpy(), want)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["int32", "float16", "float64", "complex64"])
def test_traced_scatter_matches_loop_in_program_order(op, dtype):
    if op in ("min", "max") and dtype in COMPLEX:
        pytest.skip("min and max take real numbers")
    var, indices, updates = random_case(dtype, op, False)
    v = ndx.Variable(var)

    @ndx.function
    def step(i, u):
        before = v.read_value() * 1
        getattr(v, "scatter_" + op)(ndx.IndexedSlices(u, i))
        return before, v.read_value()

    once = scatter_loop(op, var, indices, updates)
    before, after = step(indices, updates)
    np.testing.assert_array_equal(before, var)
    check_same(op, after, once)
    check_same(op, v.numpy(), once)
    step(indices, updates)  # the update persists and applies again
    check_same(op, v.numpy(), scatter_loop(op, once, indices, updates))


def test_bool_and_wrapping_integers():
    b = ndx.Variable([True, False, True])
    b.scatter_update(ndx.IndexedSlices([True, False], [1, 2]))
    np.testing.assert_array_equal(b.numpy(), [True, True, False])
    u = ndx.Variable(np.array([2**64 - 1, 5], np.uint64))
    u.scatter_add(ndx.IndexedSlices(np.uint64([1]), [0]))  # wraps
    np.testing.assert_array_equal(u.numpy(), np.array([0, 5], np.uint64))
    i8 = ndx.Variable(np.array([-128, 7], np.int8))
    i8.scatter_div(ndx.IndexedSlices(np.int8([-1, -2]), [0, 1]))  # -128 / -1 wraps
    np.testing.assert_array_equal(i8.numpy(), np.array([-128, -3], np.int8))


# ---- TensorFlow's documented cases --------------------------------------------------------------

def test_tensorflow_documented_cases():
    """ResourceScatterUpdate's documentation: ref[indices, ...] = updates[...] for scalar
    indices, ref[indices[i], ...] = updates[i, ...] for a vector, and
    ref[indices[i, ..., j], ...] = updates[i, ..., j, ...] for higher ranks."""
    ref = np.arange(12, dtype=np.float32).reshape(4, 3)
    v = ndx.Variable(ref)
    v.scatter_update(ndx.IndexedSlices(np.float32([7, 8, 9]), 2))
    want = ref.copy()
    want[2] = [7, 8, 9]
    np.testing.assert_array_equal(v.numpy(), want)
    v.scatter_add(ndx.IndexedSlices(np.ones((2, 3), np.float32), [0, 0]))
    want[0] += 2
    np.testing.assert_array_equal(v.numpy(), want)
    v.scatter_max(ndx.IndexedSlices(np.full((2, 2, 3), 5, np.float32), [[1, 3], [3, 1]]))
    want[[1, 3]] = np.maximum(want[[1, 3]], 5)
    np.testing.assert_array_equal(v.numpy(), want)


def test_duplicates_update_last_wins_add_sums():
    v = ndx.Variable([0, 0, 0])
    ndx.scatter_update(v, [1, 1, 1], [4, 5, 6])
    ndx.scatter_add(v, [2, 2, 2], [4, 5, 6])
    np.testing.assert_array_equal(v.numpy(), [0, 6, 15])


@pytest.mark.parametrize("fn", [ndx.scatter_add, ndx.scatter_sub, ndx.scatter_update,
                                ndx.Variable.scatter_add, ndx.Variable.scatter_update,
                                ndx.Variable.sparse_read])
def test_docstring_examples(fn):
    check_docstring_examples(fn)


# ---- refusals: nothing changes ------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_index_out_of_range_changes_nothing_eager(op):
    v = ndx.Variable(np.arange(10, dtype=np.float32).reshape(5, 2))
    with pytest.raises(ndx.InvalidArgumentError,
                       match=rf"ResourceScatter{op.capitalize()}: indices\[1\] = 9 is not in "
                             rf"\[0, 5\)"):
        getattr(v, "scatter_" + op)(ndx.IndexedSlices(np.ones((3, 2), np.float32), [0, 9, 2]))
    np.testing.assert_array_equal(v.numpy(), np.arange(10, dtype=np.float32).reshape(5, 2))


def test_failed_traced_call_changes_nothing():
    v = ndx.Variable(np.arange(10, dtype=np.float32).reshape(5, 2))
    w = ndx.Variable(np.zeros(3, np.float32))

    @ndx.function
    def step(i):
        w.assign_add(np.float32([1, 1, 1]))
        v.scatter_add(ndx.IndexedSlices(np.float32([[1, 1], [2, 2]]), i))
        return v.sparse_read(i)

    with pytest.raises(ndx.InvalidArgumentError, match=r"indices\[1\] = -1 is not in \[0, 5\)"):
        step(np.int32([0, -1]))
    np.testing.assert_array_equal(v.numpy(), np.arange(10, dtype=np.float32).reshape(5, 2))
    np.testing.assert_array_equal(w.numpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(step(np.int32([4, 4])), [[11, 12], [11, 12]])


def test_integer_division_by_zero_changes_nothing():
    v = ndx.Variable([8, 9, 10])
    with pytest.raises(ndx.InvalidArgumentError,
                       match=r"ResourceScatterDiv: integer division by zero: updates\[1\] = 0"):
        v.scatter_div(ndx.IndexedSlices([2, 0], [0, 1]))
    np.testing.assert_array_equal(v.numpy(), [8, 9, 10])
    f = ndx.Variable([1.0, -1.0])
    f.scatter_div(ndx.IndexedSlices([0.0, 0.0], [0, 1]))
    assert np.isposinf(f.numpy()[0]) and np.isneginf(f.numpy()[1])


def test_bad_arguments():
    v = ndx.Variable(np.zeros((4, 2), np.float32))
    with pytest.raises(TypeError, match="sparse_delta is not IndexedSlices"):
        v.scatter_add([1, 2])
    with pytest.raises(ndx.InvalidArgumentError,
                       match=r"updates has shape \[2, 3\], but must have shape indices.shape \+ "
                             r"var.shape\[1:\] = \[2, 2\], or be a scalar"):
        v.scatter_add(ndx.IndexedSlices(np.zeros((2, 3), np.float32), [0, 1]))
    c = ndx.Variable(np.zeros(3, np.complex64))
    with pytest.raises(TypeError, match="ResourceScatterMax: complex64 variables are not "
                                        "supported"):
        c.scatter_max(ndx.IndexedSlices(np.ones(1, np.complex64), [0]))
    with pytest.raises(TypeError, match="ref must be an ndx.Variable"):
        ndx.scatter_add(np.zeros(3), [0], [1.0])
    with pytest.raises(ndx.InvalidArgumentError, match="the variable is a scalar"):
        ndx.Variable(1.0).scatter_add(ndx.IndexedSlices(1.0, 0))
    np.testing.assert_array_equal(v.numpy(), np.zeros((4, 2), np.float32))


# ---- sparse_read (ResourceGather) ---------------------------------------------------------------

def test_sparse_read_eager_and_traced():
    table = RNG.standard_normal((6, 4)).astype(np.float32)
    v = ndx.Variable(table)
    ids = np.array([[5, 0], [5, 2]], np.int64)
    np.testing.assert_array_equal(v.sparse_read(ids), table[ids])
    np.testing.assert_array_equal(ndx.gather(v, ids), table[ids])
    np.testing.assert_array_equal(ndx.nn.embedding_lookup(v, ids), table[ids])
    with pytest.raises(ndx.InvalidArgumentError, match=r"indices\[1\] = 6 is not in \[0, 6\)"):
        v.sparse_read([0, 6])

    @ndx.function
    def read(i):
        first = v.sparse_read(i)
        v.scatter_sub(ndx.IndexedSlices(np.float32(1), i[0]))
        return first, ndx.gather(v, i), ndx.nn.embedding_lookup(v, i)

    first, second, third = read(np.int32([3, 3, 1]))
    np.testing.assert_array_equal(first, table[[3, 3, 1]])
    after = table.copy()
    after[3] -= 1
    np.testing.assert_array_equal(second, after[[3, 3, 1]])
    np.testing.assert_array_equal(third, after[[3, 3, 1]])
    text = read.get_concrete_function(np.int32([3, 3, 1])).graph.to_text()
    assert text.count("ResourceGather(") == 3
    assert "ReadVariableOp" not in text and "GatherV2" not in text


def test_sparse_read_gradient_is_indexed_slices_and_matches_differences():
    table = RNG.standard_normal((5, 3))
    v = ndx.Variable(table)
    ids = np.array([4, 1, 4], np.int32)
    w = RNG.standard_normal((3, 3))

    def loss_np(t):
        return float(np.sum(t[ids] * w))

    @ndx.function
    def grad(i):
        with ndx.GradientTape() as tape:
            loss = ndx.reduce_sum(v.sparse_read(i) * w)
        return tape.gradient(loss, v)

    for g in (grad(ids), None):
        if g is None:  # eagerly, the tape records a gather of the read
            with ndx.GradientTape() as tape:
                loss = ndx.reduce_sum(v.sparse_read(ids) * w)
            g = tape.gradient(loss, v)
        assert isinstance(g, ndx.IndexedSlices)
        np.testing.assert_array_equal(np.asarray(g.indices).reshape(-1), ids)
        dense = np.zeros_like(table)
        np.add.at(dense, np.asarray(g.indices).reshape(-1), np.asarray(g.values))
        h, numeric = 1e-6, np.zeros_like(table)
        for pos in np.ndindex(*table.shape):
            plus, minus = table.copy(), table.copy()
            plus[pos] += h
            minus[pos] -= h
            numeric[pos] = (loss_np(plus) - loss_np(minus)) / (2 * h)
        np.testing.assert_allclose(dense, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
@pytest.mark.parametrize("lookup", ["sparse_read", "gather", "embedding_lookup"])
def test_training_an_embedding_through_resource_gather(optimizer, lookup):
    """The same steps through ResourceGather and through a gather of the read value (the path
    before it) give the same bits; each step's graph reads rows, never the table."""
    table = RNG.standard_normal((10, 4)).astype(np.float32)
    batches = [(RNG.integers(0, 10, 6).astype(np.int32), RNG.standard_normal(6).astype(np.float32))
               for _ in range(4)]
    for b in batches:
        b[0][-1] = b[0][0]  # a repeated id

    def train(read):
        v = ndx.Variable(table.copy())
        opt = (ndx.optimizers.SGD(0.1) if optimizer == "sgd"
               else ndx.optimizers.Adagrad(0.1))

        @ndx.function
        def step(ids, target):
            with ndx.GradientTape() as tape:
                rows = read(v, ids)
                diff = ndx.reduce_sum(rows, 1) - target
                loss = ndx.reduce_sum(diff * diff)
            grad = tape.gradient(loss, v)
            assert isinstance(grad, ndx.IndexedSlices)
            opt.apply_gradients([(grad, v)])
            return loss

        for ids, target in batches:
            step(ids, target)
        return v.numpy(), step.get_concrete_function(*batches[0]).graph.to_text()

    readers = {"sparse_read": lambda v, i: v.sparse_read(i),
               "gather": lambda v, i: ndx.gather(v, i),
               "embedding_lookup": lambda v, i: ndx.nn.embedding_lookup(v, i)}
    got, text = train(readers[lookup])
    want, old_text = train(lambda v, i: ndx.gather(v.read_value(), i))
    np.testing.assert_array_equal(got, want)
    assert "ResourceGather(" in text and "ResourceGather(" not in old_text
    # and against NumPy for SGD: rows stepped by -lr * 2 * diff, one entry after another
    if optimizer == "sgd":
        ref = table.copy()
        for ids, target in batches:
            diff = ref[ids].sum(1) - target
            grad = np.repeat((2 * diff)[:, None], 4, 1).astype(np.float32)
            for k, r in enumerate(ids):
                ref[r] -= np.float32(0.1) * grad[k]
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_gather_nd_of_a_variable():
    v = ndx.Variable(np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(v.gather_nd([[2, 1], [0, 0]]), [5, 0])
