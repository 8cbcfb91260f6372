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

    np.testing.assert_array_equal(add(np.ones(4)), [0, 1, 2, 3])
    np.testing.assert_array_equal(scatter(np.array([[0], [0]], np.int32), np.array([5., 5.])),
                                  [1, 2, 3, 4])
    np.testing.assert_array_equal(add(np.ones(4)), [11, 2, 3, 4])
    np.testing.assert_array_equal(v.numpy(), [12, 3, 4, 5])


def test_variable_created_on_first_trace_only():
    holder = {}

    @ndx.function
    def f(x):
        if "v" not in holder:
            holder["v"] = ndx.Variable(np.zeros(2), name="made_inside")
        holder["v"].assign_add(x)
        return ndx.identity(holder["v"])

    np.testing.assert_array_equal(f(np.ones(2)), [0, 0])
    np.testing.assert_array_equal(f(np.ones(2)), [1, 1])
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


def test_assign_inside_a_trace_and_numpy_inside_are_clear_errors():
    v = ndx.Variable(np.ones(2))

    @ndx.function
    def f(x):
        v.assign(x)
        return x

    with pytest.raises(TypeError, match="assign_add"):
        f(np.ones(2))

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
