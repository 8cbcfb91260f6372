"""TensorFlow 2-style programs of the tf.sparse ops: one ndx.function with an input_signature
of unknown lengths (indices [None, 2], values [None], dense shapes and dense operands of unknown
dims), traced once and called at several sizes, each result against NumPy on the dense form;
and gradients taken by a GradientTape inside such a function (unknown dims at trace time)
against float64 central differences."""
import numpy as np
import pytest

import ndx

RNG = np.random.default_rng(3232)
I64, F64 = ndx.int64, ndx.float64
SP = [ndx.TensorSpec([None, 2], I64), ndx.TensorSpec([None], F64), ndx.TensorSpec([2], I64)]
SIZES = [(3, 4, 5), (1, 1, 1), (6, 2, 9), (4, 7, 0), (5, 5, 20)]  # rows, cols, entries asked


def random_sparse(rows, cols, nnz):
    """Canonical (row-major, distinct) indices of a [rows, cols] matrix and float64 values."""
    flat = np.sort(RNG.choice(rows * cols, size=min(nnz, rows * cols), replace=False))
    idx = np.stack([flat // cols, flat % cols], 1).astype(np.int64).reshape(-1, 2)
    return idx, RNG.standard_normal(len(flat)), np.array([rows, cols], np.int64)


def dense(idx, values, shape):
    out = np.zeros(tuple(int(d) for d in shape))
    for k, where in enumerate(np.asarray(idx).reshape(len(values), len(shape))):
        out[tuple(where)] += values[k]
    return out


def test_add_reduce_sum_matmul_at_several_sizes():
    @ndx.function(input_signature=SP + SP + [ndx.TensorSpec([None, None], F64)])
    def program(ai, av, ashape, bi, bv, bshape, w):
        a, b = ndx.SparseTensor(ai, av, ashape), ndx.SparseTensor(bi, bv, bshape)
        s = ndx.sparse.add(a, b)
        return [s.indices, s.values, s.dense_shape, ndx.sparse.reduce_sum(s, axis=1),
                ndx.sparse.reduce_sum(a, axis=0, keepdims=True),
                ndx.sparse.sparse_dense_matmul(a, w),
                ndx.sparse.sparse_dense_matmul(a, ndx.sparse.sparse_dense_matmul(a, w),
                                               adjoint_a=True),
                ndx.sparse.add(a, ndx.sparse.to_dense(b))]

    for rows, cols, nnz in SIZES:
        a, b = random_sparse(rows, cols, nnz), random_sparse(rows, cols, nnz // 2 + 1)
        w = RNG.standard_normal((cols, rows))
        si, sv, sshape, rsum, csum, mm, adj, mixed = program(*a, *b, w)
        da, db = dense(*a), dense(*b)
        np.testing.assert_allclose(dense(si, sv, sshape), da + db, rtol=1e-12, atol=1e-12)
        flat = np.asarray(si)[:, 0] * cols + np.asarray(si)[:, 1]
        assert np.all(np.diff(flat) > 0)  # the union in canonical order
        np.testing.assert_allclose(rsum, (da + db).sum(1), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(csum, da.sum(0, keepdims=True), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(mm, da @ w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(adj, da.T @ (da @ w), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(mixed, da + db, rtol=1e-12, atol=1e-12)
    assert program.experimental_get_tracing_count() == 1


def test_slice_reshape_fill_softmax_at_several_sizes():
    @ndx.function(input_signature=SP + [ndx.TensorSpec([2], I64)] * 2)
    def program(i, v, shape, start, size):
        sp = ndx.SparseTensor(i, v, shape)
        sl = ndx.sparse.slice(sp, start, size)
        flat = ndx.sparse.reshape(sp, [-1])
        filled, empty = ndx.sparse.fill_empty_rows(sp, -1.0)
        soft = ndx.sparse.softmax(sp)
        return [sl.indices, sl.values, sl.dense_shape, flat.indices, flat.values,
                flat.dense_shape, filled.indices, filled.values, empty, soft.values]

    for rows, cols, nnz in SIZES:
        idx, vals, shape = random_sparse(rows, cols, nnz)
        start = np.array([rows // 2, 1 if cols > 1 else 0], np.int64)
        size = np.array([rows, 2], np.int64)  # past the end: the output shape is clipped
        (sli, slv, sls, fi, fv, fs, ei, ev, empty, soft) = program(idx, vals, shape, start, size)
        d = dense(idx, vals, shape)
        want_shape = np.minimum(size, shape - start)
        np.testing.assert_array_equal(sls, want_shape)
        np.testing.assert_array_equal(
            dense(sli, slv, sls), d[start[0]:start[0] + size[0], start[1]:start[1] + size[1]])
        np.testing.assert_array_equal(fs, [rows * cols])
        np.testing.assert_array_equal(dense(fi, fv, fs), d.reshape(-1))
        present = np.zeros(rows, bool)
        present[idx[:, 0]] = True
        np.testing.assert_array_equal(empty, ~present)
        want_i = sorted([tuple(r) for r in idx] + [(r, 0) for r in range(rows) if not present[r]])
        np.testing.assert_array_equal(np.asarray(ei).reshape(-1, 2), np.array(want_i).reshape(-1, 2))
        np.testing.assert_array_equal(dense(ei, ev, shape),
                                      d + np.where(present, 0.0, -1.0)[:, None] *
                                      (np.arange(cols) == 0)[None, :])
        want_soft = np.empty_like(vals)
        for r in range(rows):  # each row's entries present, implicit zeros ignored
            sel = idx[:, 0] == r
            if sel.any():
                e = np.exp(vals[sel] - vals[sel].max())
                want_soft[sel] = e / e.sum()
        np.testing.assert_allclose(soft, want_soft, rtol=1e-12, atol=1e-15)
    assert program.experimental_get_tracing_count() == 1


def numeric_gradient(loss, x, h=1e-6):
    g = np.zeros_like(x)
    for j in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus.flat[j] += h
        minus.flat[j] -= h
        g.flat[j] = (loss(plus) - loss(minus)) / (2 * h)
    return g


# Each: the op on sp and a dense operand d (giving a dense tensor or a SparseTensor), and d's
# shape from (rows, cols); the references are central differences of the same function.
GRAD_CASES = {
    "sparse_dense_matmul": (lambda sp, d: ndx.sparse.sparse_dense_matmul(sp, d),
                            lambda r, c: (c, 3)),
    "reduce_sum": (lambda sp, d: ndx.multiply(ndx.sparse.reduce_sum(sp, axis=1), d),
                   lambda r, c: (r,)),
    "add_sparse_dense": (lambda sp, d: ndx.sparse.add(sp, d), lambda r, c: (r, c)),
    "add_sparse_sparse": (lambda sp, d: ndx.sparse.add(sp, ndx.sparse.from_dense(d)),
                          lambda r, c: (r, c)),
    "slice": (lambda sp, d: ndx.sparse.slice(sp, [0, 1], [2, 2]), lambda r, c: (1,)),
    "reshape": (lambda sp, d: ndx.sparse.reshape(sp, [-1]), lambda r, c: (1,)),
    "fill_empty_rows": (lambda sp, d: ndx.sparse.fill_empty_rows(sp, ndx.reduce_sum(d))[0],
                        lambda r, c: (2,)),
    "softmax": (lambda sp, d: ndx.sparse.softmax(sp), lambda r, c: (1,)),
    "multiply": (lambda sp, d: sp * d, lambda r, c: (1, c)),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradients_by_a_tape_inside_the_function_at_unknown_dims(case):
    op, dshape = GRAD_CASES[case]
    dspec = ndx.TensorSpec([None] * len(dshape(1, 1)), F64)

    def values_of(out):
        return out.values if isinstance(out, ndx.SparseTensor) else out

    @ndx.function(input_signature=SP + [dspec, ndx.TensorSpec(None, F64)])
    def grads(i, v, shape, d, w):
        with ndx.GradientTape() as tape:
            tape.watch(v)
            tape.watch(d)
            y = values_of(op(ndx.SparseTensor(i, v, shape), d))
            loss = ndx.reduce_sum(ndx.multiply(y, w))
        return [y] + tape.gradient(loss, [v, d])

    @ndx.function(input_signature=SP + [dspec])
    def forward(i, v, shape, d):
        return values_of(op(ndx.SparseTensor(i, v, shape), d))

    for rows, cols, nnz in [(3, 4, 6), (5, 3, 4), (2, 6, 9)]:
        idx, vals, shape = random_sparse(rows, cols, nnz)
        d = RNG.standard_normal(dshape(rows, cols))
        y0 = np.asarray(forward(idx, vals, shape, d))
        w = RNG.standard_normal(y0.shape)
        y, gv, gd = grads(idx, vals, shape, d, w)
        np.testing.assert_allclose(y, y0, rtol=1e-12)

        def loss_v(x):
            return float(np.sum(np.asarray(forward(idx, x, shape, d)) * w))

        def loss_d(x):
            return float(np.sum(np.asarray(forward(idx, vals, shape, x)) * w))

        np.testing.assert_allclose(np.asarray(gv), numeric_gradient(loss_v, vals), rtol=1e-6,
                                   atol=1e-6, err_msg=f"{case}: values")
        want_d = numeric_gradient(loss_d, d)
        if gd is None:
            assert np.allclose(want_d, 0), f"{case}: d's gradient is missing"
        else:
            got_d = gd
            if isinstance(gd, ndx.IndexedSlices):
                got_d = np.zeros(d.shape)
                rows_of = np.asarray(gd.indices)
                where = tuple(rows_of.T) if rows_of.ndim == 2 else rows_of
                np.add.at(got_d, where, np.asarray(gd.values))
            np.testing.assert_allclose(np.asarray(got_d), want_d, rtol=1e-6, atol=1e-6,
                                       err_msg=f"{case}: dense operand")
    assert grads.experimental_get_tracing_count() == 1


# indices [None, None] and dense_shape [None]: the rank too is known only at run time.
ANY_RANK = [ndx.TensorSpec([None, None], I64), ndx.TensorSpec([None], F64),
            ndx.TensorSpec([None], I64)]


def random_sparse_nd(shape, nnz):
    size = int(np.prod(shape))
    flat = np.sort(RNG.choice(size, size=min(nnz, size), replace=False))
    idx = np.stack(np.unravel_index(flat, shape), 1).astype(np.int64).reshape(-1, len(shape))
    return idx, RNG.standard_normal(len(flat)), np.array(shape, np.int64)


def test_transpose_expand_dims_reset_shape_at_a_rank_known_only_at_run_time():
    @ndx.function(input_signature=ANY_RANK)
    def program(i, v, s):
        sp = ndx.SparseTensor(i, v, s)
        t = ndx.sparse.transpose(sp)
        first, last = ndx.sparse.expand_dims(sp, 0), ndx.sparse.expand_dims(sp, -1)
        before_last = ndx.sparse.expand_dims(sp, -2)
        tight = ndx.sparse.reset_shape(sp)
        return [t.indices, t.values, t.dense_shape, first.indices, first.dense_shape,
                last.indices, last.dense_shape, before_last.dense_shape, tight.dense_shape]

    for shape, nnz in [((3, 4), 5), ((2, 3, 4), 7), ((5,), 2), ((2, 1, 3, 2), 6)]:
        idx, vals, s = random_sparse_nd(shape, nnz)
        ti, tv, ts, fi, fs, li, ls, bs, tight = program(idx, vals, s)
        d = dense(idx, vals, s)
        np.testing.assert_array_equal(dense(ti, tv, ts), d.transpose())
        flat = np.ravel_multi_index(tuple(np.asarray(ti).T), tuple(ts)) if len(tv) else []
        assert np.all(np.diff(flat) > 0)  # canonical order
        np.testing.assert_array_equal(fs, [1] + list(shape))
        np.testing.assert_array_equal(fi, np.concatenate([np.zeros((len(idx), 1), np.int64),
                                                          idx], 1))
        np.testing.assert_array_equal(ls, list(shape) + [1])
        np.testing.assert_array_equal(li, np.concatenate([idx, np.zeros((len(idx), 1),
                                                                        np.int64)], 1))
        np.testing.assert_array_equal(bs, list(shape[:-1]) + [1, shape[-1]])
        np.testing.assert_array_equal(tight, idx.max(0) + 1)
    assert program.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("case", ["multiply", "divide", "transpose"])
def test_gradients_at_a_rank_known_only_at_run_time(case):
    op = {"multiply": lambda sp, d: (sp * d).values,
          "divide": lambda sp, d: (sp / d).values,
          "transpose": lambda sp, d: ndx.sparse.transpose(sp).values * ndx.reduce_sum(d)}[case]

    @ndx.function(input_signature=ANY_RANK + [ndx.TensorSpec(None, F64)] * 2)
    def grads(i, v, s, d, w):
        with ndx.GradientTape() as tape:
            tape.watch(v)
            tape.watch(d)
            loss = ndx.reduce_sum(ndx.multiply(op(ndx.SparseTensor(i, v, s), d), w))
        return tape.gradient(loss, [v, d])

    @ndx.function(input_signature=ANY_RANK + [ndx.TensorSpec(None, F64)])
    def forward(i, v, s, d):
        return op(ndx.SparseTensor(i, v, s), d)

    for shape, dshape in [((3, 4), (4,)), ((2, 3, 4), (3, 1)), ((2, 3, 4), ())]:
        idx, vals, s = random_sparse_nd(shape, 6)
        d = RNG.uniform(0.5, 2.0, dshape)
        w = RNG.standard_normal(len(vals))
        gv, gd = grads(idx, vals, s, d, w)
        np.testing.assert_allclose(gv, numeric_gradient(
            lambda x: float(np.sum(np.asarray(forward(idx, x, s, d)) * w)), vals),
            rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(gd).reshape(dshape), numeric_gradient(
            lambda x: float(np.sum(np.asarray(forward(idx, vals, s, x)) * w)), d),
            rtol=1e-6, atol=1e-6)
    assert grads.experimental_get_tracing_count() == 1
