"""Turning what a caller passes into arrays the C module reads in place.

The C module calls `_as_array` only for what is not already a C-contiguous, native ndarray:
Python lists and scalars (TensorFlow's default dtypes, or the dtype of the array beside them),
objects with __dlpack__ (PyTorch CPU tensors), the buffer protocol and __array_interface__,
and str or object arrays (encoded to bytes, as TensorFlow returns strings).
"""
import numpy as np

__all__ = ["BFloat16Array", "bfloat16"]


class BFloat16Array:
    """An array of bfloat16 values, held as their uint16 bit patterns in `bits`.

    NumPy has no bfloat16 dtype, so ndx takes and returns bfloat16 tensors as this thin
    wrapper: `bits` is an ordinary uint16 ndarray (the top 16 bits of each float32), read and
    written in place by the library. `np.asarray(x)` and `x.to_float32()` give the values as
    float32.

    >>> x = ndx.bfloat16([1.5, -2.0, 3.0])
    >>> x.bits
    array([16320, 49152, 16448], dtype=uint16)
    >>> ndx.gather_nd(x, [[2], [0]]).to_float32()
    array([3. , 1.5], dtype=float32)
    """

    __slots__ = ("_bits",)

    def __init__(self, values):
        from . import _ndx  # (the C module imports this file's helpers first)
        f = np.asarray(values, dtype=np.float32, order="C")  # (0-d stays 0-d)
        self._bits = _ndx._bfloat16_bits(f)  # the library's rounding: nearest even, NaN quiet

    @property
    def bits(self):
        """The uint16 ndarray of bit patterns (assigning checks it is one)."""
        return self._bits

    @bits.setter
    def bits(self, bits):
        if not isinstance(bits, np.ndarray) or bits.dtype != np.uint16:
            raise TypeError(f"BFloat16Array.bits must be a uint16 ndarray, not "
                            f"{getattr(bits, 'dtype', type(bits).__name__)}")
        self._bits = bits

    @classmethod
    def from_bits(cls, bits):
        """Wraps a uint16 array of bfloat16 bit patterns (no copy)."""
        obj = cls.__new__(cls)
        obj.bits = np.asarray(bits)
        return obj

    def copy(self):
        """A BFloat16Array of its own copy of the bits."""
        return BFloat16Array.from_bits(self.bits.copy())

    def to_float32(self):
        """The values as a float32 array (exact: every bfloat16 is a float32)."""
        wide = self.bits.astype(np.uint32)
        wide <<= np.uint32(16)  # (in place: a 0-d array stays an array)
        return wide.view(np.float32)

    def __array__(self, dtype=None):
        values = self.to_float32()
        return values if dtype is None else values.astype(dtype)

    def __float__(self):
        # A 0-d BFloat16Array is a scalar: NumPy converts one inside a list with float().
        if self.bits.ndim != 0:
            raise TypeError("only a 0-d BFloat16Array converts to a Python float")
        return float(self.to_float32())

    dtype = "bfloat16"

    @property
    def shape(self):
        return self.bits.shape

    @property
    def ndim(self):
        return self.bits.ndim

    @property
    def size(self):
        return self.bits.size

    def __len__(self):
        return len(self.bits)

    def __getitem__(self, key):
        return BFloat16Array.from_bits(np.asarray(self.bits[key]))

    def __repr__(self):
        return f"BFloat16Array({self.to_float32().tolist()!r})"


def bfloat16(values):
    """A BFloat16Array of `values` (anything NumPy turns into floats), rounded to nearest even."""
    return BFloat16Array(values)


def _tf_default(a):
    """TensorFlow's dtype for a Python value: float32 for floats, int32 for ints that fit."""
    if a.dtype == np.float64:
        return a.astype(np.float32)
    if a.dtype == np.int64:
        info = np.iinfo(np.int32)
        if a.size == 0 or (a.min() >= info.min and a.max() <= info.max):
            return a.astype(np.int32)
    return a


_INT64_MAX = 2**63 - 1

_ALLOWED = {  # kinds a Python value may take when the dtype beside it says so
    "b": "b", "i": "iu", "u": "iu", "f": "iuf", "c": "iufc", "S": "SU", "U": "SU",
}


def _from_python(obj, like):
    a = np.asarray(obj)
    if a.size and _past_int64(a):  # (rare: Python ints NumPy could not give int64)
        items = _numbers(obj, a.dtype.kind != "O")
        if items is not None and len(items) == a.size:
            a = _wide_numbers(items, like).reshape(a.shape)
    if a.dtype.kind in "UO":
        a = _to_bytes(a)
    if like is None:
        return _tf_default(a)
    if a.size and a.dtype.kind not in _ALLOWED.get(like.kind, ""):
        raise TypeError(f"cannot convert {a.dtype} values to the {like} of the other arguments")
    if like.kind == "S":
        return a
    converted = a.astype(like)
    if a.dtype.kind in "iu" and like.kind in "iu" and not np.array_equal(converted, a):
        raise TypeError(f"values out of the range of {like}, the dtype of the other arguments")
    return converted


