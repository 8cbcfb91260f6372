"""ndx.Variable across calls and traces, the sparse apply ops (eager against NumPy loops, in
graphs), ndx.optimizers, and hostile use (refused before any write)."""
import numpy as np
import pytest

import ndx

RNG = np.random.default_rng(8)


# ---- references: plain loops -----------------------------------------------------------------

def sgd_loop(var, lr, grad, indices):
    var = var.copy()
    for i, r in enumerate(indices):
        var[r] -= lr * grad[i]
    return var


def adagrad_loop(var, accum, lr, grad, indices, epsilon=None):
    var, accum = var.copy(), accum.copy()
    one = var.dtype.type(1)
    for i, r in enumerate(indices):
        accum[r] += grad[i] * grad[i]
        if epsilon is None:
            var[r] -= lr * grad[i] * (one / np.sqrt(accum[r]))
        else:
            var[r] -= lr * grad[i] / (np.sqrt(accum[r]) + epsilon)
    return var, accum


def keras_adagrad(var, accum, lr, grad, indices, epsilon):
    """Keras's Adagrad step on IndexedSlices, as its optimizer writes it: the distinct indices
    (tf.unique), each one's gradient rows summed from zero in order (tf.math.unsorted_segment_sum,
    in the dtype), then the kernel once per distinct index with that sum."""
    distinct = list(dict.fromkeys(int(r) for r in indices))
    summed = np.zeros((len(distinct),) + grad.shape[1:], grad.dtype)
    for i, r in enumerate(indices):
        summed[distinct.index(int(r))] += grad[i]
    return adagrad_loop(var, accum, lr, summed, distinct, epsilon)


# ---- eager sparse apply ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eager_sparse_apply_sgd_in_place(dtype):
    var = RNG.standard_normal((6, 3)).astype(dtype)
    grad = RNG.standard_normal((5, 3)).astype(dtype)
    idx = np.array([1, 4, 1, 0, 5], np.int32)
    want = sgd_loop(var, dtype(0.5), grad, idx)
    out = ndx.sparse_apply_sgd(var, 0.5, grad, idx)
    assert out is var
    np.testing.assert_array_equal(var, want)


