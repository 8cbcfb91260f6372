"""ndx.gradients, ndx.GradientTape and ndx.IndexedSlices: every op with a gradient in C, checked
against central differences computed here in NumPy (float64, of the op's traced forward), plus
the structure of the answers (None, dense, slices of depth 1 and k), densifying, the tape's rules
and the errors."""
import numpy as np
import pytest

import ndx

RNG = np.random.default_rng(20)


def dense(grad, shape):
    """A gradient as a dense float64 array, by NumPy alone (np.add.at over the slices)."""
    if grad is None:
        return np.zeros(shape)
    if isinstance(grad, ndx.IndexedSlices):
        assert tuple(grad.dense_shape) == tuple(shape)
        out = np.zeros(shape, np.float64)
        idx = np.asarray(grad.indices)
        idx = idx.reshape(-1, 1) if idx.ndim == 1 else idx
        if idx.shape[1] == 0:  # index depth 0: every row is the whole tensor
            return out + np.sum(np.asarray(grad.values, np.float64), axis=0)
        np.add.at(out, tuple(idx.T), grad.values)
        return out
    return np.asarray(grad, np.float64)


def traced(fn, args, wrt, ws, single):
    """The gradients of sum(w * fn(*args)) for args[i], i in wrt, by ndx.gradients in a trace."""
    @ndx.function
    def grads(xs):
        out = fn(*xs)
        out = [out] if single else out
        return ndx.gradients(out, [xs[i] for i in wrt], grad_ys=ws)
    return grads(args)


def check(fn, args, wrt, h=1e-6, tol=1e-6, gradients=traced):
    """fn(*tensors) -> a tensor or list of tensors. The gradient of sum(w * fn) for each arg in
    wrt, by gradients(fn, args, wrt, ws, single) (ndx.gradients in a trace by default), against
    central differences."""
    forward = ndx.function(lambda xs: fn(*xs))
    ys = forward(list(args))
    single = not isinstance(ys, list)
    ys = [ys] if single else ys
    ws = [RNG.standard_normal(np.shape(y)) for y in ys]

    def loss(xs):
        out = forward(xs)
        out = [out] if single else out
        return sum(float(np.sum(w * y)) for w, y in zip(ws, out))

    got = gradients(fn, list(args), wrt, ws, single)
    for i, g in zip(wrt, got):
        x = args[i]
        num = np.zeros(x.shape)
        for j in range(x.size):
            plus, minus = [a.copy() for a in args], [a.copy() for a in args]
            plus[i].flat[j] += h
            minus[i].flat[j] -= h
            num.flat[j] = (loss(plus) - loss(minus)) / (2 * h)
        np.testing.assert_allclose(dense(g, x.shape), num, rtol=tol, atol=tol,
                                   err_msg=f"argument {i}")
    return got


def f64(*shape):
    return RNG.standard_normal(shape)


def test_gather_nd_gives_indexed_slices_depth_1():
    p, idx = f64(5, 3), np.array([[1], [4], [1]], np.int32)
    (g,) = check(lambda p, i: ndx.gather_nd(p, i), [p, idx], [0])
    assert isinstance(g, ndx.IndexedSlices)
    assert g.indices.ndim == 1 and list(g.indices) == [1, 4, 1]
    assert g.values.shape == (3, 3) and list(g.dense_shape) == [5, 3]


def test_gather_nd_depth_2_and_batch_dims():
    p, idx = f64(3, 4, 2), np.array([[0, 1], [2, 3], [0, 1]], np.int64)
    (g,) = check(lambda p, i: ndx.gather_nd(p, i), [p, idx], [0])
    assert isinstance(g, ndx.IndexedSlices) and g.indices.shape == (3, 2)
    p, idx = f64(2, 4, 3), np.array([[[1], [3]], [[0], [0]]], np.int32)
    check(lambda p, i: ndx.gather_nd(p, i, batch_dims=1), [p, idx], [0])


