"""ndx.nn: TensorFlow's embedding lookups (tf.nn.embedding_lookup, embedding_lookup_sparse,
safe_embedding_lookup_sparse) and PyTorch's embedding_bag, on ndx's EmbeddingBag kind: every
bag combined in one pass over its ids (no Unique and Gather in between), in a fixed order, so
results are the same bits at any thread count. Each function runs eagerly on arrays and builds
nodes inside ndx.function; the gradient with respect to the table is an ndx.IndexedSlices of
the rows the ids touched, never a dense table.

A table may be one tensor or a list of shards split along dim 0, as TensorFlow's are:
partition_strategy "div" (TensorFlow 2's, the default here: contiguous ranges of ids per shard)
or "mod" (TensorFlow 1's default: id % shards)."""
from __future__ import annotations  # the annotations below are for type checkers only

from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _array, _dense, _gather_ops, _glue
from ._graph import Tensor, as_dtype
from ._sparse_tensor import SparseTensor

__all__ = ["embedding_lookup", "embedding_lookup_sparse", "safe_embedding_lookup_sparse",
           "embedding_bag"]

_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function
_Params = Union[_Value, Sequence[_Value]]

# The combiners' ndx_segment_op values (the EmbeddingBag kind's `combiner` attribute).
_COMBINERS = {"sum": 0, "mean": 4, "sqrtn": 5}
_INT64 = as_dtype("int64")
_FLOAT64 = as_dtype("float64")
_SCALAR = np.zeros(0, np.int64)  # the shape of a scalar, for reshape


def _combiner(combiner: Optional[str]) -> int:
    if combiner is None:
        combiner = "mean"
    if combiner not in _COMBINERS:
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner!r}")
    return _COMBINERS[combiner]


def _shards(params: _Params, name: str) -> list:
    """params as a list of one or more tables (TensorFlow: "Missing 'params'." when empty)."""
    if params is None:
        raise ValueError(f"{name}: Missing 'params'.")
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError(f"{name}: Missing 'params'.")
        kinds = [_dtype_name(table) for table in params]
        for i, kind in enumerate(kinds):
            if kind != kinds[0]:  # (TensorFlow: a TypeError from the DynamicStitch it builds)
                raise TypeError(f"{name}: every shard of params must have one dtype: shard {i} "
                                f"is {kind}, shard 0 is {kinds[0]}")
        return list(params)
    return [params]


def _dtype_name(table: _Value) -> str:
    """The dtype of a shard (an array, Tensor, Variable or nested list) by name."""
    dtype = getattr(table, "dtype", None)
    if dtype is None:
        dtype = np.asarray(table).dtype
    return str(getattr(dtype, "name", dtype))


def _rows(table: _Value) -> int:
    """A shard's row count, which the split of the ids needs when the lookup is built."""
    dims = np.shape(table) if not isinstance(table, Tensor) else table.shape
    if dims is None or len(dims) == 0 or dims[0] is None:
        raise ValueError("embedding_lookup: every shard's dim 0 must be known")
    return int(dims[0])


def _bag(params: _Value, ids: _Value, bags: _Value, offsets: bool, combiner: int,
         weights: Optional[_Value], max_norm: Optional[float], num_bags: _Value,
         name: Optional[str]) -> _Value:
    """One EmbeddingBag node: eagerly run through ndx's kernel, traced added to the graph."""
    m = _glue._mode()
    params = m.convert(params)
    dtype = m.dtype(params)
    if weights is None:
        weights = _array.zeros([0], dtype)
    else:
        weights = _glue.cast(weights, dtype)  # TensorFlow casts the weights to the table's
    inputs = [params, m.convert(ids), m.convert(bags), m.convert(weights),
              m.convert(-1.0 if max_norm is None else float(max_norm), _FLOAT64),
              _glue.cast(num_bags, _INT64)]
    inputs = [m.convert(x) for x in inputs]
    return m.op("EmbeddingBag", inputs, {"combiner": combiner, "bag_offsets": int(offsets)},
                name)[0]


