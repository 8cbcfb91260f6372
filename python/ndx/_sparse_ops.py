"""What the ndx.sparse ops written on graph kinds share. Such an op is written once for every
mode, as the glue ops are (ndx/_glue.py): `m = _glue._mode(...)` picks eager execution, the
traced graph or the eager tape, `m.op(type, inputs, attrs, name)` runs or adds the node, and a
SparseTensor goes in as three inputs and comes out of three outputs."""
from ._sparse_tensor import SparseTensor


def sparse_parts(m, op, sp):
    """The three inputs (indices, values, dense_shape) of a SparseTensor for m.op; m is a mode of
    ndx/_glue.py or a traced graph (both convert). Anything else is a TypeError naming `op`."""
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"{op}: expected an ndx.SparseTensor, not {type(sp).__name__}")
    return [m.convert(sp.indices), m.convert(sp.values), m.convert(sp.dense_shape)]


def sparse_result(outputs):
    """The SparseTensor of a sparse node's first three outputs."""
    return SparseTensor._from_parts(*outputs[:3])