def test_scatter_nd_and_tensor_scatter_family():
    idx = np.array([[0], [2], [0]], np.int32)
    u = f64(3, 2)
    check(lambda i, u: ndx.scatter_nd(i, u, [4, 2]), [idx, u], [1])
    t = f64(4, 2)
    check(lambda t, i, u: ndx.tensor_scatter_nd_add(t, i, u), [t, idx, u], [0, 2])
    check(lambda t, i, u: ndx.tensor_scatter_nd_sub(t, i, u), [t, idx, u], [0, 2])
    # update with a duplicate: the later row wins its slot, the overwritten one gets 0
    check(lambda t, i, u: ndx.tensor_scatter_nd_update(t, i, u), [t, idx, u], [0, 2])
    t, u = np.array([[0., 5.], [1., 2.], [3., -1.], [4., 4.]]), np.array([[1., 7.], [0.5, 3.]])
    i2 = np.array([[0], [2]], np.int32)
    check(lambda t, i, u: ndx.tensor_scatter_nd_min(t, i, u), [t, i2, u], [0, 2])
    check(lambda t, i, u: ndx.tensor_scatter_nd_max(t, i, u), [t, i2, u], [0, 2])


@pytest.mark.parametrize("op", [ndx.dynamic_stitch, ndx.parallel_dynamic_stitch])
def test_dynamic_stitch(op):
    i0, i1 = np.array([0, 2], np.int32), np.array([2, 1, 3], np.int32)  # 2 twice: i1 wins
    d0, d1 = f64(2, 2), f64(3, 2)
    check(lambda a, b, c, d: op([a, b], [c, d]), [i0, i1, d0, d1], [2, 3])


def test_dynamic_partition():
    data, parts = f64(5, 2), np.array([1, 0, 1, 1, 0], np.int32)
    check(lambda d, p: ndx.dynamic_partition(d, p, 2), [data, parts], [0])


def test_sparse_ops():
    ind = np.array([[1, 0], [0, 1], [2, 1]], np.int64)
    shape = np.array([3, 2], np.int64)
    vals = f64(3)

    def reorder(i, v, s):
        return ndx.sparse.reorder(ndx.SparseTensor._from_parts(i, v, s)).values
    check(reorder, [ind, vals, shape], [1])

    def to_dense(i, v, s, dv):
        return ndx.sparse.to_dense(ndx.SparseTensor._from_parts(i, v, s), dv)
    check(to_dense, [np.sort(ind.view("i8,i8"), axis=0).view(np.int64).reshape(3, 2), vals,
                     shape, np.array(0.5)], [1, 3])

    def concat(i, v, s, j, w, t):
        return ndx.sparse.concat(0, [ndx.SparseTensor._from_parts(i, v, s), ndx.SparseTensor._from_parts(j, w, t)]).values
    check(concat, [ind, vals, shape, ind[:2], f64(2), shape], [1, 4])


def test_dense_to_sparse_gives_slices_of_depth_rank():
    x = np.array([[0.5, 1.5], [-2., 1.], [3., 4.]])  # (no zeros: a small step keeps them all)
    (g,) = check(lambda x: ndx.sparse.from_dense(x).values, [x], [0])
    assert isinstance(g, ndx.IndexedSlices) and g.indices.shape == (6, 2)


@pytest.mark.parametrize("name,fn", [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b), ("maximum", ndx.maximum), ("minimum", ndx.minimum),
    ("floormod", ndx.floormod)])
def test_binary_ops_with_broadcasting(name, fn):
    a, b = f64(3, 4), RNG.uniform(0.5, 2.0, (4,))
    check(fn, [a, b], [0, 1])


def test_unary_and_shape_ops():
    x = f64(2, 3)
    check(lambda x: -x, [x], [0])
    check(ndx.identity, [x], [0])
    check(lambda x: ndx.reshape(x, [3, 2]), [x], [0])
    check(lambda x: ndx.reduce_sum(x, 1), [x], [0])
    check(lambda x: ndx.reduce_sum(x), [x], [0])
    check(lambda v: ndx.fill([2, 3], v), [np.array(1.5)], [0])
    check(lambda x: ndx.cast(ndx.cast(x, ndx.complex128), ndx.float64) * 2.0, [x], [0])