def _clip(rows: _Value, ids_rank: int, max_norm: Optional[float]) -> _Value:
    """TensorFlow's clip_by_norm of each embedding (the dims after the ids' own) to max_norm."""
    if max_norm is None:
        return rows
    axes = list(range(ids_rank, rows.ndim)) if rows.ndim is not None else None
    if axes is None:
        axes = _glue.range(ids_rank, _glue.size(_glue.shape(rows)))
    m = _glue._mode()
    rows = m.convert(rows)
    l2sum = _glue.reduce_sum(_glue.multiply(rows, rows), axes, keepdims=True)
    positive = _glue.greater(l2sum, 0)
    l2norm = _glue.where(positive, _glue.sqrt(_glue.where(positive, l2sum,
                                                          _glue.ones_like(l2sum))), l2sum)
    clip = m.convert(float(max_norm), m.dtype(rows))  # TensorFlow: clip_norm in t's dtype
    return _glue.divide(_glue.multiply(rows, clip), _glue.maximum(l2norm, clip))


def _sharded_rows(shards: list, ids: _Value, strategy: str) -> _Value:
    """The rows of ids [N] from a table split in shards, as TensorFlow's embedding_lookup: each
    id's shard and row there by the strategy, the ids partitioned by shard, gathered from each
    and stitched back in order."""
    count = len(shards)
    ids = _glue.cast(ids, _INT64)
    if strategy == "mod":
        shard = _glue.floormod(ids, count)
        local = _glue.floordiv(ids, count)
    elif strategy == "div":
        total = sum(_rows(table) for table in shards)
        per, extras = divmod(total, count)
        past = _glue.subtract(ids, extras)
        shard = _glue.maximum(_glue.floordiv(ids, per + 1), _glue.floordiv(past, per))
        local = _glue.where(_glue.less(shard, extras), _glue.floormod(ids, per + 1),
                            _glue.floormod(past, per))
    else:
        raise ValueError(f"Unrecognized partition strategy: {strategy}")
    shard = _glue.cast(shard, "int32")
    positions = _glue.range(_glue.size(ids))
    local_parts = _dense.dynamic_partition(local, shard, count)
    position_parts = _dense.dynamic_partition(positions, shard, count)
    rows = [_gather_ops.gather(table, part) for table, part in zip(shards, local_parts)]
    return _dense.dynamic_stitch(position_parts, rows)


def embedding_lookup(params: _Params, ids: _Value, max_norm: Optional[float] = None,
                     name: Optional[str] = None, *, partition_strategy: str = "div") -> _Value:
    """The rows of `params` that `ids` name (TensorFlow 2's tf.nn.embedding_lookup): an array
    of shape ids.shape + params.shape[1:], each embedding clipped to L2 norm `max_norm` when
    given (TensorFlow's clip_by_norm). `params` may be a list of shards along dim 0, split as
    `partition_strategy` says ("div", TensorFlow 2's; "mod", tf.compat.v1's default). An id out
    of range raises InvalidArgumentError. Its gradient is an IndexedSlices of the ids' rows.

    >>> params = np.arange(12, dtype=np.float32).reshape(4, 3)
    >>> ndx.nn.embedding_lookup(params, [[3], [0]])
    array([[[ 9., 10., 11.]],
    <BLANKLINE>
           [[ 0.,  1.,  2.]]], dtype=float32)
    >>> ndx.nn.embedding_lookup([params[:2], params[2:]], [3, 1])
    array([[ 9., 10., 11.],
           [ 3.,  4.,  5.]], dtype=float32)
    """
    shards = _shards(params, "embedding_lookup")
    m = _glue._mode()
    ids = m.convert(ids)
    if len(shards) == 1:
        return _clip(_gather_ops.gather(shards[0], ids), ids.ndim, max_norm)
    flat = _glue.reshape(ids, [-1])
    rows = _sharded_rows(shards, flat, partition_strategy)
    row_shape = _array.slice(_glue.shape(rows, out_type="int64"), [1], [-1])
    shape = _array.concat([_glue.shape(ids, out_type="int64"), row_shape], 0)
    return _clip(_glue.reshape(rows, shape), ids.ndim, max_norm)


