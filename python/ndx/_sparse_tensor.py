"""ndx.SparseTensor: TensorFlow's COO sparse tensor, three NumPy arrays."""
import numpy as np

from . import _ndx
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

    >>> st = ndx.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
    >>> st.shape
    (3, 4)
    >>> ndx.sparse.to_dense(st)
    array([[1, 0, 0, 0],
           [0, 0, 2, 0],
           [0, 0, 0, 0]], dtype=int32)
    """

    __slots__ = ("indices", "values", "dense_shape")

    def __init__(self, indices, values, dense_shape):
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

    @property
    def shape(self):
        """The dense shape as a tuple of ints."""
        return tuple(int(d) for d in self.dense_shape)

    @property
    def dtype(self):
        """The values' dtype."""
        return self.values.dtype

    def __repr__(self):
        return (f"SparseTensor(indices={self.indices.tolist()!r}, values={self.values!r}, "
                f"dense_shape={self.dense_shape.tolist()!r})")