def taped(fn, args, wrt, ws, single):
    """The same gradients by an eager ndx.GradientTape."""
    xs = [np.array(a) for a in args]
    with ndx.GradientTape() as tape:
        for i in wrt:  # (only what is differentiated: an integer input has no gradient)
            tape.watch(xs[i])
        out = fn(*xs)
    out = [out] if single else out
    return tape.gradient(out, [xs[i] for i in wrt], output_gradients=ws)


@pytest.mark.parametrize("gradients", [traced, taped])
def test_abs_square_sqrt(gradients):
    x = f64(2, 3)
    x = np.where(np.abs(x) < 0.1, 0.5, x)  # (abs: away from its kink at 0)
    check(ndx.abs, [x], [0], gradients=gradients)
    check(lambda x: abs(ndx.multiply(x, 3.0)), [x], [0], gradients=gradients)
    check(ndx.square, [x], [0], gradients=gradients)
    check(ndx.sqrt, [RNG.uniform(0.5, 3.0, (2, 3))], [0], gradients=gradients)
    check(lambda x: ndx.sqrt(ndx.square(x) + 1.0), [x], [0], gradients=gradients)


def test_comparisons_and_logical_ops_have_no_gradient():
    @ndx.function
    def f(x):
        mask = ndx.logical_not(ndx.logical_and(x > 0.0, ndx.less_equal(x, 2.0)))
        y = ndx.cast(mask, ndx.float64) * x
        return ndx.gradients(ndx.reduce_sum(y), [x])[0]
    x = np.array([-1.0, 0.5, 3.0])
    np.testing.assert_array_equal(f(x), [1.0, 0.0, 1.0])  # the mask is a constant to it


def test_cast_to_float32():
    x = f64(4)
    check(lambda x: ndx.cast(x, ndx.float32), [x], [0], h=1e-3, tol=1e-4)


def test_unconnected_and_non_differentiable_give_none():
    @ndx.function
    def f(x, y):
        return ndx.gradients(ndx.reduce_sum(x * 2.0), [x, y, ndx.floordiv(x, 2.0)])
    gx, gy, gf = f(f64(3), f64(3))
    np.testing.assert_array_equal(gx, [2., 2., 2.])
    assert gy is None and gf is None

    @ndx.function
    def through_floordiv(x):
        return ndx.gradients(ndx.reduce_sum(ndx.floordiv(x, 2.0)), x)
    assert through_floordiv(f64(3)) == [None]


def test_integer_source_is_an_error_naming_the_node_and_line():
    @ndx.function
    def f(p, i):
        return ndx.gradients(ndx.gather_nd(p, i), i)
    with pytest.raises(ndx.InvalidArgumentError, match=r"test_gradients\.py:\d+"):
        f(f64(3, 2), np.array([[0]], np.int32))


def test_gradients_outside_a_trace_is_a_clear_error():
    with pytest.raises(RuntimeError, match="traced by ndx.function"):
        ndx.gradients(np.ones(2), np.ones(2))


def test_indexed_slices_densify_in_arithmetic_and_convert_to_tensor():
    @ndx.function
    def f(p, i):
        (g,) = ndx.gradients(ndx.gather_nd(p, i), [p])
        return g * 1.0, ndx.convert_to_tensor(g), g
    p, i = f64(4, 2), np.array([[3], [3], [0]], np.int32)
    a, b, s = f(p, i)
    want = np.zeros((4, 2))
    want[3] = 2
    want[0] = 1
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(b, want)
    assert isinstance(s, ndx.IndexedSlices)
    np.testing.assert_array_equal(np.asarray(s), want)  # eager densify
    np.testing.assert_array_equal(ndx.convert_to_tensor(s), want)


