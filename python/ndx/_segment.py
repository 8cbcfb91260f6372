"""TensorFlow's segment reductions — tf.math.unsorted_segment_{sum,prod,min,max,mean,sqrt_n},
tf.math.segment_{sum,prod,min,max,mean} and tf.sparse.segment_{sum,mean,sqrt_n} — written once
for both modes as the glue ops are (ndx/_glue.py): eagerly each runs one node (UnsortedSegmentSum,
SegmentMax, SparseSegmentMean, ...) through ndx's kernels, inside ndx.function it adds that node to
the traced graph, and under a GradientTape it is recorded (TensorFlow's gradients; the sparse
ones' is an ndx.IndexedSlices of the rows read). ndx.math and ndx.sparse re-export them under
TensorFlow 2's names; ndx exports TensorFlow 1's top-level names (tf.unsorted_segment_sum,
tf.segment_sum, tf.sparse_segment_sum with name before num_segments)."""
from __future__ import annotations  # the annotations below are for type checkers only

from typing import Any, Optional

from . import _glue
from ._glue import _mode, _typed
from ._graph import as_dtype

_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function

__all__ = ["unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_min",
           "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_sqrt_n",
           "segment_sum", "segment_prod", "segment_min", "segment_max", "segment_mean",
           "sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n"]

_INT32 = as_dtype("int32")


def _index(m, value):
    """An index argument: a Python int or list is int32, as TensorFlow converts it."""
    return m.convert(value) if _typed(value) else m.convert(value, _INT32)


def _unsorted(type_name: str, data: _Value, segment_ids: _Value, num_segments: _Value,
              name: Optional[str]) -> _Value:
    m = _mode()
    return m.op(type_name, [m.convert(data), _index(m, segment_ids), _index(m, num_segments)],
                {}, name)[0]


def _sorted(type_name: str, data: _Value, segment_ids: _Value, name: Optional[str]) -> _Value:
    m = _mode()
    return m.op(type_name, [m.convert(data), _index(m, segment_ids)], {}, name)[0]


def _sparse(type_name: str, data: _Value, indices: _Value, segment_ids: _Value,
            num_segments: _Value, name: Optional[str]) -> _Value:
    m = _mode()
    inputs = [m.convert(data), _index(m, indices), _index(m, segment_ids)]
    if num_segments is not None:
        type_name += "WithNumSegments"
        inputs.append(_index(m, num_segments))
    return m.op(type_name, inputs, {}, name)[0]


def unsorted_segment_sum(data: _Value, segment_ids: _Value, num_segments: _Value,
                         name: Optional[str] = None) -> _Value:
    """output[s] = sum of data[i...] over the i... with segment_ids[i...] == s
    (tf.math.unsorted_segment_sum). segment_ids has the shape of data's first dims; the output is
    [num_segments] + data.shape[segment_ids.ndim:]. A negative id drops its row; an id >=
    num_segments raises InvalidArgumentError. Empty segments are 0.

    >>> ndx.math.unsorted_segment_sum(np.array([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]],
    ...                               np.int32), [0, 1, 0], num_segments=2)
    array([[5, 5, 5, 5],
           [5, 6, 7, 8]], dtype=int32)
    """
    return _unsorted("UnsortedSegmentSum", data, segment_ids, num_segments, name)


def unsorted_segment_prod(data: _Value, segment_ids: _Value, num_segments: _Value,
                          name: Optional[str] = None) -> _Value:
    """As unsorted_segment_sum with products (tf.math.unsorted_segment_prod); empty segments are
    1.

    >>> ndx.math.unsorted_segment_prod(np.array([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]],
    ...                                np.int32), [0, 1, 0], num_segments=2)
    array([[4, 6, 6, 4],
           [5, 6, 7, 8]], dtype=int32)
    """
    return _unsorted("UnsortedSegmentProd", data, segment_ids, num_segments, name)


def unsorted_segment_min(data: _Value, segment_ids: _Value, num_segments: _Value,
                         name: Optional[str] = None) -> _Value:
    """As unsorted_segment_sum with minima (tf.math.unsorted_segment_min); an empty segment is
    the dtype's largest value, as in TensorFlow.

    >>> ndx.math.unsorted_segment_min(np.array([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]],
    ...                               np.int32), [0, 1, 0], num_segments=2)
    array([[1, 2, 2, 1],
           [5, 6, 7, 8]], dtype=int32)
    """
    return _unsorted("UnsortedSegmentMin", data, segment_ids, num_segments, name)


