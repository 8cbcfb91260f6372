"""The glue ops (TensorFlow's tf.constant, tf.add, tf.cast, tf.range, tf.shape, ...), written
once for both modes: inside a trace they add nodes to the traced graph; eagerly they run the
same node through ndx's own kernels (a one-node graph per op, dtypes and ranks, kept with its
session), so both modes have TensorFlow's semantics (FloorDiv of negative integers, an integer
division by zero is an error, NaN in Maximum, ...).

Conversion is TensorFlow's: a Python value beside a tensor or array takes its dtype (and must
fit it); alone it takes TensorFlow's defaults (int32, float32)."""
from __future__ import annotations  # the annotations below are for type checkers only

import threading
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

import numpy as np

from . import _ndx, _trace
from ._convert import BFloat16Array, _as_array
from ._graph import Tensor, _convert_to, as_dtype, dtype_of

if TYPE_CHECKING:
    from ._graph import DTypeLike
_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function

__all__ = ["constant", "cast", "add", "subtract", "multiply", "divide", "floordiv", "floormod",
           "equal", "not_equal", "maximum", "minimum", "negative", "zeros_like", "ones_like",
           "fill", "identity", "reshape", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
           "where", "range", "size", "shape", "less",
           "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_not",
           "logical_xor", "abs", "square", "sqrt"]

_EAGER_FILE = "<ndx eager>"
# The elementwise kinds the module runs eagerly without a session, each the index it knows it
# by: on ndarrays of numbers and bools it calls the kernel the session's node would run (the
# same bits); for anything else, and on any error, it gives None and the session runs the node
# (so errors are the session's own).
_DIRECT = {type: i for i, type in enumerate(_ndx._elementwise_kinds())}


def _direct(type, to, inputs):
    """Node `type` (Cast's dtype code `to`, else -1) on `inputs` by the module, without a
    session; None when the session must run it."""
    k = _DIRECT.get(type)
    return None if k is None else _ndx._elementwise(k, to, inputs)


def _direct_eager(type, to, x, y=None):
    """_direct when called eagerly on ndarrays (x, and y for a binary op): what _EAGER.op would
    do first, without converting the inputs; None when tracing or for any other input."""
    if (_trace.active or x.__class__ is not np.ndarray
            or (y is not None and y.__class__ is not np.ndarray)):
        return None
    return _direct(type, to, (x,) if y is None else (x, y))
_pyrange = range  # (this module defines ndx.range)
_KEEP_BYTES = 1 << 20  # what an eager op's session may keep pooled between calls


class _Eager:
    """Runs one node at a time: a graph of placeholders (every dim unknown) and the node, built
    on first use for each op type, attributes, and input dtypes and ranks."""

    def __init__(self):
        self._cache = {}
        self._lock = threading.Lock()

    @staticmethod
    def convert(value, dtype=None):
        if isinstance(value, Tensor):
            value.graph.check_open()  # raises: this thread is not tracing its graph
        if isinstance(value, (np.ndarray, BFloat16Array)):
            return value
        if dtype is not None and not isinstance(value, np.generic):
            return _convert_to(value, dtype)
        return _as_array(value)

    @staticmethod
    def dtype(value):
        return dtype_of(value)

    def op(self, type, inputs, attrs=None, name=None):
        if type in _DIRECT:  # (the elementwise kernels on the arrays, without a session)
            out = _direct(type, attrs["to"].code if attrs else -1, inputs)
            if out is not None:
                return [out]
        attrs = tuple(sorted((k, v.code if hasattr(v, "code") else int(v))
                             for k, v in (attrs or {}).items()))
        key = (type, attrs) + tuple((dtype_of(x).code, np.ndim(x.bits if isinstance(
            x, BFloat16Array) else x)) for x in inputs)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._build(key, type, attrs, inputs)
        session, feeds, outputs = entry
        try:
            results = session.run([(node, 0, x, None) for node, x in zip(feeds, inputs)],
                                  outputs, ())
        except (_ndx.InvalidArgumentError, _ndx.OutOfMemoryError, TypeError) as e:
            raise _strip(e) from None
        if session.pool_bytes() > _KEEP_BYTES:  # (a large call's blocks are not kept for later)
            session.trim()
        return list(results)

    def _build(self, key, type, attrs, inputs):
        g = _ndx._Graph()
        try:
            feeds = [g.placeholder(f"x{i}", dtype_of(x).code, (None,) * np.ndim(
                x.bits if isinstance(x, BFloat16Array) else x), 0, _EAGER_FILE, 0)
                for i, x in enumerate(inputs)]
            node, count = g.op(type, [(f, 0) for f in feeds], attrs, None, _EAGER_FILE, 0)
            g.finish()
        except (_ndx.InvalidArgumentError, _ndx.OutOfMemoryError, TypeError) as e:
            raise _strip(e) from None
        entry = (_ndx._Session(g, None, None), feeds, [(node, k) for k in _pyrange(count)])
        with self._lock:
            return self._cache.setdefault(key, entry)


