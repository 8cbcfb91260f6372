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

_ndx._register(_as_array, BFloat16Array, SparseTensor)

__version__ = library_version()

__all__ = [
    "gather_nd", "scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
    "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max",
    "dynamic_stitch", "parallel_dynamic_stitch", "dynamic_partition", "SparseTensor",
    "sparse_concat", "sparse", "BFloat16Array", "bfloat16", "InvalidArgumentError",
    "OutOfMemoryError", "library_version", "release_memory",
]