def unsorted_segment_max(data: _Value, segment_ids: _Value, num_segments: _Value,
                         name: Optional[str] = None) -> _Value:
    """As unsorted_segment_sum with maxima (tf.math.unsorted_segment_max); an empty segment is
    the dtype's lowest value, as in TensorFlow.

    >>> ndx.math.unsorted_segment_max(np.array([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]],
    ...                               np.int32), [0, 1, 0], num_segments=2)
    array([[4, 3, 3, 4],
           [5, 6, 7, 8]], dtype=int32)
    """
    return _unsorted("UnsortedSegmentMax", data, segment_ids, num_segments, name)


def _integer_mean(data, segment_ids, num_segments, name):
    """TensorFlow's composition for integer data: the segments' sums over max(count, 1), the
    count a sum of ones in data's dtype shaped to broadcast, divided as true division does."""
    m = _mode()
    data, segment_ids = m.convert(data), _index(m, segment_ids)
    if data.ndim is None or segment_ids.ndim is None:
        raise ValueError("unsorted_segment_mean: integer data needs the ranks of data and "
                         "segment_ids known")
    summed = _unsorted("UnsortedSegmentSum", data, segment_ids, num_segments, None)
    ones = _glue.ones_like(segment_ids, dtype=m.dtype(data))
    count = _unsorted("UnsortedSegmentSum", ones, segment_ids, num_segments, None)
    count = _glue.reshape(count, [-1] + [1] * (data.ndim - segment_ids.ndim))
    return _glue.divide(summed, _glue.maximum(count, 1), name=name)


def unsorted_segment_mean(data: _Value, segment_ids: _Value, num_segments: _Value,
                          name: Optional[str] = None) -> _Value:
    """The sum of each segment divided by its count of rows (tf.math.unsorted_segment_mean; one
    node, UnsortedSegmentMean, where TensorFlow composes it). Empty segments are 0. Integer
    data takes TensorFlow's composition, whose true division gives float64 (float32 for 8- and
    16-bit integers).

    >>> ndx.math.unsorted_segment_mean(np.array([[1., 2.], [5., 6.], [3., 4.]]), [0, 1, 0], 2)
    array([[2., 3.],
           [5., 6.]])
    >>> ndx.math.unsorted_segment_mean(np.array([1, 2, 4], np.int32), [0, 0, 1], 2)
    array([1.5, 4. ])
    """
    m = _mode()
    data = m.convert(data)
    if m.dtype(data).is_integer:
        return _integer_mean(data, segment_ids, num_segments, name)
    return _unsorted("UnsortedSegmentMean", data, segment_ids, num_segments, name)


def unsorted_segment_sqrt_n(data: _Value, segment_ids: _Value, num_segments: _Value,
                            name: Optional[str] = None) -> _Value:
    """The sum of each segment divided by the square root of its count of rows
    (tf.math.unsorted_segment_sqrt_n; one node, UnsortedSegmentSqrtN). Empty segments are 0.

    >>> ndx.math.unsorted_segment_sqrt_n(np.array([[3.], [1.], [1.]]), [1, 0, 0], 2)
    array([[1.41421356],
           [3.        ]])
    """
    return _unsorted("UnsortedSegmentSqrtN", data, segment_ids, num_segments, name)


def segment_sum(data: _Value, segment_ids: _Value, name: Optional[str] = None) -> _Value:
    """The sums of rows of data grouped by sorted segment_ids, a vector of one id per row
    (tf.math.segment_sum): last id + 1 rows, empty segments 0. Ids that decrease or are negative
    raise InvalidArgumentError.

    >>> ndx.math.segment_sum(np.array([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]], np.int32),
    ...                      [0, 0, 1])
    array([[5, 5, 5, 5],
           [5, 6, 7, 8]], dtype=int32)
    """
    return _sorted("SegmentSum", data, segment_ids, name)


def segment_prod(data: _Value, segment_ids: _Value, name: Optional[str] = None) -> _Value:
    """As segment_sum with products (tf.math.segment_prod); empty segments are 1.

    >>> ndx.math.segment_prod(np.array([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]], np.int32),
    ...                       [0, 0, 1])
    array([[4, 6, 6, 4],
           [5, 6, 7, 8]], dtype=int32)
    """
    return _sorted("SegmentProd", data, segment_ids, name)