def _strip(error):
    """An eager op's error without the one-node graph's location."""
    text = str(error)
    prefix = _EAGER_FILE + ":0: "
    return type(error)(text[len(prefix):]) if text.startswith(prefix) else error


_EAGER = _Eager()


class _GraphMode:
    """The traced graph, seen through the same three methods as _Eager."""

    __slots__ = ("g",)

    def __init__(self, g):
        self.g = g

    def convert(self, value, dtype=None):
        return self.g.convert(value, dtype)

    @staticmethod
    def dtype(value):
        return value.dtype

    def op(self, type, inputs, attrs=None, name=None):
        return self.g.op(type, inputs, attrs, name)


def _mode(*values):
    """The graph being traced in this thread, else eager execution. A symbolic tensor given
    outside its trace raises (in convert)."""
    if _trace.active:
        g = _trace.graph()
        if g is not None:
            return _GraphMode(g.check_open())
        if _trace.tapes() is not None:  # (an eager GradientTape records: ndx/_tape.py)
            return _trace.mode
    return _EAGER


def _typed(value):
    return isinstance(value, (Tensor, np.ndarray, np.generic, BFloat16Array))


def _pair(m, x, y):
    """Two operands of one dtype, converted as TensorFlow's binary ops convert them: a Python
    value takes the dtype of the typed operand beside it."""
    if _typed(x) or not _typed(y):
        x = m.convert(x)
        y = m.convert(y, m.dtype(x))
    else:
        y = m.convert(y)
        x = m.convert(x, m.dtype(y))
    return x, y


def _binary(type, x, y, name):
    out = _direct_eager(type, -1, x, y)
    if out is not None:
        return out
    m = _mode()
    x, y = _pair(m, x, y)
    return m.op(type, [x, y], None, name)[0]


def constant(value: Any, dtype: Optional[DTypeLike] = None, shape: Optional[Sequence[int]] = None,
             name: str = "Const") -> _Value:
    """A constant (TensorFlow's tf.constant): `value` converted to `dtype` (default: NumPy's
    dtype of an array, TensorFlow's for Python values: int32, float32), reshaped to `shape`
    (a scalar value is broadcast to it). Eagerly, a NumPy array (ndx.BFloat16Array for
    bfloat16); inside a traced function, a Const node.

    >>> ndx.constant([1, 2])
    array([1, 2], dtype=int32)
    >>> ndx.constant(0.5, ndx.float64, shape=[2])
    array([0.5, 0.5])
    """
    dt = None if dtype is None else as_dtype(dtype)
    if isinstance(value, Tensor):
        raise TypeError(f"constant: {value!r} is symbolic, not a value")
    a = _as_array(value) if dt is None else _convert_to(value, dt)
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        bits = a.bits if isinstance(a, BFloat16Array) else a
        if bits.size == 1:
            bits = np.broadcast_to(bits.reshape(()), shape).copy()
        elif bits.size == int(np.prod(shape)):
            bits = bits.reshape(shape)
        else:
            raise _ndx.InvalidArgumentError(
                f"constant: {bits.size} values do not fit shape {list(shape)}")
        a = BFloat16Array.from_bits(bits) if isinstance(a, BFloat16Array) else bits
    m = _mode()
    if not isinstance(m, _GraphMode):
        return a
    return m.g.constant(a, name=None if name == "Const" else name)


