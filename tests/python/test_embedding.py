"""ndx.nn's embedding lookups against NumPy references written here from TensorFlow's
embedding_ops.py (clip_by_norm, the combiners with div_no_nan, the "div" and "mod" shard
strategies, safe_embedding_lookup_sparse's pruning and empty rows) and PyTorch's embedding_bag
offsets: eager results, traced results equal to eager ones bit for bit, TensorFlow's docstring
example, errors, tape gradients (IndexedSlices of the rows touched) against float64 central
differences, and a small embedding model trained inside ndx.function with ndx.optimizers, one
step of it against the same step computed in NumPy."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples

RNG = np.random.default_rng(41)


# ---- references --------------------------------------------------------------------------------

def np_clip(rows, max_norm):
    """TensorFlow's clip_by_norm of each row (all dims after the first)."""
    if max_norm is None:
        return rows
    axes = tuple(range(1, rows.ndim))
    l2 = np.sqrt(np.sum(rows * rows, axis=axes, keepdims=True))
    return rows * max_norm / np.maximum(l2, max_norm)


def np_bags(params, ids, segments, rows, weights, combiner, max_norm):
    """Row r combines params[ids[i]] for segments[i] == r, as embedding_lookup_sparse does."""
    params = np.asarray(params, np.float64)
    out = np.zeros((rows,) + params.shape[1:])
    w = np.ones(len(ids)) if weights is None else np.asarray(weights, np.float64)
    for r in range(rows):
        sel = np.flatnonzero(np.asarray(segments) == r)
        if len(sel) == 0:
            continue
        emb = np_clip(params[np.asarray(ids)[sel]], max_norm)
        total = np.tensordot(w[sel], emb, axes=1)
        div = {"sum": 1.0, "mean": w[sel].sum(), "sqrtn": np.sqrt((w[sel] ** 2).sum())}[combiner]
        out[r] = total / div if div != 0 else 0.0
    return out


def random_sparse(rows, cols, vocab, with_empty=True):
    """A canonical-order SparseTensor [rows, cols] of ids (some rows empty), and its weights."""
    indices = []
    for r in range(rows):
        if with_empty and RNG.random() < 0.25:
            continue
        for c in sorted(RNG.choice(cols, RNG.integers(1, cols + 1), replace=False)):
            indices.append([r, c])
    indices = np.array(indices, np.int64).reshape(-1, 2)
    ids = RNG.integers(0, vocab, len(indices)).astype(np.int64)
    weights = RNG.uniform(0.2, 2.0, len(indices))
    return indices, ids, weights


TOL = {np.float16: 2e-2, np.float32: 2e-5, np.float64: 1e-12}


# ---- embedding_lookup_sparse -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("max_norm", [None, 1.5])
def test_lookup_sparse_against_numpy_and_traced(dtype, combiner, weighted, max_norm):
    vocab, dim = 9, 4
    params = RNG.standard_normal((vocab, dim)).astype(dtype)
    indices, ids, weights = random_sparse(6, 5, vocab)
    shape = [6, 5]
    sp_ids = ndx.SparseTensor(indices, ids, shape)
    sp_w = ndx.SparseTensor(indices, weights.astype(dtype), shape) if weighted else None
    got = ndx.nn.embedding_lookup_sparse(params, sp_ids, sp_w, combiner=combiner,
                                         max_norm=max_norm)
    rows = int(indices[-1, 0]) + 1 if len(indices) else 0
    want = np_bags(params, ids, indices[:, 0], rows,
                   weights.astype(dtype) if weighted else None, combiner, max_norm)
    assert got.dtype == dtype and got.shape == (rows, dim)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=TOL[dtype], atol=TOL[dtype])

    @ndx.function
    def traced(p, sp, w):
        return ndx.nn.embedding_lookup_sparse(p, sp, w, combiner=combiner, max_norm=max_norm)

    again = traced(params, sp_ids, sp_w)
    assert again.tobytes() == got.tobytes()