def segment_min(data: _Value, segment_ids: _Value, name: Optional[str] = None) -> _Value:
    """As segment_sum with minima (tf.math.segment_min); empty segments are 0.

    >>> ndx.math.segment_min(np.array([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]], np.int32),
    ...                      [0, 0, 1])
    array([[1, 2, 2, 1],
           [5, 6, 7, 8]], dtype=int32)
    """
    return _sorted("SegmentMin", data, segment_ids, name)


def segment_max(data: _Value, segment_ids: _Value, name: Optional[str] = None) -> _Value:
    """As segment_sum with maxima (tf.math.segment_max); empty segments are 0.

    >>> ndx.math.segment_max(np.array([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]], np.int32),
    ...                      [0, 0, 1])
    array([[4, 3, 3, 4],
           [5, 6, 7, 8]], dtype=int32)
    """
    return _sorted("SegmentMax", data, segment_ids, name)


def segment_mean(data: _Value, segment_ids: _Value, name: Optional[str] = None) -> _Value:
    """As segment_sum with means (tf.math.segment_mean); empty segments are 0.

    >>> ndx.math.segment_mean(np.array([[1., 2., 3., 4.], [4., 3., 2., 1.], [5., 6., 7., 8.]]),
    ...                       [0, 0, 1])
    array([[2.5, 2.5, 2.5, 2.5],
           [5. , 6. , 7. , 8. ]])
    """
    return _sorted("SegmentMean", data, segment_ids, name)


def sparse_segment_sum(data: _Value, indices: _Value, segment_ids: _Value,
                       name: Optional[str] = None, num_segments: _Value = None,
                       sparse_gradient: bool = False) -> _Value:
    """output[s] = sum of data[indices[i]] over the i with segment_ids[i] == s
    (tf.sparse.segment_sum; here TensorFlow 1's tf.sparse_segment_sum order, name before
    num_segments: ndx.sparse.segment_sum has TensorFlow 2's). segment_ids sorted and >= 0;
    num_segments None gives last id + 1 rows (SparseSegmentSum), else that many
    (SparseSegmentSumWithNumSegments). Under a GradientTape, data's gradient is an
    ndx.IndexedSlices of the rows read, whatever sparse_gradient says (TensorFlow's keyword,
    accepted).

    >>> c = np.array([[1, 2, 3, 4], [-1, -2, -3, -4], [5, 6, 7, 8]], np.int32)
    >>> ndx.sparse.segment_sum(c, [0, 1], [0, 0])
    array([[0, 0, 0, 0]], dtype=int32)
    >>> ndx.sparse.segment_sum(c, [0, 1, 2], [0, 0, 1])
    array([[0, 0, 0, 0],
           [5, 6, 7, 8]], dtype=int32)
    >>> ndx.sparse.segment_sum(c, [0, 1], [0, 2], num_segments=4)
    array([[ 1,  2,  3,  4],
           [ 0,  0,  0,  0],
           [-1, -2, -3, -4],
           [ 0,  0,  0,  0]], dtype=int32)
    """
    del sparse_gradient  # (the gradient is an IndexedSlices either way)
    return _sparse("SparseSegmentSum", data, indices, segment_ids, num_segments, name)


def sparse_segment_mean(data: _Value, indices: _Value, segment_ids: _Value,
                        name: Optional[str] = None, num_segments: _Value = None,
                        sparse_gradient: bool = False) -> _Value:
    """As sparse_segment_sum with means (tf.sparse.segment_mean; TensorFlow 1's argument order
    here): a float data only.

    >>> ndx.sparse.segment_mean(np.array([[1., 2.], [3., 4.]]), [0, 1, 1], [0, 0, 1])
    array([[2., 3.],
           [3., 4.]])
    """
    del sparse_gradient  # (the gradient is an IndexedSlices either way)
    return _sparse("SparseSegmentMean", data, indices, segment_ids, num_segments, name)


def sparse_segment_sqrt_n(data: _Value, indices: _Value, segment_ids: _Value,
                          name: Optional[str] = None, num_segments: _Value = None,
                          sparse_gradient: bool = False) -> _Value:
    """As sparse_segment_sum divided by the square root of each segment's count
    (tf.sparse.segment_sqrt_n; TensorFlow 1's argument order here): a float data only.

    >>> ndx.sparse.segment_sqrt_n(np.array([[2., 4.]]), [0, 0], [0, 0])
    array([[2.82842712, 5.65685425]])
    """
    del sparse_gradient  # (the gradient is an IndexedSlices either way)
    return _sparse("SparseSegmentSqrtN", data, indices, segment_ids, num_segments, name)