@pytest.mark.parametrize("epsilon", [None, 1e-7])
def test_eager_sparse_apply_adagrad_in_place(epsilon):
    var = RNG.standard_normal((6, 4)).astype(np.float32)
    accum = np.full((6, 4), 0.1, np.float32)
    grad = RNG.standard_normal((4, 4)).astype(np.float32)
    idx = np.array([2, 2, 5, 0], np.int64)
    eps = None if epsilon is None else np.float32(epsilon)
    want_var, want_acc = adagrad_loop(var, accum, np.float32(0.1), grad, idx, eps)
    ndx.sparse_apply_adagrad(var, accum, 0.1, grad, idx, epsilon=eps)
    np.testing.assert_allclose(var, want_var, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(accum, want_acc)


def test_eager_apply_refuses_before_any_write():
    var = np.arange(8, dtype=np.float32).reshape(4, 2)
    accum = np.ones((4, 2), np.float32)
    keep, keep_acc = var.copy(), accum.copy()
    grad = np.ones((2, 2), np.float32)
    with pytest.raises(ndx.InvalidArgumentError, match="out of range"):
        ndx.sparse_apply_sgd(var, 1.0, grad, np.array([0, 4], np.int32))
    with pytest.raises((TypeError, ndx.InvalidArgumentError)):
        ndx.sparse_apply_sgd(var, 1.0, grad.astype(np.float64), np.array([0, 1], np.int32))
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.sparse_apply_sgd(var, 1.0, np.ones((3, 2), np.float32), np.array([0, 1], np.int32))
    with pytest.raises((TypeError, ndx.InvalidArgumentError)):
        ndx.sparse_apply_adagrad(var, accum, 1.0, grad, np.array([0, 1], np.int16))
    with pytest.raises(ndx.InvalidArgumentError, match="out of range"):
        ndx.sparse_apply_adagrad(var, accum, 1.0, grad, np.array([3, -1], np.int64))
    with pytest.raises(ValueError):
        ndx.sparse_apply_sgd(var[:, ::2], 1.0, grad[:, :1], np.array([0, 1], np.int32))
    with pytest.raises(ValueError, match="read-only"):
        ro = var.copy()
        ro.flags.writeable = False
        ndx.sparse_apply_sgd(ro, 1.0, grad, np.array([0, 1], np.int32))
    np.testing.assert_array_equal(var, keep)
    np.testing.assert_array_equal(accum, keep_acc)
    ndx.sparse_apply_sgd(var, 1.0, grad, np.array([0, 9], np.int32), bad_indices="ignore")
    keep[0] -= 1
    np.testing.assert_array_equal(var, keep)


# ---- Variable ------------------------------------------------------------------------------------

def test_variable_eager_value_and_updates():
    v = ndx.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
    assert v.dtype is ndx.float32 and v.shape == (2, 2) and v.name == "w"
    a = v.numpy()
    a[0, 0] = 99  # a copy
    np.testing.assert_array_equal(v.numpy(), [[1, 2], [3, 4]])
    v.assign_add(np.ones((2, 2), np.float32))
    v.assign_sub([[0.5, 0.5], [0.5, 0.5]])
    v.scatter_nd_add([[1]], [[10.0, 20.0]])
    np.testing.assert_array_equal(v.numpy(), [[1.5, 2.5], [13.5, 24.5]])
    v.assign(np.zeros((2, 2)))
    np.testing.assert_array_equal(np.asarray(v), np.zeros((2, 2)))
    with pytest.raises(ndx.InvalidArgumentError, match="shape"):
        v.assign(np.zeros(3))
    with pytest.raises(ValueError, match="name"):
        ndx.Variable([1.0], name="bad name")


def test_variable_persists_across_calls_and_retraces():
    counter = ndx.Variable(np.zeros(3, np.float32), name="counter")

    @ndx.function
    def bump(x, k=1):
        before = ndx.identity(counter)
        counter.assign_add(x * float(k))  # (k, a Python value, is part of the trace)
        return before

    np.testing.assert_array_equal(bump(np.ones(3, np.float32)), [0, 0, 0])
    np.testing.assert_array_equal(bump(np.ones(3, np.float32)), [1, 1, 1])  # start-of-run value
    np.testing.assert_array_equal(counter.numpy(), [2, 2, 2])
    bump(np.ones(3, np.float32), 5)  # another trace: the same variable
    assert bump.experimental_get_tracing_count() == 2
    np.testing.assert_array_equal(counter.numpy(), [7, 7, 7])
    counter.assign([10.0, 10.0, 10.0])  # eager change, seen by both traces
    np.testing.assert_array_equal(bump(np.ones(3, np.float32)), [10, 10, 10])
    np.testing.assert_array_equal(bump(np.ones(3, np.float32), 5), [11, 11, 11])
    np.testing.assert_array_equal(counter.numpy(), [16, 16, 16])


def test_variable_used_from_two_functions():
    v = ndx.Variable(np.arange(4, dtype=np.float64), name="shared")

    @ndx.function
    def add(x):
        v.assign_add(x)
        return v * 1.0

    @ndx.function
    def scatter(i, u):
        v.scatter_nd_add(i, u)
        return ndx.identity(v)

    # (reads after an update see it: program order, as in TF2)
    np.testing.assert_array_equal(add(np.ones(4)), [1, 2, 3, 4])
    np.testing.assert_array_equal(scatter(np.array([[0], [0]], np.int32), np.array([5., 5.])),
                                  [11, 2, 3, 4])
    np.testing.assert_array_equal(add(np.ones(4)), [12, 3, 4, 5])
    np.testing.assert_array_equal(v.numpy(), [12, 3, 4, 5])


def test_variable_created_on_first_trace_only():
    holder = {}

    @ndx.function
    def f(x):
        if "v" not in holder:
            holder["v"] = ndx.Variable(np.zeros(2), name="made_inside")
        holder["v"].assign_add(x)
        return ndx.identity(holder["v"])

    np.testing.assert_array_equal(f(np.ones(2)), [1, 1])
    np.testing.assert_array_equal(f(np.ones(2)), [2, 2])
    np.testing.assert_array_equal(holder["v"].numpy(), [2, 2])

    @ndx.function
    def g(x):
        v = ndx.Variable(np.zeros(np.shape(x) or ()), name="each_trace")
        return v + x

    g(np.ones(2))
    with pytest.raises(ValueError, match="first trace"):
        g(np.ones(3))


def test_variable_passed_as_argument_is_by_reference():
    v = ndx.Variable(np.ones(2), name="arg")

    @ndx.function
    def f(var, x):
        var.assign_add(x)
        return var * 2.0

    f(v, np.ones(2))
    f(v, np.ones(2))
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_array_equal(v.numpy(), [3, 3])


def test_numpy_inside_a_trace_is_a_clear_error():
    v = ndx.Variable(np.ones(2))

    @ndx.function
    def h(x):
        return v.numpy() + x

    with pytest.raises(TypeError, match="only known when the function runs"):
        h(np.ones(2))


def test_graph_update_refused_changes_nothing():
    table = ndx.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="table")

    @ndx.function
    def step(idx, g):
        ndx.sparse_apply_sgd(table, 1.0, g, idx)
        table.assign_add(np.ones((3, 2), np.float32))
        return ndx.identity(table)

    step(np.array([0], np.int32), np.ones((1, 2), np.float32))
    before = table.numpy()
    with pytest.raises(ndx.InvalidArgumentError, match="out of range"):
        step(np.array([7], np.int32), np.ones((1, 2), np.float32))
    np.testing.assert_array_equal(table.numpy(), before)  # the assign_add did not run either
    with pytest.raises(ndx.InvalidArgumentError, match=r"test_variables\.py:\d+"):
        @ndx.function
        def wrong(g):
            ndx.sparse_apply_sgd(table, 1.0, g, np.array([0], np.int32))
        wrong(np.ones((1, 2), np.float64))
    np.testing.assert_array_equal(table.numpy(), before)