def _check_sparse(value, what: str, optional: bool = False):
    if value is None and optional:
        return
    if not isinstance(value, SparseTensor):
        raise TypeError(f"{what} must be SparseTensor, got {type(value).__name__}")


def _lookup_bags(shards: list, ids: _Value, segments: _Value, weights: Optional[_Value],
                 combiner: int, max_norm: Optional[float], num_bags: _Value,
                 strategy: str, name: Optional[str]) -> _Value:
    """The bags of ids grouped by sorted segment ids: one EmbeddingBag over the table, or, for
    shards, over the rows the sharded lookup gathered (each used once)."""
    if len(shards) == 1:
        return _bag(shards[0], ids, segments, False, combiner, weights, max_norm, num_bags,
                    name)
    rows = _clip(_sharded_rows(shards, ids, strategy), 1, max_norm)
    return _bag(rows, _glue.range(_glue.size(ids), dtype="int64"), segments, False, combiner,
                weights, None, num_bags, name)


def embedding_lookup_sparse(params: _Params, sp_ids: SparseTensor,
                            sp_weights: Optional[SparseTensor], combiner: Optional[str] = "mean",
                            max_norm: Optional[float] = None, name: Optional[str] = None,
                            allow_fast_lookup: bool = False, *,
                            partition_strategy: str = "div") -> _Value:
    """Embeddings of sparse ids, combined per row (TensorFlow 2's
    tf.nn.embedding_lookup_sparse). `sp_ids` is a SparseTensor [N, M] of ids in canonical
    row-major order; `sp_weights` one with the same indices and float weights, or None for
    weights of 1. Row r of the result combines the rows params[id] of the ids in row r of sp_ids
    (each clipped to L2 norm `max_norm` when given), as `combiner` says: "sum" sum(w * row),
    "mean" (the default) sum(w * row) / sum(w), "sqrtn" sum(w * row) / sqrt(sum(w ** 2)), a zero
    divisor giving 0. The result has (last row with an id + 1) rows; a row without ids is 0.
    `allow_fast_lookup` is accepted for TensorFlow's signature (ndx always takes its one-pass
    path); `partition_strategy` is tf.compat.v1's keyword ("mod" was its default).

    The docstring example of TensorFlow:

    >>> params = np.arange(40, dtype=np.float32).reshape(4, 10)
    >>> sp_ids = ndx.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 3]], [1, 3, 0, 1], [3, 4])
    >>> sp_weights = ndx.SparseTensor(sp_ids.indices, [2.0, 0.5, 1.0, 3.0], [3, 4])
    >>> out = ndx.nn.embedding_lookup_sparse(params, sp_ids, sp_weights, combiner="mean")
    >>> np.allclose(out[0], (params[1] * 2.0 + params[3] * 0.5) / 2.5)
    True
    >>> np.array_equal(out[2], params[1])
    True
    """
    shards = _shards(params, "embedding_lookup_sparse")
    code = _combiner(combiner)
    _check_sparse(sp_ids, "sp_ids")
    _check_sparse(sp_weights, "sp_weights", optional=True)
    del allow_fast_lookup  # (one path, the same results)
    segments = _glue.reshape(_array.slice(sp_ids.indices, [0, 0], [-1, 1]), [-1])
    weights = None if sp_weights is None else sp_weights.values
    return _lookup_bags(shards, sp_ids.values, segments, weights, code, max_norm, -1,
                        partition_strategy, name)


