# Type stubs for ndx: TensorFlow's index and sparse ops on NumPy arrays.
from typing import Any, List, Literal, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from . import sparse as sparse
from ._convert import BFloat16Array as BFloat16Array, bfloat16 as bfloat16
from ._sparse_tensor import SparseTensor as SparseTensor
from .sparse import sparse_concat as sparse_concat

__version__: str

TensorLike = Union[npt.ArrayLike, BFloat16Array, Any]
Result = Union[np.ndarray, BFloat16Array]
BadIndices = Optional[Literal["error", "ignore"]]

class InvalidArgumentError(ValueError): ...
class OutOfMemoryError(MemoryError): ...

def library_version() -> str: ...
def release_memory() -> int: ...
def gather_nd(params: TensorLike, indices: TensorLike, batch_dims: int = 0,
              name: Optional[str] = None, *, bad_indices: BadIndices = None,
              threads: Optional[int] = None, max_memory: Optional[int] = None) -> Result: ...
def scatter_nd(indices: TensorLike, updates: TensorLike, shape: Union[Sequence[int], npt.ArrayLike],
               name: Optional[str] = None, *, bad_indices: BadIndices = None,
               threads: Optional[int] = None, max_memory: Optional[int] = None) -> Result: ...
def tensor_scatter_nd_update(tensor: TensorLike, indices: TensorLike, updates: TensorLike,
                             name: Optional[str] = None, *, out: Optional[Result] = None,
                             bad_indices: BadIndices = None, threads: Optional[int] = None,
                             max_memory: Optional[int] = None) -> Result: ...
def tensor_scatter_nd_add(tensor: TensorLike, indices: TensorLike, updates: TensorLike,
                          name: Optional[str] = None, *, out: Optional[Result] = None,
                          bad_indices: BadIndices = None, threads: Optional[int] = None,
                          max_memory: Optional[int] = None) -> Result: ...
def tensor_scatter_nd_sub(tensor: TensorLike, indices: TensorLike, updates: TensorLike,
                          name: Optional[str] = None, *, out: Optional[Result] = None,
                          bad_indices: BadIndices = None, threads: Optional[int] = None,
                          max_memory: Optional[int] = None) -> Result: ...
def tensor_scatter_nd_min(tensor: TensorLike, indices: TensorLike, updates: TensorLike,
                          name: Optional[str] = None, *, out: Optional[Result] = None,
                          bad_indices: BadIndices = None, threads: Optional[int] = None,
                          max_memory: Optional[int] = None) -> Result: ...
def tensor_scatter_nd_max(tensor: TensorLike, indices: TensorLike, updates: TensorLike,
                          name: Optional[str] = None, *, out: Optional[Result] = None,
                          bad_indices: BadIndices = None, threads: Optional[int] = None,
                          max_memory: Optional[int] = None) -> Result: ...
def dynamic_stitch(indices: Sequence[TensorLike], data: Sequence[TensorLike],
                   name: Optional[str] = None, *, threads: Optional[int] = None,
                   max_memory: Optional[int] = None) -> Result: ...
def parallel_dynamic_stitch(indices: Sequence[TensorLike], data: Sequence[TensorLike],
                            name: Optional[str] = None, *, threads: Optional[int] = None,
                            max_memory: Optional[int] = None) -> Result: ...
def dynamic_partition(data: TensorLike, partitions: TensorLike, num_partitions: int,
                      name: Optional[str] = None, *, threads: Optional[int] = None,
                      max_memory: Optional[int] = None) -> List[Result]: ...