def test_tensorflow_docstring_example():
    params = RNG.standard_normal((4, 20)).astype(np.float32)
    sp_ids = ndx.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 3]], [1, 3, 0, 1], [3, 4])
    sp_weights = ndx.SparseTensor(sp_ids.indices, np.array([2.0, 0.5, 1.0, 3.0], np.float32),
                                  [3, 4])
    out = ndx.nn.embedding_lookup_sparse(params, sp_ids, sp_weights, combiner="mean")
    assert out.shape == (3, 20)
    np.testing.assert_allclose(out[0], (params[1] * 2.0 + params[3] * 0.5) / (2.0 + 0.5),
                               rtol=1e-6)
    np.testing.assert_allclose(out[1], params[0] * 1.0 / 1.0, rtol=1e-6)
    np.testing.assert_allclose(out[2], params[1] * 3.0 / 3.0, rtol=1e-6)


def test_unweighted_is_tensorflows_sparse_segment_bits():
    """Without weights and clipping each row is sparse_segment_mean's grouping of its sum: a
    row of 9 ids is the first 9 rows summed in order, then scaled by 1/9 (n < 10: a product)."""
    params = RNG.standard_normal((5, 3)).astype(np.float32)
    ids = np.array([4, 0, 3, 3, 1, 2, 0, 4, 1], np.int64)
    sp = ndx.SparseTensor([[0, c] for c in range(9)], ids, [1, 9])
    got = ndx.nn.embedding_lookup_sparse(params, sp, None, combiner="mean")
    acc = np.zeros(3, np.float32)
    for i in ids:
        acc = acc + params[i]
    assert got[0].tobytes() == (acc * np.float32(1.0 / 9.0)).tobytes()


def test_zero_weight_sum_is_zero():
    params = np.ones((3, 2), np.float32)
    sp = ndx.SparseTensor([[0, 0], [0, 1], [1, 0]], [0, 1, 2], [2, 2])
    w = ndx.SparseTensor(sp.indices, np.array([1.0, -1.0, 2.0], np.float32), [2, 2])
    out = ndx.nn.embedding_lookup_sparse(params, sp, w, combiner="mean")
    np.testing.assert_array_equal(out, [[0, 0], [1, 1]])


@pytest.mark.parametrize("strategy", ["div", "mod"])
def test_sharded_params(strategy):
    vocab, dim, shards = 11, 3, 3
    full = RNG.standard_normal((vocab, dim))
    if strategy == "mod":
        parts = [full[p::shards] for p in range(shards)]
    else:  # "div": contiguous ranges, the first vocab % shards one row longer
        per, extra = divmod(vocab, shards)
        sizes = [per + 1 if p < extra else per for p in range(shards)]
        parts = np.split(full, np.cumsum(sizes)[:-1])
    ids = RNG.integers(0, vocab, (4, 2))
    got = ndx.nn.embedding_lookup(parts, ids, partition_strategy=strategy)
    np.testing.assert_array_equal(got, full[ids])
    indices, sids, weights = random_sparse(5, 4, vocab)
    sp = ndx.SparseTensor(indices, sids, [5, 4])
    w = ndx.SparseTensor(indices, weights, [5, 4])
    got = ndx.nn.embedding_lookup_sparse(parts, sp, w, combiner="sqrtn", max_norm=0.8,
                                         partition_strategy=strategy)
    rows = int(indices[-1, 0]) + 1
    np.testing.assert_allclose(got, np_bags(full, sids, indices[:, 0], rows, weights, "sqrtn",
                                            0.8), rtol=1e-12)

    @ndx.function
    def traced(a, b, c, i):
        return ndx.nn.embedding_lookup([a, b, c], i, partition_strategy=strategy)

    np.testing.assert_array_equal(traced(*parts, ids), full[ids])