def test_apply_ops_inside_a_trace_need_a_variable():
    @ndx.function
    def f(var, g):
        ndx.sparse_apply_sgd(var, 1.0, g, np.array([0], np.int32))
        return var

    with pytest.raises(TypeError, match="ndx.Variable"):
        f(np.ones((2, 2), np.float32), np.ones((1, 2), np.float32))


# ---- optimizers ------------------------------------------------------------------------------------

def test_sgd_sparse_and_dense_in_a_graph_against_loops():
    emb = RNG.standard_normal((5, 3)).astype(np.float32)
    bias = RNG.standard_normal(3).astype(np.float32)
    E, b = ndx.Variable(emb, name="E"), ndx.Variable(bias, name="b")
    opt = ndx.optimizers.SGD(0.25)

    @ndx.function
    def step(ids):
        with ndx.GradientTape() as tape:
            loss = ndx.reduce_sum(ndx.gather_nd(E, ids) * b)
        grads = tape.gradient(loss, [E, b])
        opt.apply_gradients(zip(grads, [E, b]))
        return loss

    ids = np.array([[4], [1], [4]], np.int32)
    step(ids)
    lr = np.float32(0.25)
    want_e = sgd_loop(emb, lr, np.tile(bias, (3, 1)), ids[:, 0])
    want_b = bias - lr * (emb[4] + emb[1] + emb[4])
    np.testing.assert_array_equal(E.numpy(), want_e)
    np.testing.assert_allclose(b.numpy(), want_b, rtol=1e-6)


def test_adagrad_in_a_graph_and_eagerly_agree_with_loops():
    emb = RNG.standard_normal((4, 2)).astype(np.float32)
    ids = np.array([[2], [0], [2]], np.int32)
    for mode in ("graph", "eager"):
        E = ndx.Variable(emb, name="E")
        opt = ndx.optimizers.Adagrad(0.5, initial_accumulator_value=0.1)
        if mode == "graph":
            @ndx.function
            def step(ids):
                with ndx.GradientTape() as tape:
                    loss = ndx.reduce_sum(ndx.gather_nd(E, ids) * 3.0)
                opt.apply_gradients(zip(tape.gradient(loss, [E]), [E]))
                return loss
            step(ids)
        else:
            grad = ndx.IndexedSlices(np.full((3, 2), 3.0, np.float32), ids[:, 0].astype(np.int64),
                                     np.array([4, 2], np.int64))
            opt.apply_gradients([(grad, E)])
        want, acc = keras_adagrad(emb, np.full((4, 2), 0.1, np.float32), np.float32(0.5),
                                  np.full((3, 2), 3.0, np.float32), ids[:, 0], np.float32(1e-7))
        np.testing.assert_allclose(E.numpy(), want, rtol=1e-6, err_msg=mode)
        np.testing.assert_array_equal(opt.accumulators[E].numpy(), acc)