def test_gradient_tape_variables_watch_persistent():
    v = ndx.Variable(np.array([1.0, 2.0, 3.0]), name="v")
    frozen = ndx.Variable(np.array([1.0]), trainable=False)

    @ndx.function
    def f(x):
        with ndx.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = ndx.reduce_sum(v * x * x) + ndx.reduce_sum(frozen * 1.0)
        dv, dx, dfrozen = tape.gradient(y, [v, x, frozen])
        again = tape.gradient(y, {"v": v})
        return dv, dx, dfrozen, again["v"]
    x = np.array([1.0, -1.0, 2.0])
    dv, dx, dfrozen, dv2 = f(x)
    np.testing.assert_allclose(dv, x * x)
    np.testing.assert_allclose(dx, 2 * np.array([1.0, 2.0, 3.0]) * x)
    assert dfrozen is None
    np.testing.assert_allclose(dv2, x * x)


def test_gradient_tape_unwatched_tensor_and_once_only():
    @ndx.function
    def f(x):
        with ndx.GradientTape() as tape:
            y = ndx.reduce_sum(x * x)
        g = tape.gradient(y, x)
        with pytest.raises(RuntimeError, match="non-persistent"):
            tape.gradient(y, x)
        return g, tape.gradient if False else ndx.zeros_like(x)
    g, _ = f(np.ones(2))
    assert g is None


def test_gradient_tape_output_gradients_and_zero_unconnected():
    @ndx.function
    def f(x, y):
        with ndx.GradientTape() as tape:
            tape.watch([x, y])
            z = x * 3.0
        return tape.gradient(z, [x, y], output_gradients=np.array([1.0, 2.0]),
                             unconnected_gradients="zero")
    gx, gy = f(np.ones(2), np.ones(2))
    np.testing.assert_array_equal(gx, [3.0, 6.0])
    np.testing.assert_array_equal(gy, [0.0, 0.0])


def test_a_gradient_the_graph_cannot_build_names_the_forward_node_and_its_line():
    @ndx.function(input_signature=[ndx.TensorSpec([4, 2], ndx.float64),
                                   ndx.TensorSpec([4, None], ndx.int32)])
    def f(p, i):
        z = p * 2.0
        y = ndx.gather_nd(z, i, batch_dims=1)
        return ndx.gradients(y, p)
    line = f.python_function.__code__.co_firstlineno + 4  # y = ... (after 2 decorator lines)
    with pytest.raises(TypeError, match=rf"test_gradients\.py:{line}: GatherNd: gradient of "
                                        rf"GatherNd: with batch_dims > 0, needs the index depth"):
        f.get_concrete_function()


@pytest.mark.parametrize("fn", [lambda a, b: a * b, lambda a, b: a / b, lambda a, b: a - b,
                                lambda a, b: ndx.square(a) * b, lambda a, b: ndx.sqrt(a) + b])
def test_complex_gradients_follow_tensorflows_convention(fn):
    """For complex x, TensorFlow's gradient of L = Re(sum(conj(w) * y)) is dL/dRe(x) +
    i dL/dIm(x); checked by central differences along both parts."""
    a = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    b = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    w = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    forward = ndx.function(lambda a, b: fn(a, b))

    @ndx.function
    def grads(a, b):
        return ndx.gradients(fn(a, b), [a, b], grad_ys=w)

    def loss(a, b):
        return float(np.real(np.sum(np.conj(w) * forward(a, b))))

    got = grads(a, b)
    h = 1e-6
    for k, x in enumerate((a, b)):
        num = np.zeros(3, np.complex128)
        for j in range(3):
            for step in (1, 1j):
                plus, minus = [a.copy(), b.copy()], [a.copy(), b.copy()]
                plus[k][j] += h * step
                minus[k][j] -= h * step
                d = (loss(*plus) - loss(*minus)) / (2 * h)
                num[j] += d if step == 1 else 1j * d
        np.testing.assert_allclose(got[k], num, rtol=1e-6, atol=1e-6)


# ---- dims known only at run time (an input_signature's None), index depth 0 ----------------