def test_embedding_lookup_max_norm_and_errors():
    params = RNG.standard_normal((6, 2, 3))
    ids = np.array([[5, 0], [2, 2]])
    got = ndx.nn.embedding_lookup(params, ids, max_norm=0.7)
    want = np_clip(params[ids.reshape(-1)], 0.7).reshape(2, 2, 2, 3)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ndx.InvalidArgumentError, match="6"):
        ndx.nn.embedding_lookup(params, [1, 6])
    with pytest.raises(ValueError, match="Missing 'params'"):
        ndx.nn.embedding_lookup([], [0])
    sp = ndx.SparseTensor([[0, 0]], [0], [1, 1])
    with pytest.raises(ValueError, match="combiner"):
        ndx.nn.embedding_lookup_sparse(params, sp, None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
        ndx.nn.embedding_lookup_sparse(params, [0], None)
    bad = ndx.SparseTensor([[0, 0]], [7], [1, 1])
    with pytest.raises(ndx.InvalidArgumentError, match=r"ids\[0\] = 7 is not in \[0, 6\)"):
        ndx.nn.embedding_lookup_sparse(params, bad, None)


# ---- safe_embedding_lookup_sparse --------------------------------------------------------------

def np_safe(params, indices, ids, dense_shape, weights, combiner, default_id, max_norm):
    """TensorFlow's safe_embedding_lookup_sparse: prune, combine per row of dense_shape[:-1],
    fill empty rows."""
    outer = tuple(dense_shape[:-1])
    rows = int(np.prod(outer))
    seg = np.ravel_multi_index(tuple(indices[:, :-1].T), outer) if len(indices) else indices[:, 0]
    keep = ids >= 0
    if weights is not None and combiner != "sum":
        keep &= weights > 0
    out = np_bags(params, ids[keep], seg[keep], rows,
                  None if weights is None else weights[keep], combiner, max_norm)
    empty = np.bincount(seg[keep], minlength=rows) == 0
    fill = 0.0 if default_id is None else np_clip(np.asarray(params, np.float64)[[default_id]],
                                                  max_norm)[0]
    out[empty] = fill
    return out.reshape(outer + np.shape(params)[1:])


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("default_id", [None, 2])
def test_safe_lookup(combiner, weighted, default_id):
    vocab, dim = 7, 3
    params = RNG.standard_normal((vocab, dim))
    dense_shape = [3, 2, 4]
    indices = np.array([[0, 0, 0], [0, 0, 2], [0, 1, 1], [1, 0, 0], [1, 0, 3], [2, 1, 0],
                        [2, 1, 1]], np.int64)
    ids = np.array([3, -1, 5, 0, 6, -2, 4], np.int64)
    weights = np.array([1.5, 2.0, -0.5, 0.0, 0.75, 1.0, 2.5])
    sp = ndx.SparseTensor(indices, ids, dense_shape)
    sw = ndx.SparseTensor(indices, weights, dense_shape) if weighted else None
    got = ndx.nn.safe_embedding_lookup_sparse(params, sp, sw, combiner=combiner,
                                              default_id=default_id, max_norm=1.2)
    want = np_safe(params, indices, ids, dense_shape, weights if weighted else None, combiner,
                   default_id, 1.2)
    assert got.shape == (3, 2, dim)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)

    @ndx.function
    def traced(p, s, w):
        return ndx.nn.safe_embedding_lookup_sparse(p, s, w, combiner=combiner,
                                                   default_id=default_id, max_norm=1.2)

    assert traced(params, sp, sw).tobytes() == got.tobytes()


# ---- embedding_bag ------------------------------------------------------------------------------

def test_embedding_bag_offsets():
    params = RNG.standard_normal((5, 2))
    ids = np.array([4, 0, 0, 2, 1, 3])
    offsets = np.array([0, 2, 2, 5])
    w = RNG.uniform(0.5, 1.5, 6)
    seg = np.repeat(np.arange(4), np.diff(np.append(offsets, len(ids))))
    for combiner in ("sum", "mean", "sqrtn"):
        got = ndx.nn.embedding_bag(params, ids, offsets, combiner=combiner,
                                   per_sample_weights=w)
        np.testing.assert_allclose(got, np_bags(params, ids, seg, 4, w, combiner, None),
                                   rtol=1e-12)
    last = ndx.nn.embedding_bag(params, ids, np.append(offsets, 6), include_last_offset=True)
    np.testing.assert_allclose(last, np_bags(params, ids, seg, 4, None, "sum", None))
    fixed = ndx.nn.embedding_bag(params, ids.reshape(3, 2), combiner="mean")
    np.testing.assert_allclose(fixed, params[ids].reshape(3, 2, 2).mean(axis=1), rtol=1e-12)

    @ndx.function
    def traced(p, i, o):
        return ndx.nn.embedding_bag(p, i, o, combiner="mean")

    assert traced(params, ids, offsets).tobytes() == \
        ndx.nn.embedding_bag(params, ids, offsets, combiner="mean").tobytes()
    with pytest.raises(ndx.InvalidArgumentError, match=r"offsets\[0\] = 1"):
        ndx.nn.embedding_bag(params, ids, [1, 3])


