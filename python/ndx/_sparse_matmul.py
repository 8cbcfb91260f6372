"""tf.sparse.sparse_dense_matmul (TensorFlow 1's tf.sparse_tensor_dense_matmul), written once for
every mode as the glue ops are (ndx/_glue.py): eagerly it runs one SparseTensorDenseMatMul node
through ndx's kernel, inside ndx.function it adds that node to the traced graph, and under a
GradientTape it is recorded (TensorFlow's gradient, for the sparse operand's values and the
dense one). ndx.sparse exports it; ndx exports TensorFlow 1's name."""
from __future__ import annotations  # the annotations below are for type checkers only

from typing import Any, Optional

from ._glue import _mode, cast, fill, multiply, range as _range, reshape, shape, subtract
from ._array import stack
from ._gather_ops import gather
from ._sparse_ops import sparse_parts
from ._sparse_tensor import SparseTensor

_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function

__all__ = ["sparse_dense_matmul"]


def _matmul(m, sp, b, adjoint_a, adjoint_b, name):
    inputs = sparse_parts(m, "sparse.sparse_dense_matmul", sp) + [m.convert(b)]
    attrs = {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)}
    return m.op("SparseTensorDenseMatMul", inputs, attrs, name)[0]


def _adjoint(m, x, name):
    """x^H of a matrix x [p, q]: the sparse identity [q, q] times x with adjoint_b, the op's own
    conjugate transpose (ndx has no transpose op)."""
    q = gather(shape(x, out_type="int64"), 1)
    r = _range(0, q, 1, dtype="int64")
    identity = SparseTensor._from_parts(stack([r, r], axis=1),
                                        fill(reshape(q, [1]), m.convert(1, m.dtype(x))),
                                        stack([q, q]))
    return _matmul(m, identity, x, False, True, name)


def _conj(m, x):
    """conj(x) for complex x (from casts, as ndx has no conj op: re(x) - i re(-i x)), else x."""
    dt = m.dtype(x)
    if dt.name not in ("complex64", "complex128"):
        return x
    real = "float32" if dt.name == "complex64" else "float64"
    re = cast(cast(x, real), dt)
    im = cast(cast(multiply(x, m.convert(-1j, dt)), real), dt)
    return subtract(re, multiply(im, m.convert(1j, dt)))


def sparse_dense_matmul(sp_a: Any, b: _Value, adjoint_a: bool = False, adjoint_b: bool = False,
                        name: Optional[str] = None) -> _Value:
    """The product of a rank-2 SparseTensor and a dense matrix (tf.sparse.sparse_dense_matmul):
    op(sp_a) @ op(b), where op takes the adjoint (the conjugate transpose) when adjoint_a /
    adjoint_b is set. The values and b share one dtype: float16, bfloat16, float32, float64,
    int32, complex64 or complex128. The entries may be in any order and repeat (repeats add);
    each output element adds its terms in entry order, so results are the same at any thread
    count. An entry outside sp_a's dense_shape raises InvalidArgumentError with TensorFlow's
    message ("k (7) from index[3,1] out of bounds (>=5)"). As in TensorFlow 2, the sparse
    operand may come second (a dense sp_a, a SparseTensor b): TensorFlow then computes the
    transpose of sparse_dense_matmul(b, sp_a) with the adjoints swapped and negated, which is
    op(sp_a) @ op(b) for real dtypes and its complex conjugate for complex ones; ndx gives the
    same. Under a GradientTape both operands get gradients (the SparseTensor's as
    the gradient of its values).

    >>> sp = ndx.SparseTensor([[0, 1], [1, 0], [1, 2]], np.array([2., 3., 4.]), [2, 3])
    >>> ndx.sparse.sparse_dense_matmul(sp, np.array([[1., 2.], [3., 4.], [5., 6.]]))
    array([[ 6.,  8.],
           [23., 30.]])
    >>> ndx.sparse.sparse_dense_matmul(np.array([[1., 1.]]), sp)
    array([[3., 2., 4.]])
    """
    m = _mode()
    if isinstance(b, SparseTensor) and not isinstance(sp_a, SparseTensor):
        # TensorFlow's transpose(y) with y = op(b)^H op(a)^H: (conj y)^H, as ndx has no
        # transpose op (for real dtypes op(a) op(b))
        y = _matmul(m, b, sp_a, not adjoint_b, not adjoint_a, None)
        return _adjoint(m, _conj(m, y), name)
    return _matmul(m, sp_a, b, adjoint_a, adjoint_b, name)
