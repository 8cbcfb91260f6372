"""Comparisons, the logical ops, abs, square and sqrt: ndx.less ... ndx.sqrt eager and traced
against NumPy in every dtype they take; the operators of Tensor, Variable and TapedArray as
TensorFlow 2's (elementwise == != < <= > >=, & | ^ ~ on bool, abs()); Tensors and Variables
unhashable, keyed by ref(); and the "replace the -1 entries" program written with
`x != -1.` traced, eager and under an eager GradientTape."""
import operator

import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples

RNG = np.random.default_rng(7)

REALS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
         "float32", "float64"]
COMPARE = [(ndx.less, np.less, operator.lt), (ndx.less_equal, np.less_equal, operator.le),
           (ndx.greater, np.greater, operator.gt),
           (ndx.greater_equal, np.greater_equal, operator.ge),
           (ndx.equal, np.equal, operator.eq), (ndx.not_equal, np.not_equal, operator.ne)]


def values(dtype, shape):
    """Small values with ties (and, for floats, NaN, inf and -0) in dtype."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        pool = [-2.5, -1.0, -0.0, 0.0, 1.0, 2.5, np.inf, -np.inf, np.nan]
    elif dt.kind == "u":
        pool = [0, 1, 2, np.iinfo(dt).max]
    else:
        pool = [np.iinfo(dt).min, -1, 0, 1, 2, np.iinfo(dt).max]
    return RNG.choice(np.array(pool, dt), size=shape)


# ---- the replace -1 entries program written with `x != -1.` ---------------------------------

def replace_minus_ones(x):
    # TensorFlow code as written: the mask from `!=`, not tf.not_equal.
    mask = x != -1.
    parts = ndx.dynamic_partition(x, ndx.cast(mask, ndx.int32), 2)
    parts[1] = parts[1] + 1.0
    where = ndx.dynamic_partition(ndx.range(ndx.shape(x)[0]), ndx.cast(mask, ndx.int32), 2)
    return ndx.dynamic_stitch(where, parts)


def reference(x):
    return np.where(x != -1, x + 1, x).astype(x.dtype)


def test_replace_minus_ones_with_the_operator_traced_and_eager():
    traced = ndx.function(replace_minus_ones,
                          input_signature=[ndx.TensorSpec([None], ndx.float32)])
    for n in (0, 1, 6, 500):
        x = np.where(RNG.random(n) < 0.3, -1, RNG.normal(size=n)).astype(np.float32)
        np.testing.assert_array_equal(traced(x), reference(x))
        np.testing.assert_array_equal(replace_minus_ones(x), reference(x))
    assert "NotEqual" in [n.type for n in traced.graph.nodes]


def test_replace_minus_ones_under_an_eager_tape():
    x = np.array([0.5, -1.0, 2.0, -1.0, 3.5], np.float32)
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    with ndx.GradientTape() as tape:
        tape.watch(x)
        y = replace_minus_ones(x)
        loss = ndx.reduce_sum(y * w)
    np.testing.assert_array_equal(np.asarray(y), reference(x))
    # every entry reaches y once, through +1 or unchanged: the gradient is w
    np.testing.assert_allclose(tape.gradient(loss, x), w)


# ---- the ops, eager and traced ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", REALS)
def test_comparisons_against_numpy(dtype):
    x, y = values(dtype, (3, 1)), values(dtype, (4,))
    traced = {}
    for op, ref, _ in COMPARE:
        traced[op] = ndx.function(lambda a, b, op=op: op(a, b))
    with np.errstate(invalid="ignore"):
        for op, ref, _ in COMPARE:
            want = ref(x, y)
            got = op(x, y)
            assert got.dtype == np.bool_ and got.shape == (3, 4)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(traced[op](x, y), want)


def test_comparison_refusals():
    with pytest.raises(TypeError, match="less: dtype bool is not supported"):
        ndx.less(np.array([True]), np.array([False]))
    with pytest.raises(TypeError, match="greater: dtype complex64 is not supported"):
        ndx.greater(np.array([1j], np.complex64), np.array([1j], np.complex64))
    with pytest.raises(ndx.InvalidArgumentError, match="less_equal: x is int32 and y is float32"):
        ndx.less_equal(np.array([1], np.int32), np.array([1], np.float32))
    with pytest.raises(ndx.InvalidArgumentError, match="shape"):
        ndx.greater(np.zeros(3, np.float32), np.zeros(4, np.float32))


def test_logical_ops_against_numpy():
    a = np.array([[True], [False]])
    b = np.array([True, False, True])
    for op, ref in ((ndx.logical_and, np.logical_and), (ndx.logical_or, np.logical_or),
                    (ndx.logical_xor, np.logical_xor)):
        np.testing.assert_array_equal(op(a, b), ref(a, b))
        np.testing.assert_array_equal(ndx.function(lambda p, q, op=op: op(p, q))(a, b), ref(a, b))
    np.testing.assert_array_equal(ndx.logical_not(b), ~b)
    assert ndx.math.logical_and is ndx.logical_and
    for op in (ndx.logical_and, ndx.logical_or):
        with pytest.raises(TypeError, match="dtype int32 is not supported"):
            op(np.array([1], np.int32), np.array([1], np.int32))
    with pytest.raises(TypeError, match="logical_not: dtype float32 is not supported"):
        ndx.logical_not(np.array([1.0], np.float32))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "float16", "float32",
                                   "float64"])
def test_abs_square_sqrt_against_numpy(dtype):
    x = values(dtype, (5, 3))
    traced_abs = ndx.function(lambda a: abs(a))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(ndx.abs(x), np.abs(x))  # abs(INT_MIN) wraps in both
        np.testing.assert_array_equal(traced_abs(x), np.abs(x))
        np.testing.assert_array_equal(ndx.square(x), np.square(x))
        np.testing.assert_array_equal(ndx.function(ndx.square)(x), np.square(x))
        if x.dtype.kind == "f":
            np.testing.assert_array_equal(ndx.sqrt(x), np.sqrt(x))
            np.testing.assert_array_equal(ndx.function(ndx.sqrt)(x), np.sqrt(x))
        else:
            with pytest.raises(TypeError, match=f"sqrt: dtype {dtype} is not supported"):
                ndx.sqrt(x)
    assert ndx.math.abs is ndx.abs and ndx.math.sqrt is ndx.sqrt


def test_square_unsigned_wraps_and_complex():
    u = np.array([0, 3, 255], np.uint8)
    np.testing.assert_array_equal(ndx.square(u), (u.astype(np.uint64) ** 2).astype(np.uint8))
    with pytest.raises(TypeError, match="abs: dtype uint8 is not supported"):
        ndx.abs(u)
    for dt in (np.complex64, np.complex128):
        c = np.array([1 + 2j, -3 - 4j, -4 + 0j, 0.25j], dt)
        np.testing.assert_allclose(ndx.square(c), c * c, rtol=1e-6)
        np.testing.assert_allclose(ndx.sqrt(c), np.sqrt(c), rtol=1e-6)
        with pytest.raises(TypeError, match="ComplexAbs"):
            ndx.abs(c)
    with pytest.raises(TypeError, match="square: dtype bool is not supported"):
        ndx.square(np.array([True]))


# ---- operators on Tensor ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float32", "float64"])
def test_tensor_operators_against_numpy(dtype):
    x, y = values(dtype, (3, 1)), values(dtype, (4,))

    @ndx.function
    def f(a, b):
        return [op(a, b) for _, _, op in COMPARE] + [op(a, 1) for _, _, op in COMPARE] + \
               [op(2, b) for _, _, op in COMPARE]

    got = f(x, y)
    one, two = np.array(1, x.dtype), np.array(2, x.dtype)
    with np.errstate(invalid="ignore"):
        want = ([op(x, y) for _, _, op in COMPARE] + [op(x, one) for _, _, op in COMPARE] +
                [op(two, y) for _, _, op in COMPARE])
    for g, w in zip(got, want):
        assert g.dtype == np.bool_
        np.testing.assert_array_equal(g, w)


def test_tensor_bool_operators_and_abs():
    a = np.array([[True], [False]])
    b = np.array([True, False, True])

    @ndx.function
    def f(p, q, v):
        return [p & q, p | q, p ^ q, ~q, True & q, False | q, True ^ q, abs(v), -abs(v)]

    v = np.array([-1.5, 0.0, 2.0], np.float32)
    got = f(a, b, v)
    want = [a & b, a | b, a ^ b, ~b, True & b, False | b, True ^ b, np.abs(v), -np.abs(v)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)

    @ndx.function
    def ints(p):
        return p & p

    with pytest.raises(TypeError, match="bool tensors only, not int32.*no bitwise ops"):
        ints(np.array([1, 2], np.int32))


def test_tensor_equality_as_tensorflow_2():
    seen = {}

    @ndx.function
    def f(a, b):
        seen["none"] = (a == None, a != None)  # noqa: E711 (TensorFlow 2's rule for None)
        # shapes that cannot broadcast: a scalar False / True, not an error
        return [a == b, a != b, a == a, a != a]

    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([1.0, 5.0], np.float32)
    got = f(a, b)
    assert seen["none"] == (False, True)
    assert np.ndim(got[0]) == 0 and not got[0] and got[1]
    np.testing.assert_array_equal(got[2], [True, True, True])
    np.testing.assert_array_equal(got[3], [False, False, False])


def test_tensor_is_unhashable_and_ref_keys_it():
    @ndx.function
    def f(a, b):
        with pytest.raises(TypeError, match=r"Tensor is unhashable. Instead, use tensor.ref\(\)"):
            hash(a)
        with pytest.raises(TypeError):
            {a: 1}
        table = {a.ref(): "a", b.ref(): "b"}
        assert table[a.ref()] == "a" and table[b.ref()] == "b" and len(table) == 2
        assert a.ref() == a.ref() and a.ref() != b.ref()
        assert a.ref().deref() is a
        return a + b

    np.testing.assert_array_equal(f(np.ones(2, np.float32), np.ones(2, np.float32)), [2, 2])


# ---- operators on Variable --------------------------------------------------------------------

def test_variable_operators_eager_and_traced():
    v = ndx.Variable(np.array([-2.0, 0.0, 3.0], np.float32))
    w = ndx.Variable(np.array([-2.0, 1.0, 2.0], np.float32))
    value, other = v.numpy(), w.numpy()
    for _, _, op in COMPARE:
        np.testing.assert_array_equal(op(v, 0.0), op(value, np.float32(0)))
        np.testing.assert_array_equal(op(v, w), op(value, other))
        np.testing.assert_array_equal(op(0.0, v), op(np.float32(0), value))
    np.testing.assert_array_equal(abs(v), np.abs(value))

    @ndx.function
    def f():
        return [op(v, w) for _, _, op in COMPARE] + [abs(v)]

    got = f()
    for g, (_, _, op) in zip(got, COMPARE):
        np.testing.assert_array_equal(g, op(value, other))
    np.testing.assert_array_equal(got[-1], np.abs(value))
    assert (v == None) is False and (v != None) is True  # noqa: E711
    assert np.ndim(v == np.zeros(2, np.float32)) == 0  # shapes that cannot broadcast
    flags = ndx.Variable(np.array([True, False]))
    np.testing.assert_array_equal(flags & np.array([True, True]), [True, False])
    np.testing.assert_array_equal(~flags, [False, True])
    with pytest.raises(TypeError, match="no bitwise ops"):
        v & v


def test_variable_is_unhashable_and_ref_keys_it():
    v = ndx.Variable([1.0, 2.0])
    u = ndx.Variable([1.0, 2.0])
    with pytest.raises(TypeError, match=r"Variable is unhashable. Instead, use variable.ref\(\)"):
        hash(v)
    table = {v.ref(): 1, u.ref(): 2}
    assert table[v.ref()] == 1 and table[u.ref()] == 2 and v.ref().deref() is v

    # ndx's own tables of variables: a function taking the variable, optimizers, the tape
    @ndx.function
    def step(var):
        var.assign_add(np.ones(2, np.float32))
        return var * 2.0

    # (the read after the update sees it: program order)
    np.testing.assert_array_equal(step(v), [4.0, 6.0])
    np.testing.assert_array_equal(step(v), [6.0, 8.0])
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])
    assert step.experimental_get_tracing_count() == 1
    opt = ndx.optimizers.Adagrad(0.1)
    with ndx.GradientTape() as tape:
        loss = ndx.reduce_sum(v * v)
    opt.apply_gradients(zip(tape.gradient(loss, [v]), [v]))
    assert opt.accumulators[v].shape == (2,)
    assert tape.watched_variables()[0] is v


# ---- operators on TapedArray ------------------------------------------------------------------

def test_taped_array_comparisons_are_plain_and_math_is_recorded():
    x = np.array([-2.0, -0.5, 0.25, 3.0])
    with ndx.GradientTape() as tape:
        tape.watch(x)
        y = ndx.multiply(x, 1.0)
        assert isinstance(y, ndx.TapedArray)
        masks = [y > 0, y >= 0.25, y < 0, y <= -0.5, y == 0.25, y != 0.25, ~(y > 0),
                 (y > 0) & (y < 1), np.logical_or(y > 0, y < -1)]
        z = abs(y) + np.square(y) + np.sqrt(abs(y))
        loss = ndx.reduce_sum(z)
    want = [x > 0, x >= 0.25, x < 0, x <= -0.5, x == 0.25, x != 0.25, ~(x > 0),
            (x > 0) & (x < 1), np.logical_or(x > 0, x < -1)]
    for m, w in zip(masks, want):
        assert type(m) is np.ndarray and m.dtype == np.bool_
        np.testing.assert_array_equal(m, w)
    grad = np.sign(x) + 2 * x + 0.5 / np.sqrt(np.abs(x)) * np.sign(x)
    np.testing.assert_allclose(tape.gradient(loss, x), grad, rtol=1e-12)
    after = y > 0  # (no tape: NumPy's comparison, plain too)
    assert type(after) is np.ndarray
    np.testing.assert_array_equal(after, x > 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_taped_array_operators_broadcast_against_numpy(dtype):
    x, y = values(dtype, (3, 1)), values(dtype, (4,))
    with ndx.GradientTape() as tape:
        tape.watch(x)
        tx = ndx.multiply(x, 1.0)
        got = [op(tx, y) for _, _, op in COMPARE] + [op(y, tx) for _, _, op in COMPARE]
    with np.errstate(invalid="ignore"):
        want = [op(x, y) for _, _, op in COMPARE] + [op(y, x) for _, _, op in COMPARE]
    for g, w in zip(got, want):
        assert type(g) is np.ndarray and g.shape == (3, 4)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("obj", [ndx.less, ndx.logical_and, ndx.abs, ndx.sqrt],
                         ids=lambda o: o.__name__)
def test_docstring_examples(obj):
    check_docstring_examples(obj)
