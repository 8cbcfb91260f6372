"""ndx: TensorFlow's index and sparse ops on NumPy arrays, with TensorFlow's CPU semantics.

Switch by changing one import: `ndx.gather_nd(params, indices)` is `tf.gather_nd(params,
indices)` with NumPy arrays in and out. Inputs are read in place when they are C-contiguous
ndarrays (anything else array-like is converted once); results are new NumPy arrays written
directly by the library. The GIL is released while the library works.

Errors name the op and the argument: InvalidArgumentError (a ValueError) carries the library's
message for rejected input, and is raised for an integer argument out of its range;
OutOfMemoryError (a MemoryError) a failed or over-budget allocation; TypeError an argument of
the wrong kind or a dtype the op does not take; an input that cannot be converted raises what
its conversion raised, as "op: argument: message". A failed call changes nothing.

ndx's keywords (bad_indices=, threads=, max_memory=, and out= on the tensor_scatter_nd family)
are described in ndx.gather_nd's and ndx.tensor_scatter_nd_add's docstrings.

Graphs: @ndx.function traces a Python function of these ops and of the glue ops (ndx.add,
ndx.cast, ndx.range, ndx.shape, ...) into an ndx graph and runs it when called, as
tf.function does; ndx.load runs a saved graph. See ndx.function's docstring.

Gradients: ndx.GradientTape records eager code (its results are ndx.TapedArray) or works inside
a traced function; ndx.gradients inside traced functions. See ndx.GradientTape's docstring.
"""
from . import _ndx
from ._convert import BFloat16Array, _as_array, bfloat16
from ._dense import (
    dynamic_partition,
    dynamic_stitch,
    gather_nd,
    parallel_dynamic_stitch,
    scatter_nd,
    tensor_scatter_nd_add,
    tensor_scatter_nd_max,
    tensor_scatter_nd_min,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
)
from ._ndx import InvalidArgumentError, OutOfMemoryError, library_version, release_memory
from ._sparse_tensor import SparseTensor
from . import sparse
from .sparse import sparse_concat
from .sparse import sparse_dense_matmul as sparse_tensor_dense_matmul  # TensorFlow 1's name
from ._sparse_fill import (sparse_fill_empty_rows, sparse_mask, sparse_retain,  # TF1 names
                           sparse_to_indicator)
from ._sparse_reduce import (sparse_reduce_max, sparse_reduce_max_sparse,  # noqa: E402
                             sparse_reduce_sum, sparse_reduce_sum_sparse, sparse_softmax)
from ._sparse_add import sparse_add, sparse_maximum, sparse_minimum
from ._sparse_reshape import (sparse_reset_shape, sparse_reshape, sparse_slice, sparse_split,
                              sparse_transpose)
from ._graph import (DType, Graph, Node, SparseTensorSpec, Tensor, TensorSpec, as_dtype,
                     DTYPES as _DTYPES)
from ._glue import *  # noqa: F401,F403 (the dense ops: _glue.__all__, _array.__all__)
from . import _glue, _array
from ._array import *  # noqa: F401,F403
from . import _gather_ops
from ._gather_ops import *  # noqa: F401,F403 (gather, one_hot, unique, boolean_mask)
from . import _segment
from ._segment import *  # noqa: F401,F403 (the segment reductions, TensorFlow 1's names)
from . import _bincount
from ._bincount import *  # noqa: F401,F403 (bincount, TensorFlow 1's name)
from ._function import ConcreteFunction, Function, LoadedFunction, function, load
from ._gradients import GradientTape, IndexedSlices, convert_to_tensor, gradients
from ._tape import TapedArray
from ._variables import (Variable, scatter_add, scatter_div, scatter_max, scatter_min,
                         scatter_mul, scatter_sub, scatter_update)
from ._apply import sparse_apply_adagrad, sparse_apply_sgd
from . import optimizers
from . import math
from . import nn

# The dtypes, as TensorFlow names them (tf.float32 ...). ndx.bfloat16 stays the function that
# makes BFloat16Arrays; as a dtype (TensorSpec, cast) it means bfloat16.
(bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, _,
 float32, float64, complex64, complex128, string) = _DTYPES
del _

_ndx._register(_as_array, BFloat16Array, SparseTensor)

__version__ = library_version()

__all__ = [
    "gather_nd", "scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
    "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max",
    "dynamic_stitch", "parallel_dynamic_stitch", "dynamic_partition", "SparseTensor",
    "sparse_concat", "sparse_reduce_sum", "sparse_reduce_sum_sparse", "sparse_reduce_max",
    "sparse_reduce_max_sparse", "sparse_softmax", "sparse_add", "sparse_maximum", "sparse_minimum",
    "sparse_slice", "sparse_split", "sparse_reshape", "sparse_transpose", "sparse_reset_shape",
    "sparse", "BFloat16Array", "bfloat16", "InvalidArgumentError",
    "OutOfMemoryError", "library_version", "release_memory",
    # graphs (ndx.function)
    "function", "Function", "ConcreteFunction", "load", "LoadedFunction", "Graph", "Node",
    "Tensor", "TensorSpec", "SparseTensorSpec", "DType", "as_dtype",
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "string",
    # the dense ops: _glue.__all__ and _array.__all__, added below
    "math", "nn",
    # gradients and variables
    "gradients", "GradientTape", "IndexedSlices", "convert_to_tensor", "Variable", "TapedArray",
    "sparse_apply_sgd", "sparse_apply_adagrad", "optimizers",
] + _glue.__all__ + _array.__all__ + _gather_ops.__all__ + _segment.__all__
__all__ += _bincount.__all__
__all__ += ["sparse_tensor_dense_matmul"]
__all__ += ["sparse_fill_empty_rows", "sparse_retain", "sparse_to_indicator", "sparse_mask"]