def traced_once(*specs, unknown_rank=False):
    """A `gradients` for check: ndx.gradients in one trace whose input_signature is specs (the
    grad_ys too, every dim None; their rank too with unknown_rank), reused for every call, so
    that each call runs the same graph at new run-time shapes."""
    cache = {}

    def gradients(fn, args, wrt, ws, single):
        if "f" not in cache:
            wspecs = [ndx.TensorSpec(None if unknown_rank else [None] * np.ndim(w), F64)
                      for w in ws]

            @ndx.function(input_signature=list(specs) + wspecs)
            def grads(*a):
                xs, w = a[:len(specs)], list(a[len(specs):])
                out = fn(*xs)
                return ndx.gradients([out] if single else out, [xs[i] for i in wrt], grad_ys=w)
            cache["f"] = grads
        got = cache["f"](*args, *ws)
        assert cache["f"].experimental_get_tracing_count() == 1
        return got
    return gradients


F64 = ndx.float64


def spec(*dims, dtype=F64):
    return ndx.TensorSpec(list(dims), dtype)


@pytest.mark.parametrize("name,fn", [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b), ("maximum", ndx.maximum), ("minimum", ndx.minimum),
    ("floormod", ndx.floormod)])
@pytest.mark.parametrize("specs,shapes", [
    ((spec(None, 2), spec(None, 2)), [((3, 2), (3, 2)), ((1, 2), (4, 2)), ((4, 2), (1, 2)),
                                      ((1, 2), (1, 2))]),
    ((spec(None, 2), spec(2)), [((3, 2), (2,)), ((1, 2), (2,))]),
    ((spec(None, 1), spec(1, None)), [((3, 1), (1, 4)), ((1, 1), (1, 4)), ((3, 1), (1, 1))]),
    ((spec(), spec(None)), [((), (4,)), ((), (1,))]),
    ((spec(None, None), spec(None)), [((2, 3), (3,)), ((2, 1), (3,)), ((2, 3), (1,))]),
    ((ndx.TensorSpec(None, F64), spec(None)), [((2, 3), (3,)), ((4,), (1,)), ((), (2,))])])
def test_binary_ops_at_unknown_dims(name, fn, specs, shapes):
    """The usual training step traced with a variable batch: the broadcast axes of each operand's
    gradient are decided at run time (TensorFlow's BroadcastGradientArgs), dims of 1 included."""
    gradients = traced_once(*specs, unknown_rank=specs[0].shape is None)
    for sa, sb in shapes:
        a, b = RNG.standard_normal(sa), RNG.uniform(0.5, 2.0, sb)
        check(fn, [a, b], [0, 1], gradients=gradients)


def test_training_step_with_a_variable_batch():
    """gather_nd(table, ids) * z and diff * diff of two different tensors, batch unknown."""
    table = f64(5, 2)
    gradients = traced_once(spec(5, 2), spec(None, 1, dtype=ndx.int32), spec(None, 2),
                            spec(None, 2))

    def step(t, ids, z, target):
        diff = ndx.gather_nd(t, ids) * z - target
        return diff * (target - diff)
    for n in (3, 1):
        ids = RNG.integers(0, 5, (n, 1)).astype(np.int32)
        check(step, [table, ids, f64(n, 2), f64(n, 2)], [0, 2, 3], gradients=gradients)


@pytest.mark.parametrize("axis,keepdims", [(1, False), (1, True), ((0, 2), False), (-1, False)])
def test_reduce_sum_with_unknown_kept_dims(axis, keepdims):
    gradients = traced_once(spec(None, None, None))
    for shape in [(2, 3, 4), (1, 3, 1), (3, 1, 2)]:
        check(lambda x: ndx.reduce_sum(x, axis, keepdims=keepdims), [f64(*shape)], [0],
              gradients=gradients)


def test_reduce_sum_with_axes_fed_at_run_time():
    x = f64(2, 3, 4)
    for axes in ([1], [0, 2], [-1], []):
        check(lambda x, a: ndx.reduce_sum(x, a), [x, np.array(axes, np.int32)], [0],
              gradients=traced_once(spec(None, None, None), spec(None, dtype=ndx.int32)))
    x = f64(3, 2)  # a rank unknown at build time
    check(lambda x, a: ndx.reduce_sum(x, a), [x, np.array([0], np.int32)], [0],
          gradients=traced_once(ndx.TensorSpec(None, F64), spec(None, dtype=ndx.int32)))