def test_adagrad_repeated_ids_give_keras_numbers_traced_and_eager():
    """Keras: var row 0 = [0.5, -0.5], ids [0, 1, 0] with gradient rows [1, -2], [3, 3],
    [2, -1]: row 0's sum [3, -3], accum 0.1 + 9 = 9.1, var 0.5 - 0.1 * 3 / (sqrt(9.1) + 1e-7)
    = 0.40055...; stepping once per entry instead gives 0.5 - 0.1/sqrt(1.1) - 0.2/sqrt(5.1)."""
    emb = np.array([[0.5, -0.5], [1.0, 2.0], [-1.0, 0.25]], np.float32)
    ids = np.array([0, 1, 0], np.int64)
    g = np.array([[1, -2], [3, 3], [2, -1]], np.float32)
    accum0 = np.full((3, 2), 0.1, np.float32)
    want, want_acc = keras_adagrad(emb, accum0, np.float32(0.1), g, ids, np.float32(1e-7))
    assert abs(want[0, 0] - (0.5 - 0.1 * 3 / (np.sqrt(9.1) + 1e-7))) < 1e-6
    per_entry, _ = adagrad_loop(emb, accum0, np.float32(0.1), g, ids, np.float32(1e-7))
    assert abs(per_entry[0, 0] - want[0, 0]) > 1e-2
    for mode in ("traced", "eager"):
        E = ndx.Variable(emb, name="E")
        opt = ndx.optimizers.Adagrad(0.1)
        weights = ndx.constant(g)

        def step(ids):
            with ndx.GradientTape() as tape:
                rows = ndx.gather_nd(E, ndx.reshape(ids, [-1, 1]))
                loss = ndx.reduce_sum(rows * weights)
            grads = tape.gradient(loss, [E])
            assert isinstance(grads[0], ndx.IndexedSlices)
            opt.apply_gradients(zip(grads, [E]))
            return loss

        (ndx.function(step) if mode == "traced" else step)(ids)
        np.testing.assert_array_equal(E.numpy(), want, err_msg=mode)
        np.testing.assert_array_equal(opt.accumulators[E].numpy(), want_acc, err_msg=mode)


@pytest.mark.parametrize("epsilon", [None, 1e-7])
def test_sparse_apply_adagrad_sum_duplicates_eager_and_traced(epsilon):
    var0 = RNG.standard_normal((5, 3)).astype(np.float32)
    grad = RNG.standard_normal((6, 3)).astype(np.float32)
    idx = np.array([4, 1, 4, 4, 0, 1], np.int32)
    accum0 = np.full((5, 3), 0.1, np.float32)
    eps = None if epsilon is None else np.float32(epsilon)
    want, want_acc = keras_adagrad(var0, accum0, np.float32(0.25), grad, idx, eps)
    var, accum = var0.copy(), accum0.copy()
    ndx.sparse_apply_adagrad(var, accum, 0.25, grad, idx, eps, sum_duplicates=True)
    np.testing.assert_array_equal(var, want)
    np.testing.assert_array_equal(accum, want_acc)
    # the raw kernel (the default) steps a repeated row once per entry
    raw, raw_acc = var0.copy(), accum0.copy()
    ndx.sparse_apply_adagrad(raw, raw_acc, 0.25, grad, idx, eps)
    np.testing.assert_array_equal(raw, adagrad_loop(var0, accum0, np.float32(0.25), grad, idx,
                                                    eps)[0])
    V, A = ndx.Variable(var0, name="V"), ndx.Variable(accum0, name="A")

    @ndx.function
    def f(grad, idx):
        ndx.sparse_apply_adagrad(V, A, 0.25, grad, idx, eps, sum_duplicates=True)
        return ndx.identity(V)

    f(grad, idx)
    np.testing.assert_array_equal(V.numpy(), want)
    np.testing.assert_array_equal(A.numpy(), want_acc)


def test_adagrad_dense_gradient_updates_every_row():
    w = ndx.Variable(np.ones((2, 2), np.float32), name="w")
    opt = ndx.optimizers.Adagrad(0.1, epsilon=None)
    opt.apply_gradients([(np.full((2, 2), 2.0, np.float32), w)])
    want, _ = adagrad_loop(np.ones((2, 2), np.float32), np.full((2, 2), 0.1, np.float32),
                           np.float32(0.1), np.full((2, 2), 2.0, np.float32), [0, 1])
    np.testing.assert_allclose(w.numpy(), want, rtol=1e-6)