def _past_int64(a):
    """Whether NumPy's array of a Python value may hold integers int64 cannot: it is an object
    array, or a uint64 array past int64's top, or floats reaching 2**63 (what NumPy makes of ints
    past int64's top beside negative ones)."""
    kind = a.dtype.kind
    if kind == "O":
        return True
    if kind == "u":
        return a.itemsize == 8 and int(a.max()) > _INT64_MAX
    if kind != "f" or a.ndim == 0:
        return False
    top = max(a.tolist()) if a.ndim == 1 and a.size < 64 else a.max()  # (tolist: no ufunc call)
    return top >= 2.0**63  # (a NaN in it: floats were given)


def _is_integer(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _numbers(obj, ints_only):
    """The items of a Python number or nested lists and tuples of numbers, in order (integers as
    Python ints); None when any item is something else (a str, a bool, an object; with ints_only
    anything but an integer: NumPy's float or uint64 array of it is TensorFlow's then too)."""
    out, todo = [], [obj]
    while todo:
        x = todo.pop()
        if isinstance(x, (list, tuple)):
            todo.extend(reversed(x))
        elif _is_integer(x):
            out.append(int(x))
        elif not ints_only and isinstance(x, (float, complex, np.floating, np.complexfloating)):
            out.append(x)
        else:
            return None
    return out


def _check_int64(ints, dtype="int64"):
    """TensorFlow refuses a Python int its integer dtype cannot hold (a ValueError): ndx raises
    InvalidArgumentError, a ValueError, naming the first such value."""
    info = np.iinfo(dtype)
    for x in ints:
        if not info.min <= x <= info.max:
            from . import _ndx
            raise _ndx.InvalidArgumentError(f"the integer {x} is out of {dtype}'s range")


def _wide_numbers(items, like):
    """Python numbers among which NumPy found no one dtype (some int past int64) as TensorFlow
    converts them: to the float or complex dtype of the arguments beside them; else floats when
    any is a float (complex when any is complex); else integers, which must fit int64 (uint64
    beside a uint64 array)."""
    if like is not None and like.kind in "fc":
        return np.array(items, dtype=like)
    if not all(isinstance(x, int) for x in items):
        complex_ = any(isinstance(x, (complex, np.complexfloating)) for x in items)
        return np.array(items, dtype=np.complex128 if complex_ else np.float64)
    dtype = "uint64" if like is not None and like == np.uint64 else "int64"
    _check_int64(items, dtype)
    return np.array(items, dtype=dtype)


def _to_bytes(a):
    """str or object arrays as NumPy bytes ('S'), encoding str as UTF-8."""
    if a.size == 0:
        out = np.zeros(a.shape, "S1")  # (np.char.encode gives float64 for an empty array)
    elif a.dtype.kind == "U":
        out = np.char.encode(a, "utf-8")
    else:
        flat = a.ravel().tolist()
        items = []
        for x in flat:
            if isinstance(x, str):
                items.append(x.encode("utf-8"))
            elif isinstance(x, (bytes, np.bytes_)):
                items.append(bytes(x))
            else:
                _check_int64([int(y) for y in flat if _is_integer(y)])  # a huge int: say so
                raise TypeError(f"object arrays must hold bytes or str, not {type(x).__name__}")
        width = max((len(x) for x in items), default=1) or 1
        out = np.array(items, dtype=f"S{width}").reshape(a.shape)
    if out.itemsize == 0:
        out = out.astype("S1")
    return out


def _as_array(obj, like=None):
    """`obj` as an ndarray (or BFloat16Array) the C module can read in place."""
    if isinstance(like, str):  # "bfloat16": the array beside this one is bfloat16
        return obj if isinstance(obj, BFloat16Array) else BFloat16Array(obj)
    if isinstance(obj, BFloat16Array):
        return obj
    if isinstance(obj, (np.ndarray, np.generic)):  # (np.float64 is also a Python float)
        a = np.asarray(obj)
    elif hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        device = obj.__dlpack_device__()
        if not isinstance(device, tuple) or not device or device[0] not in (1, 3):  # CPU, pinned
            raise TypeError(f"a {type(obj).__name__} on DLPack device {device!r}; ndx reads "
                            f"CPU memory only (move it to the CPU first)")
        a = np.from_dlpack(obj)
    elif isinstance(obj, (list, tuple, int, float, complex, bool, str, bytes)):
        return _from_python(obj, like)
    else:  # NumPy scalars, the buffer protocol, __array_interface__, __array__
        a = np.asarray(obj)
    if a.dtype.kind in "UO":
        a = _to_bytes(a)
    elif a.dtype.kind == "S" and a.itemsize == 0:
        a = a.astype("S1")
    return a  # the C module copies it once if it is not C-contiguous
