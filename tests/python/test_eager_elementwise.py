"""The eager elementwise glue ops without a session (python/src/ops_elementwise.c): for every
kind the module runs directly, every dtype and broadcast shape, the direct call gives the same
dtype, shape and bits as the one-node session (the path every other eager op and a traced
ndx.function take), or the same error; traced functions and an eager GradientTape agree with
it; what the direct call does not take (bfloat16, strings, lists) still runs through the
session."""
import numpy as np
import pytest

import ndx
from ndx import _glue, _ndx

NUMERIC = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"]
BINARY = ["AddV2", "Sub", "Mul", "FloorDiv", "FloorMod", "Equal", "NotEqual", "RealDiv",
          "Maximum", "Minimum", "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd",
          "LogicalOr"]
UNARY = ["Neg", "ZerosLike", "OnesLike", "LogicalNot", "Abs", "Square", "Sqrt"]
# (x shape, y shape): equal, scalars, broadcast both ways, empty, across the module's small
# result size and the kernels' per-thread grain (65,536 elements)
SHAPES = [((), ()), ((5,), ()), ((), (5,)), ((2, 3), (3,)), ((2, 1), (1, 3)),
          ((4, 1, 3), (2, 3)), ((0, 3), (3,)), ((3, 0), (1, 1)), ((2, 3), (2, 3)),
          ((70001,), (70001,)), ((300, 257), (257,)), ((5000, 1), (1, 3))]


def values(dtype, shape, rng, nonzero=False):
    """Values of `dtype` that reach each kernel's corners: NaN, infinities, -0, the integer
    limits, and (for the divisor with `nonzero`) no zeros."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt == np.bool_:
        a = rng.integers(0, 2, n).astype(bool)
        if nonzero:
            a[:] = True
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, int(info.max) + 1, n, dtype=dt)
        corners = [0, 1, -1 if dt.kind == "i" else 2, info.min, info.max, 7, 3,
                   -7 if dt.kind == "i" else 9]
        a[:min(n, 8)] = np.array(corners[:min(n, 8)], dtype=object).astype(dt)
        if nonzero:
            a[a == 0] = 3
    else:
        real = rng.normal(0, 50, n)
        real[:min(n, 6)] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5][:min(n, 6)]
        if dt.kind == "c":
            a = (real + 1j * rng.normal(0, 50, n)).astype(dt)
        else:
            a = real.astype(dt)
        if nonzero:
            a[a == 0] = 2
    return a.reshape(shape)


def same(got, want):
    if isinstance(want, ndx.BFloat16Array):
        assert isinstance(got, ndx.BFloat16Array)
        got, want = got.bits, want.bits
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape, \
        (type(got), got.dtype, got.shape, type(want), want.dtype, want.shape)
    assert got.tobytes() == want.tobytes()


def outcome(fn):
    """fn()'s result, or its error as (type, message)."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 (the error itself is what is compared)
        return type(e), str(e)


def compare(type_, inputs, attrs=None):
    """The direct call against the session for one node: the same array, or the same error."""
    direct = outcome(lambda: _glue._EAGER.op(type_, list(inputs), attrs)[0])
    saved = _glue._DIRECT
    _glue._DIRECT = {}
    try:
        session = outcome(lambda: _glue._EAGER.op(type_, list(inputs), attrs)[0])
    finally:
        _glue._DIRECT = saved
    if isinstance(session, tuple):
        assert direct == session
    else:
        same(direct, session)
    return direct


def test_the_module_runs_the_kinds_listed_here():
    assert set(_glue._DIRECT) == set(BINARY + UNARY + ["Cast"])
    assert set(_glue._DIRECT) <= {k["type"] for k in _ndx.kinds()}


@pytest.mark.parametrize("type_", BINARY)
def test_binary_direct_equals_the_session(type_):
    rng = np.random.default_rng(len(type_))
    divides = type_ in ("FloorDiv", "FloorMod")
    for dtype in NUMERIC:
        for xs, ys in SHAPES:
            x = values(dtype, xs, rng)
            y = values(dtype, ys, rng, nonzero=divides)
            compare(type_, [x, y])
            if len(xs) == 2 and xs == ys:  # strided and byte-swapped operands are copied
                compare(type_, [x.T, y.T])
                compare(type_, [x.astype(x.dtype.newbyteorder()), y])


@pytest.mark.parametrize("type_", UNARY)
def test_unary_direct_equals_the_session(type_):
    rng = np.random.default_rng(len(type_))
    for dtype in NUMERIC:
        for xs, _ in SHAPES:
            compare(type_, [values(dtype, xs, rng)])
        compare(type_, [values(dtype, (40, 30), rng)[:, ::3]])