# ---- gradients ----------------------------------------------------------------------------------

@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("max_norm", [None, 0.9])
def test_tape_gradient_is_slices_and_matches_differences(combiner, max_norm):
    vocab, dim = 6, 3
    table = RNG.standard_normal((vocab, dim))
    indices, ids, weights = random_sparse(4, 3, vocab, with_empty=False)
    sp = ndx.SparseTensor(indices, ids, [4, 3])
    sw = ndx.SparseTensor(indices, weights, [4, 3])
    target = RNG.standard_normal((int(indices[-1, 0]) + 1, dim))

    def np_loss(t):
        out = np_bags(t, ids, indices[:, 0], len(target), weights, combiner, max_norm)
        return np.sum((out - target) ** 2)

    var = ndx.Variable(table)
    with ndx.GradientTape() as tape:
        out = ndx.nn.embedding_lookup_sparse(var, sp, sw, combiner=combiner, max_norm=max_norm)
        loss = ndx.reduce_sum(ndx.square(out - target))
    grad = tape.gradient(loss, var)
    assert isinstance(grad, ndx.IndexedSlices)
    np.testing.assert_array_equal(np.asarray(grad.indices).reshape(-1), ids)
    dense = np.zeros_like(table)
    np.add.at(dense, np.asarray(grad.indices).reshape(-1), np.asarray(grad.values))
    want = np.zeros_like(table)
    h = 1e-6
    for pos in np.ndindex(*table.shape):
        plus, minus = table.copy(), table.copy()
        plus[pos] += h
        minus[pos] -= h
        want[pos] = (np_loss(plus) - np_loss(minus)) / (2 * h)
    np.testing.assert_allclose(dense, want, rtol=1e-6, atol=1e-7)

    @ndx.function
    def traced(s, w):
        with ndx.GradientTape() as t:
            y = ndx.nn.embedding_lookup_sparse(var, s, w, combiner=combiner, max_norm=max_norm)
            z = ndx.reduce_sum(ndx.square(y - target))
        return t.gradient(z, var)

    g2 = traced(sp, sw)
    assert isinstance(g2, ndx.IndexedSlices)
    assert np.asarray(g2.values).tobytes() == np.asarray(grad.values).tobytes()


def test_training_an_embedding_model():
    """A bag-of-ids regression: mean embedding per example dotted with a weight vector, trained
    with SGD inside ndx.function; the loss falls and the first step is NumPy's."""
    vocab, dim, lr = 10, 4, 0.5
    table0 = RNG.standard_normal((vocab, dim)) * 0.5
    head = RNG.standard_normal(dim)
    indices, ids, weights = random_sparse(8, 4, vocab, with_empty=False)
    sp = ndx.SparseTensor(indices, ids, [8, 4])
    sw = ndx.SparseTensor(indices, weights, [8, 4])
    labels = RNG.standard_normal(int(indices[-1, 0]) + 1)
    table = ndx.Variable(table0)
    opt = ndx.optimizers.SGD(learning_rate=lr)

    @ndx.function
    def step(s, w, y):
        with ndx.GradientTape() as tape:
            emb = ndx.nn.embedding_lookup_sparse(table, s, w, combiner="mean")
            pred = ndx.reduce_sum(emb * head, 1)
            loss = ndx.reduce_mean(ndx.square(pred - y))
        opt.apply_gradients([(tape.gradient(loss, table), table)])
        return loss

    # NumPy's first step: d loss / d table[id_i] = 2 (pred_r - y_r) / R * w_i / W_r * head.
    rows = len(labels)
    emb = np_bags(table0, ids, indices[:, 0], rows, weights, "mean", None)
    err = emb @ head - labels
    wsum = np.bincount(indices[:, 0], weights, minlength=rows)
    grad = np.zeros_like(table0)
    for i, (r, tid) in enumerate(zip(indices[:, 0], ids)):
        grad[tid] += 2 * err[r] / rows * weights[i] / wsum[r] * head
    first = step(sp, sw, labels)
    np.testing.assert_allclose(first, np.mean(err ** 2), rtol=1e-12)
    np.testing.assert_allclose(table.numpy(), table0 - lr * grad, rtol=1e-10, atol=1e-12)
    losses = [float(step(sp, sw, labels)) for _ in range(40)]
    assert losses[-1] < 0.5 * float(first)
    assert all(b <= a + 1e-12 for a, b in zip(losses, losses[1:]))