def cast(x: _Value, dtype: DTypeLike, name: Optional[str] = None) -> _Value:
    """x converted to `dtype` (TensorFlow's tf.cast): floats to integers truncate toward zero
    (NaN gives 0, values out of range saturate); complex to real keeps the real part.

    >>> ndx.cast(np.array([1.7, -1.7]), ndx.int32)
    array([ 1, -1], dtype=int32)
    """
    to = as_dtype(dtype)
    out = _direct_eager("Cast", to.code, x)
    if out is not None:
        return out
    m = _mode()
    x = m.convert(x)
    return m.op("Cast", [x], {"to": to}, name)[0]


def add(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x + y, elementwise with broadcasting (TensorFlow's tf.add: AddV2). Integers wrap.

    >>> ndx.add(np.array([1, 2], np.int64), 3)
    array([4, 5])
    """
    return _binary("AddV2", x, y, name)


def subtract(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x - y (TensorFlow's tf.subtract)."""
    return _binary("Sub", x, y, name)


def multiply(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x * y (TensorFlow's tf.multiply)."""
    return _binary("Mul", x, y, name)


def divide(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x / y (TensorFlow's tf.divide, true division): integers are first cast to float64
    (int8, int16, uint8, uint16 to float32), as TensorFlow's truediv does.

    >>> ndx.divide(np.array([1, 2], np.int32), 4)
    array([0.25, 0.5 ])
    """
    if x.__class__ is np.ndarray and x.dtype.kind in "fc":  # (no cast first: RealDiv as is)
        out = _direct_eager("RealDiv", -1, x, y)
        if out is not None:
            return out
    m = _mode()
    x, y = _pair(m, x, y)
    dt = m.dtype(x)
    if dt.is_integer and dt is m.dtype(y):
        wide = as_dtype("float32" if dt._np.itemsize <= 2 else "float64")
        x = m.op("Cast", [x], {"to": wide})[0]
        y = m.op("Cast", [y], {"to": wide})[0]
    return m.op("RealDiv", [x, y], None, name)[0]


def floordiv(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x // y rounded toward negative infinity (TensorFlow's tf.math.floordiv: FloorDiv); an
    integer division by zero raises InvalidArgumentError.

    >>> ndx.floordiv(np.array([7, -7], np.int32), 2)
    array([ 3, -4], dtype=int32)
    """
    return _binary("FloorDiv", x, y, name)


def floormod(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """The remainder of floordiv, with the sign of y (TensorFlow's tf.math.floormod).

    >>> ndx.floormod(np.array([7, -7], np.int32), 3)
    array([1, 2], dtype=int32)
    """
    return _binary("FloorMod", x, y, name)


def equal(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x == y elementwise, a bool tensor (TensorFlow's tf.equal)."""
    return _binary("Equal", x, y, name)


def not_equal(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x != y elementwise, a bool tensor (TensorFlow's tf.not_equal).

    >>> ndx.not_equal(np.array([0.1, -1.0], np.float32), -1.0)
    array([ True, False])
    """
    return _binary("NotEqual", x, y, name)


def maximum(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """The larger of x and y elementwise; NaN if either is (TensorFlow's tf.maximum)."""
    return _binary("Maximum", x, y, name)


def minimum(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """The smaller of x and y elementwise; NaN if either is (TensorFlow's tf.minimum)."""
    return _binary("Minimum", x, y, name)


def less(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x < y elementwise, a bool tensor (TensorFlow's tf.math.less): integers and floats; a NaN
    compares false.

    >>> ndx.less(np.array([1, 5, 3], np.int32), 3)
    array([ True, False, False])
    """
    return _binary("Less", x, y, name)


def less_equal(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x <= y elementwise, a bool tensor (TensorFlow's tf.math.less_equal)."""
    return _binary("LessEqual", x, y, name)


def greater(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x > y elementwise, a bool tensor (TensorFlow's tf.math.greater)."""
    return _binary("Greater", x, y, name)


def greater_equal(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x >= y elementwise, a bool tensor (TensorFlow's tf.math.greater_equal)."""
    return _binary("GreaterEqual", x, y, name)


def logical_and(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x AND y elementwise on bool tensors (TensorFlow's tf.math.logical_and).

    >>> ndx.logical_and(np.array([True, True, False]), np.array([True, False, False]))
    array([ True, False, False])
    """
    return _binary("LogicalAnd", x, y, name)


def logical_or(x: _Value, y: _Value, name: Optional[str] = None) -> _Value:
    """x OR y elementwise on bool tensors (TensorFlow's tf.math.logical_or)."""
    return _binary("LogicalOr", x, y, name)


def logical_xor(x: _Value, y: _Value, name: str = "LogicalXor") -> _Value:
    """x XOR y elementwise on bool tensors (TensorFlow's tf.math.logical_xor, which TensorFlow
    too builds as (x | y) & ~(x & y))."""
    m = _mode()
    x, y = _pair(m, x, y)
    either = m.op("LogicalOr", [x, y])[0]
    both = m.op("LogicalNot", [m.op("LogicalAnd", [x, y])[0]])[0]
    return m.op("LogicalAnd", [either, both], None, None if name == "LogicalXor" else name)[0]


def _unary(type, x, name):
    out = _direct_eager(type, -1, x)
    if out is not None:
        return out
    m = _mode()
    return m.op(type, [m.convert(x)], None, name)[0]


def logical_not(x: _Value, name: Optional[str] = None) -> _Value:
    """NOT x elementwise on a bool tensor (TensorFlow's tf.math.logical_not)."""
    return _unary("LogicalNot", x, name)


def abs(x: _Value, name: Optional[str] = None) -> _Value:
    """|x| elementwise (TensorFlow's tf.math.abs: Abs): signed integers (abs of the most
    negative value wraps to itself, as TensorFlow's) and floats. The magnitude of a complex
    number (TensorFlow's ComplexAbs) is not an ndx op: complex x raises TypeError.

    >>> ndx.abs(np.array([-2.25, 3.25], np.float32))
    array([2.25, 3.25], dtype=float32)
    """
    return _unary("Abs", x, name)


def square(x: _Value, name: Optional[str] = None) -> _Value:
    """x * x elementwise (TensorFlow's tf.math.square): every numeric dtype; integers wrap."""
    return _unary("Square", x, name)


def sqrt(x: _Value, name: Optional[str] = None) -> _Value:
    """The square root elementwise (TensorFlow's tf.math.sqrt): floats (a negative gives NaN)
    and complex (the principal root).

    >>> ndx.sqrt(np.array([4.0, 2.25]))
    array([2. , 1.5])
    """
    return _unary("Sqrt", x, name)


def _static_shape(m, x):
    """x's shape where known (a tuple of ints and None), or None for an unknown rank."""
    if isinstance(m, _GraphMode):
        return x.shape
    return np.shape(x.bits if isinstance(x, BFloat16Array) else x)


def _broadcastable(a, b):
    """False only when shapes a and b certainly do not broadcast."""
    if a is None or b is None:
        return True
    return all(p is None or q is None or p == q or p == 1 or q == 1
               for p, q in zip(reversed(a), reversed(b)))


def tensor_equals(x, y, negate=False):
    """`x == y` (`x != y` with negate) as TensorFlow 2's Tensor and Variable operators compute
    it: y None gives False (True); operands whose shapes do not broadcast give a scalar False
    (True) instead of an error; otherwise tf.equal (tf.not_equal), elementwise."""
    if y is None:
        return negate
    m = _mode()
    x, y = _pair(m, x, y)
    if not _broadcastable(_static_shape(m, x), _static_shape(m, y)):
        value = np.array(negate)
        return m.convert(value) if isinstance(m, _GraphMode) else value
    return m.op("NotEqual" if negate else "Equal", [x, y])[0]


def bool_operator(symbol, x, y=None):
    """`x & y`, `x | y`, `x ^ y` or `~x` on bool tensors (TensorFlow's logical ops for bool).
    TensorFlow applies its bitwise ops to integers; ndx has none, so other dtypes raise."""
    m = _mode()
    if y is None:
        x = m.convert(x)
        values = (x,)
    else:
        x, y = _pair(m, x, y)
        values = (x, y)
    for v in values:
        dt = m.dtype(v)
        if not dt.is_bool:
            raise TypeError(f"operator {symbol}: ndx takes bool tensors only, not {dt.name} "
                            f"(TensorFlow applies tf.bitwise to integers; ndx has no bitwise "
                            f"ops)")
    if symbol == "~":
        return m.op("LogicalNot", [x])[0]
    if symbol == "^":
        return logical_xor(x, y)
    return m.op("LogicalAnd" if symbol == "&" else "LogicalOr", [x, y])[0]


def negative(x: _Value, name: Optional[str] = None) -> _Value:
    """-x (TensorFlow's tf.negative: Neg); signed integers wrap."""
    return _unary("Neg", x, name)


def identity(input: _Value, name: Optional[str] = None) -> _Value:
    """`input` itself (TensorFlow's tf.identity): a node that copies nothing."""
    return _unary("Identity", input, name)


def zeros_like(input: _Value, dtype: Optional[DTypeLike] = None, name: Optional[str] = None) -> _Value:
    """Zeros of input's shape, and of its dtype or `dtype` (TensorFlow's tf.zeros_like)."""
    out = _unary("ZerosLike", input, None if dtype else name)
    return out if dtype is None else cast(out, dtype, name)


def ones_like(input: _Value, dtype: Optional[DTypeLike] = None, name: Optional[str] = None) -> _Value:
    """Ones of input's shape (true for bool), of its dtype or `dtype` (tf.ones_like)."""
    out = _unary("OnesLike", input, None if dtype else name)
    return out if dtype is None else cast(out, dtype, name)


def fill(dims: _Value, value: _Value, name: Optional[str] = None) -> _Value:
    """A tensor of shape `dims` filled with the scalar `value` (TensorFlow's tf.fill).

    >>> ndx.fill([2, 2], 7)
    array([[7, 7],
           [7, 7]], dtype=int32)
    """
    m = _mode()
    return m.op("Fill", [m.convert(dims), m.convert(value)], None, name)[0]


def reshape(tensor: _Value, shape: _Value, name: Optional[str] = None) -> _Value:
    """tensor's elements in row-major order in `shape` (one dim may be -1), as tf.reshape."""
    m = _mode()
    return m.op("Reshape", [m.convert(tensor), m.convert(shape)], None, name)[0]


def _reduce(type, input_tensor, axis, keepdims, name):
    """The reduction `type` (Sum, Mean, Max, Min) over `axis` (None: every axis)."""
    m = _mode()
    x = m.convert(input_tensor)
    if axis is None:
        rank = (x.ndim if isinstance(m, _GraphMode) else
                np.ndim(x.bits if isinstance(x, BFloat16Array) else x))
        if rank is None:  # an unknown rank: range(0, size(shape(x)))
            axes = range(0, size(shape(x)), 1)
        else:
            axes = m.convert(np.arange(rank, dtype=np.int32))
    else:  # a Python list takes the axes' default dtype, int32 (an empty one too)
        axes = m.convert(axis) if _typed(axis) else m.convert(axis, as_dtype("int32"))
    return m.op(type, [x, axes], {"keep_dims": bool(keepdims)}, name)[0]


def reduce_sum(input_tensor: _Value, axis: Union[None, int, Sequence[int], _Value] = None,
               keepdims: bool = False, name: Optional[str] = None) -> _Value:
    """The sum over `axis` (an int or a list; None: every axis), as tf.reduce_sum; the reduced
    dims are dropped unless keepdims. Integers wrap; each element sums in one fixed order.

    >>> ndx.reduce_sum(np.array([[1, 2], [3, 4]], np.int32), axis=0)
    array([4, 6], dtype=int32)
    """
    return _reduce("Sum", input_tensor, axis, keepdims, name)


def reduce_mean(input_tensor: _Value, axis: Union[None, int, Sequence[int], _Value] = None,
                keepdims: bool = False, name: Optional[str] = None) -> _Value:
    """The mean over `axis` (an int or a list; None: every axis), as tf.reduce_mean: the sum
    divided by the count, integers truncating as TensorFlow's (int32's mean of [1, 2] is 1);
    float16 and bfloat16 are averaged in float. An empty mean is NaN for floats, 0 for integers.

    >>> ndx.reduce_mean(np.array([[1., 2.], [3., 5.]], np.float32), axis=1)
    array([1.5, 4. ], dtype=float32)
    """
    return _reduce("Mean", input_tensor, axis, keepdims, name)


def reduce_max(input_tensor: _Value, axis: Union[None, int, Sequence[int], _Value] = None,
               keepdims: bool = False, name: Optional[str] = None) -> _Value:
    """The largest element over `axis` (None: every axis), as tf.reduce_max: integers and
    floats; NaN if any reduced element is; an empty reduction gives -inf (the lowest integer).

    >>> ndx.reduce_max(np.array([[1, 7], [3, 4]], np.int32), axis=0)
    array([3, 7], dtype=int32)
    """
    return _reduce("Max", input_tensor, axis, keepdims, name)


def reduce_min(input_tensor: _Value, axis: Union[None, int, Sequence[int], _Value] = None,
               keepdims: bool = False, name: Optional[str] = None) -> _Value:
    """The smallest element over `axis` (None: every axis), as tf.reduce_min: integers and
    floats; NaN if any reduced element is; an empty reduction gives +inf (the highest integer)."""
    return _reduce("Min", input_tensor, axis, keepdims, name)


def where(condition: _Value, x: Optional[_Value] = None, y: Optional[_Value] = None,
          name: Optional[str] = None) -> _Value:
    """TensorFlow 2's tf.where. With x and y: x where `condition` (bool) is true, else y, the
    three broadcast together (SelectV2; x and y converted as a binary op's operands). With
    neither: the coordinates of condition's true (or non-zero) elements in row-major order, an
    int64 array [N, rank] (Where). One of x and y alone raises ValueError, as TensorFlow does.

    >>> ndx.where(np.array([True, False, True]), np.array([1, 2, 3]), 0)
    array([1, 0, 3])
    >>> ndx.where(np.array([[True, False], [False, True]]))
    array([[0, 0],
           [1, 1]])
    """
    if (x is None) != (y is None):
        raise ValueError("x and y must both be non-None or both be None.")
    m = _mode()
    condition = m.convert(condition)
    if x is None:
        return m.op("Where", [condition], None, name)[0]
    x, y = _pair(m, x, y)
    return m.op("SelectV2", [condition, x, y], None, name)[0]


_RANGE_ORDER = ["int32", "int64", "float32", "float64"]
_INT32 = as_dtype("int32")


def _python_dtype(value):
    """TensorFlow's dtype for a Python value (int32 for ints that fit, float32 for floats)."""
    if type(value) is int and -2**31 <= value < 2**31:
        return _INT32
    return dtype_of(_as_array(value))


def range(start: _Value, limit: Optional[_Value] = None, delta: _Value = 1,
          dtype: Optional[DTypeLike] = None, name: str = "range") -> _Value:
    """start, start + delta, ... up to but not including limit (TensorFlow's tf.range; range(n)
    is range(0, n)). The dtype is `dtype`, else the widest of the arguments' (int32 < int64 <
    float32 < float64), Python ints being int32 and floats float32.

    >>> ndx.range(5)
    array([0, 1, 2, 3, 4], dtype=int32)
    >>> ndx.range(1, 2, 0.25)
    array([1.  , 1.25, 1.5 , 1.75], dtype=float32)
    """
    if limit is None:
        start, limit = 0, start
    m = _mode()
    args = [start, limit, delta]
    if dtype is not None:
        dt = as_dtype(dtype)
    else:
        kinds = [m.dtype(a) if _typed(a) else _python_dtype(a) for a in args]
        dt = max(kinds, key=lambda d: _RANGE_ORDER.index(d.name) if d.name in _RANGE_ORDER else -1)
    out = []
    for a in args:
        if _typed(a):
            a = m.convert(a)
            if m.dtype(a) is not dt:
                a = m.op("Cast", [a], {"to": dt})[0]
        else:
            a = m.convert(a, dt)
        out.append(a)
    return m.op("Range", out, None, None if name == "range" else name)[0]


def size(input: _Value, out_type: Optional[DTypeLike] = None, name: Optional[str] = None) -> _Value:
    """The number of elements of `input`, a scalar of out_type (int32 by default; tf.size)."""
    m = _mode()
    return m.op("Size", [m.convert(input)], {"out_type": as_dtype(out_type or "int32")}, name)[0]


def shape(input: _Value, out_type: Optional[DTypeLike] = None, name: Optional[str] = None) -> _Value:
    """The shape of `input`, a vector of out_type (int32 by default; tf.shape). Inside a
    traced function it is known at build time whenever input's shape is.

    >>> ndx.shape(np.zeros([2, 3]))
    array([2, 3], dtype=int32)
    """
    m = _mode()
    return m.op("Shape", [m.convert(input)], {"out_type": as_dtype(out_type or "int32")}, name)[0]