def test_binary_shape_mismatch_at_run_time_is_a_clear_error():
    gradients = traced_once(spec(None, 2), spec(None, 2))
    with pytest.raises(ndx.InvalidArgumentError, match=r"Incompatible shapes|broadcast"):
        gradients(lambda a, b: a * b, [f64(3, 2), f64(4, 2)], [0, 1], [f64(3, 2)], True)


def test_gather_nd_depth_0_tensorflows_example():
    """params [3], indices [2, 0]: each row is all of params; dy [[1, 2, 3], [4, 5, 6]] gives
    d params [5, 7, 9], with indices' leading dim known and unknown at build time."""
    p, idx = np.zeros(3), np.zeros((2, 0), np.int32)
    dy = np.array([[1., 2., 3.], [4., 5., 6.]])
    for ispec in (spec(2, 0, dtype=ndx.int32), spec(None, 0, dtype=ndx.int32)):
        @ndx.function(input_signature=[spec(3), ispec])
        def f(p, i):
            return ndx.gradients(ndx.gather_nd(p, i), p, grad_ys=ndx.constant(dy))[0]
        np.testing.assert_array_equal(dense(f(p, idx), (3,)), [5., 7., 9.])


I0 = spec(None, 0, dtype=ndx.int32)


@pytest.mark.parametrize("n", [3, 1, 0])
def test_every_index_op_at_depth_0(n):
    """Index depth 0 (each row is the whole tensor, a scalar too), rows known only at run time."""
    idx = np.zeros((n, 0), np.int32)
    for shape in [(2,), ()]:
        t, u = f64(*shape), f64(n, *shape)
        dims = [None] * len(shape)
        check(lambda p, i: ndx.gather_nd(p, i), [f64(2, 2), idx], [0],
              gradients=traced_once(spec(None, None), I0))
        check(lambda i, u: ndx.scatter_nd(i, u, list(shape)), [idx, u], [1],
              gradients=traced_once(I0, spec(None, *dims)))
        for op in (ndx.tensor_scatter_nd_add, ndx.tensor_scatter_nd_sub,
                   ndx.tensor_scatter_nd_update, ndx.tensor_scatter_nd_min,
                   ndx.tensor_scatter_nd_max):
            check(lambda t, i, u: op(t, i, u), [t, idx, u], [0, 2],
                  gradients=traced_once(spec(*dims), I0, spec(None, *dims)))


def test_gather_nd_depth_0_with_batch_dims():
    p, idx = f64(2, 3), np.zeros((2, 2, 0), np.int32)
    check(lambda p, i: ndx.gather_nd(p, i, batch_dims=1), [p, idx], [0],
          gradients=traced_once(spec(2, 3), spec(None, None, 0, dtype=ndx.int32)))


@pytest.mark.parametrize("depth", [1, 2, 0])
def test_index_ops_at_an_index_depth_known_only_at_run_time(depth):
    """indices [None, None]: gather_nd's gradient is TensorFlow's dense scatter_nd, the
    tensor_scatters' gather their rows at run time (update: the winning row of duplicates)."""
    t = f64(3, 2)
    idx = np.array([[2, 1], [0, 0], [2, 1]], np.int32)[:, :depth]
    u = f64(3, *t.shape[depth:])
    ispec = spec(None, None, dtype=ndx.int32)
    check(lambda p, i: ndx.gather_nd(p, i), [t, idx], [0],
          gradients=traced_once(spec(None, None), ispec))
    for op in (ndx.tensor_scatter_nd_add, ndx.tensor_scatter_nd_sub, ndx.tensor_scatter_nd_update):
        check(lambda t, i, u: op(t, i, u), [t, idx, u], [0, 2],
              gradients=traced_once(spec(None, None), ispec, spec(*[None] * u.ndim)))