def test_eager_apply_refuses_grad_sharing_memory_with_the_table():
    a = np.arange(8, dtype=np.float32).reshape(4, 2)
    keep = a.copy()
    with pytest.raises(ndx.InvalidArgumentError, match="share memory"):
        ndx.sparse_apply_sgd(a, 1.0, a[:2], np.array([0, 1], np.int32))
    np.testing.assert_array_equal(a, keep)


def test_session_variable_access_is_checked():
    v = ndx.Variable(np.ones((3, 2), np.float32), name="v")

    @ndx.function
    def f(x):
        v.assign_add(x)
        return ndx.identity(v)

    f(np.ones((3, 2), np.float32))
    cf = next(iter(f._cache.values()))
    s, node = cf._session(None, None), cf.graph._variables[v].op
    with pytest.raises(ndx.InvalidArgumentError, match="not a Variable"):
        s.read_variable(cf.inputs[0].op, np.empty((3, 2), np.float32))
    with pytest.raises(ndx.InvalidArgumentError, match="float64"):
        s.write_variable(node, np.zeros((3, 2), np.float64))
    with pytest.raises(TypeError):
        cf.graph._g.gradients("xx", None, [(1, 0)], "f", 1)
    np.testing.assert_array_equal(v.numpy(), np.full((3, 2), 2, np.float32))


# ---- program order inside a trace (TF2's automatic control dependencies) -----------------------

def test_read_after_write_sees_the_new_value():
    v = ndx.Variable(0.0, name="count")

    @ndx.function
    def bump():
        v.assign_add(1.)
        return v.read_value()

    assert bump() == 1.0 and bump() == 2.0 and v.numpy() == 2.0

    w = ndx.Variable(np.arange(4, dtype=np.float32), name="w")

    @ndx.function
    def every_read(x):
        w.assign_add(x)
        rows = ndx.gather_nd(w, np.array([[3], [0]], np.int32))
        return w.read_value(), w.value(), ndx.identity(w), w + 1, rows, w[1]

    x = np.array([10, 20, 30, 40], np.float32)
    now = np.arange(4, dtype=np.float32) + x
    got = every_read(x)
    for out in got[:3]:
        np.testing.assert_array_equal(out, now)
    np.testing.assert_array_equal(got[3], now + 1)
    np.testing.assert_array_equal(got[4], now[[3, 0]])
    assert got[5] == now[1]
    np.testing.assert_array_equal(w.numpy(), now)
    assert "ReadVariableOp" in str(every_read.get_concrete_function(x).graph)


def test_read_before_write_sees_the_old_value():
    v = ndx.Variable(np.array([1., 2.]), name="v")

    @ndx.function
    def f(x):
        before = v * 1.0
        before_read = v.read_value()
        v.assign_add(x)
        return before, before_read, v * 1.0

    before, before_read, after = f(np.array([5., 5.]))
    np.testing.assert_array_equal(before, [1, 2])
    np.testing.assert_array_equal(before_read, [1, 2])
    np.testing.assert_array_equal(after, [6, 7])
    before, _, after = f(np.array([1., 1.]))
    np.testing.assert_array_equal(before, [6, 7])
    np.testing.assert_array_equal(after, [7, 8])


def test_assign_inside_a_trace():
    v = ndx.Variable(np.zeros(3, np.float32), name="v")

    @ndx.function
    def f(x):
        same = v.assign(x)
        assert same is v  # (TF2: a variable-like object whose reads see the new value)
        assert v.assign(x, read_value=False) is None
        return same * 2.0

    x = np.array([1.5, -2, 4], np.float32)
    np.testing.assert_array_equal(f(x), x * 2)
    np.testing.assert_array_equal(v.numpy(), x)
    text = str(f.get_concrete_function(x).graph)
    assert "AssignVariableOp(v, " in text

    @ndx.function
    def wrong_shape(x):
        v.assign(x)

    with pytest.raises(ndx.InvalidArgumentError, match="AssignVariableOp: value has shape"):
        wrong_shape(np.ones(4, np.float32))

    @ndx.function(input_signature=[ndx.TensorSpec([None], ndx.float32)])
    def unknown_shape(x):
        v.assign(x)
        return v.read_value()

    with pytest.raises(ndx.InvalidArgumentError, match="AssignVariableOp: value has shape"):
        unknown_shape(np.ones(5, np.float32))
    np.testing.assert_array_equal(v.numpy(), x)
    np.testing.assert_array_equal(unknown_shape(np.ones(3, np.float32)), [1, 1, 1])


