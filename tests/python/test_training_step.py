"""The usual embedding training step, written as TensorFlow 2 code is written: ndx.Variable tables,
a step traced with an input_signature of None dims (any batch size), an embedding gather, a dot
product, a squared loss, GradientTape and Keras's Adagrad. Its gradients are checked against
float64 central differences of a NumPy model of the same loss, and its steps against Keras's
Adagrad written in NumPy (duplicate ids summed first, then one update per distinct row), with
batches that repeat ids; the same step run eagerly gives the same numbers."""
import numpy as np
import pytest

import ndx

RNG = np.random.default_rng(29)
USERS, ITEMS, DIM = 7, 5, 3


def model_loss(user_table, item_table, users, items, ratings):
    """The loss in NumPy, an independent twin of the traced step's forward."""
    pred = np.sum(user_table[users] * item_table[items], axis=1)
    diff = pred - ratings
    return np.sum(diff * diff) / len(ratings)


def forward(user_table, item_table, users, items, ratings):
    """The step's forward with ndx ops, as TF code writes it (works traced and eagerly)."""
    dtype = user_table.dtype
    u = ndx.gather_nd(user_table, ndx.reshape(users, [-1, 1]))   # [batch, DIM], batch unknown
    v = ndx.gather_nd(item_table, ndx.reshape(items, [-1, 1]))
    pred = ndx.reduce_sum(u * v, 1)                               # [?, DIM] * [?, DIM]
    diff = pred - ratings
    n = ndx.cast(ndx.size(ratings), dtype)
    return ndx.reduce_sum(diff * diff) / n


SIGNATURE = [ndx.TensorSpec([None], ndx.int32), ndx.TensorSpec([None], ndx.int32)]


def dense(grad, shape):
    """A gradient (IndexedSlices or dense) as a float64 array, by NumPy alone."""
    out = np.zeros(shape, np.float64)
    if isinstance(grad, ndx.IndexedSlices):
        idx = np.asarray(grad.indices).reshape(len(grad.values), -1)
        np.add.at(out, tuple(idx.T), np.asarray(grad.values, np.float64))
        return out
    return np.asarray(grad, np.float64)


def central_differences(tables, users, items, ratings, which, h=1e-6):
    base = [t.copy() for t in tables]
    grad = np.zeros_like(base[which])
    for pos in np.ndindex(*grad.shape):
        plus = [t.copy() for t in base]
        minus = [t.copy() for t in base]
        plus[which][pos] += h
        minus[which][pos] -= h
        grad[pos] = (model_loss(*plus, users, items, ratings) -
                     model_loss(*minus, users, items, ratings)) / (2 * h)
    return grad


@pytest.mark.parametrize("batch", [1, 4, 9])
def test_traced_variable_batch_gradients_match_central_differences(batch):
    tables64 = [RNG.standard_normal((USERS, DIM)), RNG.standard_normal((ITEMS, DIM))]
    user_table, item_table = (ndx.Variable(t, name=n) for t, n in zip(tables64, ("u", "i")))

    @ndx.function(input_signature=SIGNATURE + [ndx.TensorSpec([None], ndx.float64)])
    def grads(users, items, ratings):
        with ndx.GradientTape() as tape:
            loss = forward(user_table, item_table, users, items, ratings)
        return loss, tape.gradient(loss, [user_table, item_table])

    users = RNG.integers(0, USERS, batch).astype(np.int32)
    items = RNG.integers(0, ITEMS, batch).astype(np.int32)
    users[-1] = users[0]  # a repeated id: its rows' gradients add up
    ratings = RNG.standard_normal(batch)
    loss, (g_user, g_item) = grads(users, items, ratings)
    np.testing.assert_allclose(loss, model_loss(*tables64, users, items, ratings), rtol=1e-12)
    for which, g in enumerate((g_user, g_item)):
        want = central_differences(tables64, users, items, ratings, which)
        np.testing.assert_allclose(dense(g, tables64[which].shape), want, rtol=1e-6, atol=1e-8)
    assert grads.experimental_get_tracing_count() == 1  # every batch size: one trace