def test_cast_direct_equals_the_session():
    rng = np.random.default_rng(3)
    for source in NUMERIC:
        for xs in [(), (7,), (2, 0), (70001,), (3, 50)]:
            x = values(source, xs, rng)
            for to in NUMERIC + ["bfloat16"]:
                got = compare("Cast", [x], {"to": ndx.as_dtype(to)})
                if to == "bfloat16":  # (not taken directly: the session's BFloat16Array)
                    assert isinstance(got, ndx.BFloat16Array)


def test_errors_are_the_sessions():
    f32, f64 = np.ones(3, np.float32), np.ones(3, np.float64)
    i32 = np.array([4, 0, 2], np.int32)
    cases = [("AddV2", [f32, f64]), ("AddV2", [np.ones(3, bool)] * 2),
             ("AddV2", [np.ones((2, 3)), np.ones((4, 3))]), ("FloorDiv", [i32, i32]),
             ("FloorMod", [i32[:1], i32]), ("RealDiv", [i32, i32]),
             ("LogicalAnd", [i32, i32]), ("Less", [np.ones(2, np.complex64)] * 2),
             ("Sqrt", [i32]), ("Abs", [np.ones(2, np.complex128)]), ("Neg", [np.ones(2, np.uint8)]),
             ("LogicalNot", [f32])]
    for type_, inputs in cases:
        got = compare(type_, inputs)
        assert isinstance(got, tuple) and "<ndx eager>" not in got[1], (type_, got)
    # and as the public functions raise them
    with pytest.raises(ndx.InvalidArgumentError, match=r"^FloorDiv: floor_div: integer division "
                                                       r"by zero: y\[1\] = 0$"):
        ndx.floordiv(np.ones(3, np.int32), np.array([1, 0, 2], np.int32))
    with pytest.raises(TypeError, match="^AddV2: add: dtype bool is not supported$"):
        ndx.add(np.ones(2, bool), np.ones(2, bool))
    with pytest.raises(ndx.InvalidArgumentError, match="^Mul: mul: x has shape \\[3\\] and y "
                                                       "has shape \\[4\\]"):
        ndx.multiply(np.ones(3, np.float32), np.ones(4, np.float32))


def test_what_the_module_does_not_take_runs_in_the_session():
    direct = _glue._DIRECT["AddV2"]
    a = np.ones(3, np.float32)
    assert _ndx._elementwise(direct, -1, [a, a]) is not None
    b16 = ndx.constant([1.5, 2.5], ndx.bfloat16)
    strings = np.array([b"a", b"bc"])
    for inputs in ([b16, b16], [np.array(["a"]), np.array(["a"])], [strings, strings],
                   [np.ones(2, np.longdouble)] * 2, [a, [1.0, 2.0, 3.0]], [a]):
        assert _ndx._elementwise(direct, -1, inputs) is None
    assert _ndx._elementwise(_glue._DIRECT["Cast"], ndx.as_dtype("bfloat16").code, [a]) is None
    assert _ndx._elementwise(direct, -1, [a, np.ones(4, np.float32)]) is None  # an error
    # ... and the public functions still give TensorFlow's results for them
    np.testing.assert_array_equal(ndx.add(b16, b16).bits, ndx.constant([3, 5], ndx.bfloat16).bits)
    np.testing.assert_array_equal(ndx.equal(strings, np.array([b"a", b"b"])), [True, False])
    np.testing.assert_array_equal(ndx.cast(a, ndx.bfloat16).bits,
                                  ndx.constant([1, 1, 1], ndx.bfloat16).bits)


def test_eager_elementwise_ops_build_no_session():
    before = dict(_glue._EAGER._cache)
    x = np.arange(100000, dtype=np.float32)
    for fn in (ndx.add, ndx.subtract, ndx.multiply, ndx.divide, ndx.not_equal, ndx.maximum):
        fn(x, np.float32(3))
    ndx.cast(x, ndx.int64)
    ndx.sqrt(x)
    ndx.divide(np.arange(4, dtype=np.int16), np.int16(3))  # two casts and a division
    assert _glue._EAGER._cache == before


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16", "float32", "float64",
                                   "complex64"])