def test_two_assigns_apply_in_order():
    v = ndx.Variable(np.array([1., 2., 3.]), name="v")

    @ndx.function
    def f(x, y):
        v.assign(x)
        mid = v.read_value()
        v.assign_add(y)
        v.assign(v * 3.0)
        v.scatter_nd_add(np.array([[0]], np.int32), np.array([0.5]))
        return mid, v.read_value()

    x, y = np.array([4., 5., 6.]), np.array([1., 1., 1.])
    mid, last = f(x, y)
    np.testing.assert_array_equal(mid, x)
    want = (x + y) * 3.0
    want[0] += 0.5
    np.testing.assert_array_equal(last, want)
    np.testing.assert_array_equal(v.numpy(), want)

    w = ndx.Variable(np.zeros(2), name="w")

    @ndx.function
    def g():
        w.assign([1., 1.])
        w.assign([2., 3.])  # (the last write wins, even with no read in between)

    g()
    np.testing.assert_array_equal(w.numpy(), [2, 3])


def test_failing_op_after_assign_changes_nothing():
    v = ndx.Variable(np.array([1., 2., 3.], np.float32), name="v")
    acc = ndx.Variable(np.zeros(3, np.float32), name="acc")

    @ndx.function
    def f(x, idx):
        v.assign(x)
        acc.assign_add(v)
        return ndx.gather_nd(v, idx)

    x = np.array([7., 8., 9.], np.float32)
    with pytest.raises(ndx.InvalidArgumentError, match="out of range"):
        f(x, np.array([[5]], np.int32))
    np.testing.assert_array_equal(v.numpy(), [1, 2, 3])
    np.testing.assert_array_equal(acc.numpy(), [0, 0, 0])

    @ndx.function
    def late(x, idx):
        v.assign(x)
        seen = v.read_value()
        v.scatter_nd_add(idx, np.ones(1, np.float32))  # fails after the read
        return seen

    with pytest.raises(ndx.InvalidArgumentError, match="out of range"):
        late(x, np.array([[3]], np.int32))
    np.testing.assert_array_equal(v.numpy(), [1, 2, 3])
    np.testing.assert_array_equal(f(x, np.array([[2], [0]], np.int32)), [9, 7])
    np.testing.assert_array_equal(acc.numpy(), x)


def _program(v, w, x):
    """Reads and writes of two variables, interleaved; run eagerly and traced."""
    a = v * 2.0
    v.assign_add(x)
    b = v + w
    w.assign(b * 0.5)
    v.assign_sub(w)
    v.scatter_nd_add(np.array([[1], [1]], np.int32), np.array([0.25, 0.5]))
    c = ndx.gather_nd(v, np.array([[2], [1]], np.int32))
    w.assign_add(v)
    return a, b, c, w * 1.0


def test_the_same_program_eagerly_and_traced():
    init_v, init_w = np.array([1., -2., 3.5]), np.array([0.5, 0.25, -1.])
    ev, ew = ndx.Variable(init_v, name="v"), ndx.Variable(init_w, name="w")
    tv, tw = ndx.Variable(init_v, name="v"), ndx.Variable(init_w, name="w")
    traced = ndx.function(_program)
    for k in range(3):
        x = np.array([1., 2., 3.]) * (k + 1)
        eager = _program(ev, ew, x)
        got = traced(tv, tw, x)
        for e, t in zip(eager, got):
            np.testing.assert_array_equal(np.asarray(e), t)
        np.testing.assert_array_equal(tv.numpy(), ev.numpy())
        np.testing.assert_array_equal(tw.numpy(), ew.numpy())
    assert traced.experimental_get_tracing_count() == 1


def test_gradient_of_a_read_after_an_update():
    v = ndx.Variable(np.array([1., 2., 3.]), name="v")

    @ndx.function
    def f():
        v.assign_add([1., 1., 1.])
        with ndx.GradientTape() as tape:
            loss = ndx.reduce_sum(v * v)
        return tape.gradient(loss, v)

    np.testing.assert_array_equal(f(), [4., 6., 8.])  # 2 * (v + 1)
    np.testing.assert_array_equal(f(), [6., 8., 10.])