@pytest.mark.parametrize("fn", ["embedding_lookup", "embedding_lookup_sparse",
                                "safe_embedding_lookup_sparse", "embedding_bag"])
def test_docstring_examples(fn):
    check_docstring_examples(getattr(ndx.nn, fn))


def test_sharded_gradients_are_slices_per_shard():
    full = RNG.standard_normal((11, 2))
    parts = [ndx.Variable(full[p::3]) for p in range(3)]
    sp = ndx.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]], [4, 7, 2, 4], [2, 2])
    w = RNG.uniform(0.5, 2.0, 4)
    sw = ndx.SparseTensor(sp.indices, w, [2, 2])
    with ndx.GradientTape() as tape:
        y = ndx.nn.embedding_lookup_sparse(parts, sp, sw, combiner="sum",
                                           partition_strategy="mod")
        loss = ndx.reduce_sum(y)
    grads = tape.gradient(loss, parts)
    want = np.zeros_like(full)
    np.add.at(want, [4, 7, 2, 4], w[:, None] * np.ones(2))
    for p, g in enumerate(grads):
        assert isinstance(g, ndx.IndexedSlices)
        dense = np.zeros_like(full[p::3])
        np.add.at(dense, np.asarray(g.indices).reshape(-1), np.asarray(g.values))
        np.testing.assert_allclose(dense, want[p::3], rtol=1e-12)


def test_bfloat16_table_accumulates_in_float():
    table = RNG.standard_normal((6, 3)).astype(np.float32)
    bf = ndx.bfloat16(table)
    exact = bf.to_float32()
    ids, offsets = np.array([0, 5, 5, 2, 1]), np.array([0, 3])
    got = ndx.nn.embedding_bag(bf, ids, offsets, combiner="mean")
    assert isinstance(got, ndx.BFloat16Array)
    want = ndx.bfloat16(np.stack([exact[[0, 5, 5]].mean(0), exact[[2, 1]].mean(0)]))
    np.testing.assert_allclose(got.to_float32(), want.to_float32(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_weights_gradient_matches_differences(combiner):
    table = RNG.standard_normal((5, 3))
    ids, offsets = np.array([4, 1, 4, 0, 2]), np.array([0, 3, 3])
    w = RNG.uniform(0.3, 2.0, 5)
    target = RNG.standard_normal((3, 3))
    seg = np.array([0, 0, 0, 2, 2])

    def np_loss(wv):
        return np.sum((np_bags(table, ids, seg, 3, wv, combiner, 0.8) - target) ** 2)

    with ndx.GradientTape() as tape:
        tape.watch(w)
        out = ndx.nn.embedding_bag(table, ids, offsets, combiner=combiner,
                                   per_sample_weights=w, max_norm=0.8)
        loss = ndx.reduce_sum(ndx.square(out - target))
    got = np.asarray(tape.gradient(loss, w))
    h = 1e-6
    want = np.array([(np_loss(w + h * e) - np_loss(w - h * e)) / (2 * h) for e in np.eye(5)])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