def keras_adagrad(var, accum, lr, epsilon, grad_values, indices):
    """Keras's Adagrad on IndexedSlices (optimizer_v2: duplicate indices summed first, then
    accum += g^2; var -= lr * g / (sqrt(accum) + epsilon) once per distinct row), float32."""
    var, accum = var.copy(), accum.copy()
    rows, where = np.unique(indices, return_inverse=True)
    summed = np.zeros((len(rows),) + grad_values.shape[1:], np.float32)
    np.add.at(summed, where, grad_values)
    for k, r in enumerate(rows):
        accum[r] += summed[k] * summed[k]
        var[r] -= lr * summed[k] / (np.sqrt(accum[r]) + epsilon)
    return var, accum


def reference_gradients(user_table, item_table, users, items, ratings):
    """The gradient's rows of each table (one row per batch entry), float32 as the step computes
    them: d loss / d u[k] = 2 (pred_k - r_k) / batch * v[k], and likewise."""
    u, v = user_table[users], item_table[items]
    diff = np.sum(u * v, axis=1, dtype=np.float32) - ratings
    scale = (np.float32(2) * diff / np.float32(len(ratings)))[:, None]
    return scale * v, scale * u


def run_steps(step, tables, batches):
    user_table, item_table = (ndx.Variable(t.copy(), name=n) for t, n in zip(tables, ("u", "i")))
    opt = ndx.optimizers.Adagrad(learning_rate=0.1)
    fn = step(user_table, item_table, opt)
    losses = [float(np.asarray(fn(*b))) for b in batches]
    return losses, user_table.numpy(), item_table.numpy(), fn


def make_step(traced):
    def step(user_table, item_table, opt):
        def body(users, items, ratings):
            with ndx.GradientTape() as tape:
                loss = forward(user_table, item_table, users, items, ratings)
            grads = tape.gradient(loss, [user_table, item_table])
            opt.apply_gradients(zip(grads, [user_table, item_table]))
            return loss
        if traced:
            return ndx.function(body, input_signature=SIGNATURE +
                                [ndx.TensorSpec([None], ndx.float32)])
        return body
    return step


def test_adagrad_steps_with_repeated_ids_follow_keras_traced_and_eager():
    tables = [RNG.standard_normal((USERS, DIM)).astype(np.float32),
              RNG.standard_normal((ITEMS, DIM)).astype(np.float32)]
    batches = []
    for size in (6, 3, 8, 6):  # variable batch sizes, every batch with repeated ids
        users = RNG.integers(0, 3, size).astype(np.int32)
        items = RNG.integers(0, 2, size).astype(np.int32)
        batches.append((users, items, RNG.standard_normal(size).astype(np.float32)))

    # Keras's numbers, in NumPy.
    want_u, want_i = tables[0].copy(), tables[1].copy()
    acc_u = np.full_like(want_u, 0.1)
    acc_i = np.full_like(want_i, 0.1)
    lr, eps = np.float32(0.1), np.float32(1e-7)
    for users, items, ratings in batches:
        gu, gi = reference_gradients(want_u, want_i, users, items, ratings)
        want_u, acc_u = keras_adagrad(want_u, acc_u, lr, eps, gu, users)
        want_i, acc_i = keras_adagrad(want_i, acc_i, lr, eps, gi, items)

    _, got_u, got_i, fn = run_steps(make_step(True), tables, batches)
    np.testing.assert_allclose(got_u, want_u, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(got_i, want_i, rtol=2e-5, atol=2e-6)
    assert fn.experimental_get_tracing_count() == 1

    # Applying the duplicates one by one (the raw ResourceSparseApplyAdagrad semantics) gives
    # numbers far from these: the comparison above can tell the two apart.
    naive_u, naive_acc = tables[0].copy(), np.full_like(tables[0], 0.1)
    users, items, ratings = batches[0]
    gu, _ = reference_gradients(tables[0], tables[1], users, items, ratings)
    for k, r in enumerate(users):
        naive_acc[r] += gu[k] * gu[k]
        naive_u[r] -= lr * gu[k] / (np.sqrt(naive_acc[r]) + eps)
    keras_u, _ = keras_adagrad(tables[0], np.full_like(tables[0], 0.1), lr, eps, gu, users)
    assert np.max(np.abs(naive_u - keras_u)) > 1e-3

    # The same step eagerly (the tape records, no trace) gives the traced step's numbers.
    _, eager_u, eager_i, _ = run_steps(make_step(False), tables, batches)
    np.testing.assert_allclose(eager_u, got_u, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(eager_i, got_i, rtol=1e-6, atol=1e-7)