def safe_embedding_lookup_sparse(embedding_weights: _Params, sparse_ids: SparseTensor,
                                 sparse_weights: Optional[SparseTensor] = None,
                                 combiner: str = "mean", default_id: Optional[int] = None,
                                 max_norm: Optional[float] = None, name: Optional[str] = None,
                                 *, partition_strategy: str = "div") -> _Value:
    """embedding_lookup_sparse that tolerates invalid ids and empty rows (TensorFlow 2's
    tf.nn.safe_embedding_lookup_sparse). `sparse_ids` may have any rank >= 2: the embeddings
    are combined along its last dim, and the result has shape dense_shape[:-1] + the
    embedding's shape. Ids < 0 are dropped, and so are entries whose weight is <= 0 when
    `combiner` is not "sum"; a row left without ids gets the embedding of `default_id`, or
    zeros when it is None. With `sparse_weights`, the table takes their dtype, as TensorFlow
    converts it: arrays are converted, a Tensor or Variable of another dtype is a ValueError.

    >>> params = np.arange(8, dtype=np.float32).reshape(4, 2)
    >>> ids = ndx.SparseTensor([[0, 0], [0, 1], [2, 0]], [1, -1, 3], [3, 2])
    >>> ndx.nn.safe_embedding_lookup_sparse(params, ids)
    array([[2., 3.],
           [0., 0.],
           [6., 7.]], dtype=float32)
    >>> ndx.nn.safe_embedding_lookup_sparse(params, ids, default_id=0)
    array([[2., 3.],
           [0., 1.],
           [6., 7.]], dtype=float32)
    """
    if embedding_weights is None:
        raise ValueError("Missing embedding_weights None.")
    shards = _shards(embedding_weights, "safe_embedding_lookup_sparse")
    code = _combiner(combiner)
    _check_sparse(sparse_ids, "sparse_ids")
    _check_sparse(sparse_weights, "sparse_weights", optional=True)
    if sparse_weights is not None:
        shards = _shards_as(shards, sparse_weights.values)
    indices, ids = sparse_ids.indices, sparse_ids.values
    rank = indices.shape[1] if indices.shape[1] is not None else None
    if rank is None:
        raise ValueError("safe_embedding_lookup_sparse: the rank of sparse_ids must be known")
    # Rows: the entries' coordinates but the last, in row-major order over dense_shape[:-1].
    outer = _array.slice(sparse_ids.dense_shape, [0], [rank - 1])
    segments = _array.slice(indices, [0, 0], [-1, 1])
    for k in range(1, rank - 1):
        dim = _array.slice(outer, [k], [1])
        segments = segments * dim + _array.slice(indices, [0, k], [-1, 1])
    segments = _glue.reshape(segments, [-1])
    num_rows = _product(outer, rank - 1)
    # Pruned: ids < 0, and weights <= 0 unless the combiner is "sum".
    keep = _glue.greater_equal(ids, 0)
    weights = None if sparse_weights is None else sparse_weights.values
    if weights is not None and combiner != "sum":
        keep = _glue.logical_and(keep, _glue.greater(weights, 0))
    kept = _glue.where(keep)
    ids = _dense.gather_nd(ids, kept)
    segments = _dense.gather_nd(segments, kept)
    if weights is not None:
        weights = _dense.gather_nd(weights, kept)
    result = _lookup_bags(shards, ids, segments, weights, code, max_norm, num_rows,
                          partition_strategy, name)
    # Rows left empty: their count of ids, a sum bag of ones, is 0.
    ones = _array.ones([1, 1], "float32")
    counts = _bag(ones, _glue.zeros_like(ids), segments, False, 0, None, None, num_rows, None)
    empty = _glue.equal(counts, 0)  # [rows, 1]
    if result.ndim is not None and result.ndim > 2:
        empty = _glue.reshape(empty, [-1] + [1] * (result.ndim - 1))
    if default_id is None:
        fill = _glue.zeros_like(result)
    else:
        fill = embedding_lookup(shards if len(shards) > 1 else shards[0], [default_id],
                                max_norm, partition_strategy=partition_strategy)
    result = _glue.where(empty, fill, result)
    row_shape = _array.slice(_glue.shape(result, out_type="int64"), [1], [-1])
    return _glue.reshape(result, _array.concat([outer, row_shape], 0))


