"""ndx.SparseTensor: TensorFlow's COO sparse tensor, three NumPy arrays."""
import numpy as np

from . import _ndx, _trace
from ._convert import BFloat16Array, _as_array

__all__ = ["SparseTensor"]


# The plain kinds a conversion raises (an integer out of int64's range: InvalidArgumentError);
# a caller's own exception classes pass through as they are.
_PLAIN = (TypeError, ValueError, MemoryError, OverflowError, _ndx.InvalidArgumentError)


def _part(x, what):
    """x as an array, a plain conversion error named as every op names it ("SparseTensor:
    indices: ..."; "out of memory converting it" for a MemoryError without words)."""
    try:
        return _as_array(x)
    except _PLAIN as e:
        if type(e) not in _PLAIN:
            raise
        text = str(e) or ("out of memory converting it" if type(e) is MemoryError
                          else "cannot convert it")
        raise type(e)(f"SparseTensor: {what}: {text}") from e


def _int64_array(x, what):
    a = _part(x, what)
    if isinstance(a, BFloat16Array) or a.dtype.kind not in "iu":
        raise TypeError(f"SparseTensor: {what} must hold integers, not {a.dtype}")
    return a.astype(np.int64, copy=False)


class SparseTensor:
    """A sparse tensor as TensorFlow's tf.sparse.SparseTensor: `indices` (int64, [N, rank]), the
    `values` at those indices ([N], any dtype) and the `dense_shape` (int64, [rank]).

    Parts that do not fit together (shapes, counts, an index outside dense_shape) raise
    InvalidArgumentError, a ValueError as TensorFlow's constructor raises.

    Inside a function traced by ndx.function, parts that are traced tensors make a symbolic
    sparse tensor (the others become constants): indices cast to int64 (any integer dtype),
    the shapes the trace knows checked as TensorFlow's constructor checks them (indices
    [N, rank], values [N], dense_shape [rank]); the values are checked by the ops that use it.
    The ndx.sparse ops take it, and the function returns it as an ndx.SparseTensor of arrays.

    >>> st = ndx.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
    >>> st.shape
    (3, 4)
    >>> ndx.sparse.to_dense(st)
    array([[1, 0, 0, 0],
           [0, 0, 2, 0],
           [0, 0, 0, 0]], dtype=int32)
    """

    __slots__ = ("indices", "values", "dense_shape", "_static_shape")

    def __init__(self, indices, values, dense_shape):
        if _trace.active and _trace.graph() is not None and _any_tensor(indices, values,
                                                                        dense_shape):
            self._symbolic(_trace.graph(), indices, values, dense_shape)
            return
        indices = _int64_array(indices, "indices")
        values = _part(values, "values")
        dense_shape = _int64_array(dense_shape, "dense_shape")
        self.indices, self.values, self.dense_shape = indices, values, dense_shape
        _ndx._sparse_check(self)  # InvalidArgumentError (a ValueError) for inconsistent parts

    @classmethod
    def _from_parts(cls, indices, values, dense_shape):
        obj = cls.__new__(cls)
        obj.indices, obj.values, obj.dense_shape = indices, values, dense_shape
        return obj

    def _symbolic(self, g, indices, values, dense_shape):
        """The parts as Tensors of the trace's graph g, checked as far as the trace knows."""
        from ._glue import cast
        static = None
        parts = []
        for x, what in ((indices, "indices"), (dense_shape, "dense_shape")):
            if not _is_tensor(x):
                x = _int64_array(x, what)
                if what == "dense_shape":
                    static = tuple(int(d) for d in x.reshape(-1))
            t = g.convert(x)
            if not t.dtype.is_integer:
                raise TypeError(f"SparseTensor: {what} must hold integers, not {t.dtype.name}")
            parts.append(t if t.dtype.name == "int64" else cast(t, "int64"))
        indices, dense_shape = parts
        values = g.convert(values)
        i, v, d = indices.shape, values.shape, dense_shape.shape
        for t, rank, what, form in ((i, 2, "indices", "[N, rank]"), (v, 1, "values", "[N]"),
                                    (d, 1, "dense_shape", "[rank]")):
            if t is not None and len(t) != rank:
                raise _ndx.InvalidArgumentError(
                    f"SparseTensor: {what} must be {form}, not of shape {list(t)}")
        if i is not None and v is not None and None not in (i[0], v[0]) and i[0] != v[0]:
            raise _ndx.InvalidArgumentError(
                f"SparseTensor: indices has {i[0]} rows but values has {v[0]} elements")
        if i is not None and d is not None and None not in (i[1], d[0]) and i[1] != d[0]:
            raise _ndx.InvalidArgumentError(
                f"SparseTensor: indices rows have {i[1]} coordinates but dense_shape has "
                f"{d[0]} dims")
        self.indices, self.values, self.dense_shape = indices, values, dense_shape
        self._static_shape = static if static is not None else (
            None if d is None or d[0] is None else (None,) * d[0])

    @property
    def shape(self):
        """The dense shape as a tuple of ints (symbolic: as far as the trace knows it, None
        for an unknown dim, or None for an unknown rank)."""
        if _is_tensor(self.dense_shape):
            return getattr(self, "_static_shape", None)
        return tuple(int(d) for d in self.dense_shape)

    @property
    def dtype(self):
        """The values' dtype."""
        return self.values.dtype

    # TensorFlow's operators with a dense operand: sp * dense, dense * sp and sp / dense
    # (SparseDenseCwiseMul / Div; integer values divide as floats, as TensorFlow's __truediv__),
    # a SparseTensor of the same indices (ndx/_sparse_add.py). NumPy leaves `dense * sp` to us.
    __array_ufunc__ = None

    def __mul__(self, other):
        from ._sparse_add import _cwise
        return _cwise("SparseDenseCwiseMul", self, other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        from ._sparse_add import _cwise
        return _cwise("SparseDenseCwiseDiv", self, other, truediv=True)

    def __repr__(self):
        if _any_tensor(self.indices, self.values, self.dense_shape):
            return (f"SparseTensor(indices={self.indices!r}, values={self.values!r}, "
                    f"dense_shape={self.dense_shape!r})")
        return (f"SparseTensor(indices={self.indices.tolist()!r}, values={self.values!r}, "
                f"dense_shape={self.dense_shape.tolist()!r})")


def _is_tensor(x):
    from ._graph import Tensor
    return isinstance(x, Tensor)


def _any_tensor(*parts):
    return any(_is_tensor(x) for x in parts)