def test_saved_program_order_runs_the_same_through_ndx_run(tmp_path):
    import os
    import subprocess
    v = ndx.Variable(np.array([1., 2., 3.], np.float32), name="v")

    @ndx.function
    def f(x):
        v.assign_add(x)
        v.assign(v * 2.0)
        return v.read_value() - 1.0

    x = np.array([0.5, 1., -4.], np.float32)
    path = tmp_path / "order.txt"
    f.get_concrete_function(x).save(path)  # (traced with v's value now: [1, 2, 3])
    want = f(x)
    np.testing.assert_array_equal(want, (np.array([1., 2., 3.], np.float32) + x) * 2 - 1)
    loaded = ndx.load(path)
    (out,) = loaded.default_fetches
    np.testing.assert_array_equal(loaded(x=x), want)  # no targets: the read runs the updates
    np.testing.assert_array_equal(loaded(x=x), (want + 1 + x) * 2 - 1)
    cli = os.path.join(os.path.dirname(__file__), "..", "..", "build", "ndx")
    if not os.path.exists(cli):
        pytest.skip("build/ndx is not built (scripts/test.sh builds it before pytest)")
    np.save(tmp_path / "x.npy", x)
    subprocess.run([cli, "run", str(path), "--feed", f"x={tmp_path / 'x.npy'}", "--fetch",
                    f"{out}={tmp_path / 'y.npy'}"], check=True, capture_output=True)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), want)


def test_reads_after_optimizer_steps_see_them():
    emb = RNG.standard_normal((4, 2)).astype(np.float32)
    ids = np.array([[2], [0], [2]], np.int32)
    results = {}
    for mode in ("graph", "eager"):
        E = ndx.Variable(emb, name="E")
        sgd = ndx.optimizers.SGD(0.25)
        ada = ndx.optimizers.Adagrad(0.5, initial_accumulator_value=0.1)

        def step(ids):
            with ndx.GradientTape(persistent=True) as tape:
                loss = ndx.reduce_sum(ndx.gather_nd(E, ids) * 2.0)
            sgd.apply_gradients([(tape.gradient(loss, E), E)])
            after_sgd = E * 1.0
            with ndx.GradientTape() as tape:  # (the loss of the stepped table)
                rows = ndx.gather_nd(E, ids)
                loss = ndx.reduce_sum(rows * rows)
            ada.apply_gradients([(tape.gradient(loss, E), E)])
            return after_sgd, E * 1.0, ada.accumulators[E] * 1.0

        run = ndx.function(step) if mode == "graph" else step
        results[mode] = [tuple(np.asarray(x) for x in run(ids)) for _ in range(2)]
        results[mode].append(E.numpy())
    for g, e in zip(results["graph"][:2], results["eager"][:2]):
        for a, b in zip(g, e):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(results["graph"][2], results["eager"][2], rtol=1e-6)
    first = results["eager"][0][0]
    np.testing.assert_allclose(first, sgd_loop(emb, np.float32(0.25),
                                               np.full((3, 2), 2, np.float32), ids[:, 0]))


def test_bfloat16_variable_holds_reads_and_updates_its_bits():
    values = np.array([[1.5, -2.0], [3.0, 0.25]], np.float32)  # exact in bfloat16
    v = ndx.Variable(values, dtype=ndx.bfloat16)
    assert v.dtype.name == "bfloat16" and v.shape == (2, 2)
    first = v.numpy()
    assert isinstance(first, ndx.BFloat16Array)
    np.testing.assert_array_equal(first.to_float32(), values)
    v.assign_add(ndx.bfloat16(np.ones((2, 2), np.float32)))
    np.testing.assert_array_equal(v.numpy().to_float32(), values + 1)
    np.testing.assert_array_equal(first.to_float32(), values)  # numpy() gave a copy
    v.scatter_add(ndx.IndexedSlices(ndx.bfloat16([[2.0, 2.0]]), np.array([1], np.int32)))
    np.testing.assert_array_equal(v.numpy().to_float32(), values + [[1, 1], [3, 3]])
    w = ndx.Variable(v)  # a Variable from a bfloat16 Variable copies its bits
    v.assign(ndx.bfloat16(np.zeros((2, 2), np.float32)))
    np.testing.assert_array_equal(w.numpy().to_float32(), values + [[1, 1], [3, 3]])