def test_public_functions_eager_traced_and_taped_agree(dtype):
    rng = np.random.default_rng(11)
    fns = [ndx.add, ndx.subtract, ndx.multiply, ndx.divide, ndx.equal, ndx.not_equal,
           ndx.negative, ndx.square]
    if dtype[0] != "c":
        fns += [ndx.floordiv, ndx.floormod, ndx.maximum, ndx.minimum, ndx.less,
                ndx.greater_equal, ndx.abs]
    if dtype[0] in "fc":
        fns += [ndx.sqrt]
    for xs, ys in [((3, 70000), (70000,)), ((4, 1), (1, 5)), ((), (6,))]:
        x = values(dtype, xs, rng)
        y = values(dtype, ys, rng, nonzero=True)
        for fn in fns:
            args = (x,) if fn in (ndx.negative, ndx.square, ndx.abs, ndx.sqrt) else (x, y)
            eager = fn(*args)
            traced = ndx.function(fn)(*args)
            same(eager, traced)
            cast = ndx.cast(eager, ndx.float64)
            same(cast, ndx.function(lambda v: ndx.cast(v, ndx.float64))(eager))


def test_taped_operators_give_the_same_bits_and_gradients():
    rng = np.random.default_rng(5)
    a = rng.normal(size=(300, 400)).astype(np.float32)
    b = rng.normal(size=(400,)).astype(np.float32)
    c = rng.normal(size=(300, 1)).astype(np.float32)
    v = ndx.Variable(a)
    with ndx.GradientTape() as tape:
        x = v.read_value()
        y = x * b + c
        z = -ndx.square(y / 2.0 - x)
        loss = ndx.reduce_sum(z)
    assert isinstance(y, ndx.TapedArray) and isinstance(z, ndx.TapedArray)

    @ndx.function
    def forward(x):
        y = x * b + c
        return y, -ndx.square(y / 2.0 - x)

    want_y, want_z = forward(a)
    same(y.view(np.ndarray), want_y)
    same(z.view(np.ndarray), want_z)
    grad = tape.gradient(loss, v)

    @ndx.function
    def traced_grad(x):
        with ndx.GradientTape() as t:
            t.watch(x)
            loss = ndx.reduce_sum(-ndx.square((x * b + c) / 2.0 - x))
        return t.gradient(loss, x)

    same(np.asarray(grad), traced_grad(a))


def test_a_million_float32_result_is_kept_for_the_next_call():
    # 3.8 MiB: kept by the library's cache of large blocks (from 2 MiB), so the results of a
    # loop of eager ops, which a GradientTape keeps two at a time, come back warm
    import gc
    ndx.release_memory()
    a = np.arange(1_000_000, dtype=np.float32)
    first = ndx.multiply(a, np.float32(2))
    address = first.__array_interface__["data"][0]
    del first
    gc.collect()
    again = ndx.multiply(a, np.float32(3))
    assert again.__array_interface__["data"][0] == address
    np.testing.assert_array_equal(again, a * np.float32(3))
    del again
    gc.collect()
    assert ndx.release_memory() >= a.nbytes


def test_public_functions_with_and_without_the_direct_call():
    # ndx.add and the others take NumPy arrays to the module first (before _EAGER.op): with
    # the direct call turned off they give the same arrays and raise the same errors
    i32 = np.array([4, -7, 2], np.int32)
    f32 = np.array([1.5, -0.0, np.nan], np.float32)
    calls = [lambda: ndx.add(f32, f32), lambda: ndx.add(f32, np.ones(3)),
             lambda: ndx.add(np.ones(2, bool), np.ones(2, bool)),
             lambda: ndx.multiply(f32, np.ones(4, np.float32)),
             lambda: ndx.floordiv(i32, np.array([1, 0, 2], np.int32)),
             lambda: ndx.floormod(i32, np.int32(3)), lambda: ndx.divide(f32, f32),
             lambda: ndx.divide(i32, i32), lambda: ndx.divide(np.ones(2, bool), np.ones(2, bool)),
             lambda: ndx.divide(f32, np.ones(3)), lambda: ndx.divide(np.int16([3]), np.int16([2])),
             lambda: ndx.cast(f32, ndx.int32), lambda: ndx.cast(f32, ndx.bfloat16),
             lambda: ndx.cast(np.array([b"a"]), ndx.int32), lambda: ndx.sqrt(i32),
             lambda: ndx.abs(i32), lambda: ndx.logical_not(f32), lambda: ndx.identity(f32),
             lambda: ndx.zeros_like(f32), lambda: ndx.not_equal(f32, -0.0)]
    with_direct = [outcome(c) for c in calls]
    saved = _glue._DIRECT
    _glue._DIRECT = {}
    try:
        without = [outcome(c) for c in calls]
    finally:
        _glue._DIRECT = saved
    for got, want in zip(with_direct, without):
        if isinstance(want, tuple):
            assert got == want
        else:
            same(got, want)
