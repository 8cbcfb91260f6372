# Type stubs for ndx: TensorFlow's index and sparse ops on NumPy arrays.
from . import sparse as sparse
from ._convert import BFloat16Array as BFloat16Array, bfloat16 as bfloat16
from ._dense import (
    gather_nd as gather_nd,
    scatter_nd as scatter_nd,
    tensor_scatter_nd_update as tensor_scatter_nd_update,
    tensor_scatter_nd_add as tensor_scatter_nd_add,
    tensor_scatter_nd_sub as tensor_scatter_nd_sub,
    tensor_scatter_nd_min as tensor_scatter_nd_min,
    tensor_scatter_nd_max as tensor_scatter_nd_max,
    dynamic_stitch as dynamic_stitch,
    parallel_dynamic_stitch as parallel_dynamic_stitch,
    dynamic_partition as dynamic_partition,
)
from ._sparse_tensor import SparseTensor as SparseTensor
from .sparse import sparse_concat as sparse_concat

__version__: str

class InvalidArgumentError(ValueError): ...
class OutOfMemoryError(MemoryError): ...

def library_version() -> str: ...
def release_memory() -> int: ...
