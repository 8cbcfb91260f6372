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
from .sparse import sparse_dense_matmul as sparse_tensor_dense_matmul
from .sparse import fill_empty_rows as sparse_fill_empty_rows
from .sparse import mask as sparse_mask
from .sparse import retain as sparse_retain
from .sparse import to_indicator as sparse_to_indicator
from ._sparse_reduce import (sparse_reduce_max as sparse_reduce_max,
                             sparse_reduce_max_sparse as sparse_reduce_max_sparse,
                             sparse_reduce_sum as sparse_reduce_sum,
                             sparse_reduce_sum_sparse as sparse_reduce_sum_sparse,
                             sparse_softmax as sparse_softmax)
from ._sparse_add import (sparse_add as sparse_add, sparse_maximum as sparse_maximum,
                          sparse_minimum as sparse_minimum)
from ._sparse_reshape import (sparse_reset_shape as sparse_reset_shape,
                              sparse_reshape as sparse_reshape, sparse_slice as sparse_slice,
                              sparse_split as sparse_split, sparse_transpose as sparse_transpose)
from ._graph import (
    DType as DType,
    Graph as Graph,
    Node as Node,
    SparseTensorSpec as SparseTensorSpec,
    Tensor as Tensor,
    TensorSpec as TensorSpec,
    as_dtype as as_dtype,
)
from ._function import (
    ConcreteFunction as ConcreteFunction,
    Function as Function,
    LoadedFunction as LoadedFunction,
    function as function,
    load as load,
)
from ._gradients import (
    GradientTape as GradientTape,
    IndexedSlices as IndexedSlices,
    convert_to_tensor as convert_to_tensor,
    gradients as gradients,
)
from ._tape import TapedArray as TapedArray
from ._variables import Variable as Variable
from ._variables import (scatter_add as scatter_add, scatter_div as scatter_div,
                         scatter_max as scatter_max, scatter_min as scatter_min,
                         scatter_mul as scatter_mul, scatter_sub as scatter_sub,
                         scatter_update as scatter_update)
from ._apply import sparse_apply_adagrad as sparse_apply_adagrad, sparse_apply_sgd as sparse_apply_sgd
from . import optimizers as optimizers
from . import math as math
from . import nn as nn
from ._glue import *
from ._array import *
from ._gather_ops import *
from ._segment import *
from ._bincount import *

__version__: str

# The dtypes (ndx.bfloat16, the function, also stands for the bfloat16 dtype).
bool: DType
int8: DType
int16: DType
int32: DType
int64: DType
uint8: DType
uint16: DType
uint32: DType
uint64: DType
float16: DType
float32: DType
float64: DType
complex64: DType
complex128: DType
string: DType

class InvalidArgumentError(ValueError): ...
class OutOfMemoryError(MemoryError): ...

def library_version() -> str: ...
def release_memory() -> int: ...