def _shards_as(shards: list, weights: _Value) -> list:
    """TensorFlow's conversion of the table to the weights' dtype in
    safe_embedding_lookup_sparse: arrays and lists are converted to it; a Tensor or Variable of
    another dtype is refused (TensorFlow: "Tensor conversion requested dtype ...")."""
    m = _glue._mode()
    dtype = m.dtype(m.convert(weights))
    out = []
    for table in shards:
        if isinstance(table, Tensor) or getattr(table, "_ndx_variable", False):
            if as_dtype(table.dtype) != dtype:
                raise ValueError(
                    f"safe_embedding_lookup_sparse: Tensor conversion requested dtype "
                    f"{dtype.name} for Tensor with dtype {as_dtype(table.dtype).name} (the "
                    f"table takes sparse_weights' dtype)")
            out.append(table)
        elif isinstance(table, np.ndarray):
            out.append(table if table.dtype == dtype.as_numpy_dtype else _glue.cast(table, dtype))
        else:
            out.append(m.convert(table, dtype))
    return out


def _product(v: _Value, n: int) -> _Value:
    """The product of the n elements of the int64 vector v."""
    total = _array.slice(v, [0], [1])
    for k in range(1, n):
        total = total * _array.slice(v, [k], [1])
    return _glue.reshape(total, _SCALAR)


def embedding_bag(params: _Value, ids: _Value, offsets: Optional[_Value] = None,
                  combiner: str = "sum", per_sample_weights: Optional[_Value] = None,
                  max_norm: Optional[float] = None, include_last_offset: bool = False,
                  name: Optional[str] = None) -> _Value:
    """PyTorch's torch.nn.functional.embedding_bag with TensorFlow's combiners: bag b holds
    ids[offsets[b]:offsets[b + 1]] (the last bag runs to the end of ids; offsets[0] must be 0;
    with include_last_offset=True offsets has one more entry, the end of the last bag). With
    `offsets` None, `ids` is 2-D [B, L]: B bags of L ids. Each bag combines its rows as
    embedding_lookup_sparse's combiners ("sum" by default, "mean", "sqrtn"), weighted by
    `per_sample_weights` (one per id) when given; an empty bag is 0. The result is
    [bags] + params.shape[1:].

    >>> params = np.arange(8, dtype=np.float32).reshape(4, 2)
    >>> ndx.nn.embedding_bag(params, [0, 2, 3, 1], [0, 3, 3], combiner="mean")
    array([[3.3333335, 4.3333335],
           [0.       , 0.       ],
           [2.       , 3.       ]], dtype=float32)
    """
    code = _combiner(combiner)
    m = _glue._mode()
    ids = m.convert(ids)
    if offsets is None:
        if ids.ndim != 2:
            raise ValueError("embedding_bag: ids must be 2-D [bags, ids per bag] when offsets "
                             "is None")
        size = _glue.shape(ids, out_type="int64")
        bags = _glue.reshape(_array.slice(size, [0], [1]), _SCALAR)
        per_bag = _glue.reshape(_array.slice(size, [1], [1]), _SCALAR)
        offsets = _glue.multiply(_glue.range(bags), per_bag)
        ids = _glue.reshape(ids, [-1])
        if per_sample_weights is not None:
            per_sample_weights = _glue.reshape(per_sample_weights, [-1])
    elif include_last_offset:
        offsets = m.convert(offsets)
        count = _glue.subtract(_glue.size(offsets, out_type="int64"), 1)
        offsets = _array.slice(offsets, _glue.constant([0], _INT64),
                               _glue.reshape(_glue.maximum(count, 0), [1]))
    return _bag(params, ids, offsets, True, code, per_sample_weights, max_norm, -1, name)
