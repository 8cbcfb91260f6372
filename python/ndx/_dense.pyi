# Type stubs for ndx._dense: the dense ops (re-exported by ndx).
from typing import Any, List, Literal, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from ._convert import BFloat16Array

TensorLike = Union[npt.ArrayLike, BFloat16Array, Any]
Result = Union[np.ndarray, BFloat16Array]
GatherBadIndices = Optional[Literal["error", "ignore", "zero"]]
ScatterBadIndices = Optional[Literal["error", "ignore", "skip"]]

def gather_nd(params: TensorLike, indices: TensorLike, batch_dims: int = 0,
              name: Optional[str] = None, *, bad_indices: GatherBadIndices = None,
              threads: Optional[int] = None, max_memory: Optional[int] = None) -> Result: ...
def scatter_nd(indices: TensorLike, updates: TensorLike, shape: Union[Sequence[int], npt.ArrayLike],
               name: Optional[str] = None, *, bad_indices: ScatterBadIndices = None,
               threads: Optional[int] = None, max_memory: Optional[int] = None) -> Result: ...
def tensor_scatter_nd_update(tensor: TensorLike, indices: TensorLike, updates: TensorLike,
                             name: Optional[str] = None, *, out: Optional[Result] = None,
                             bad_indices: ScatterBadIndices = None, threads: Optional[int] = None,
                             max_memory: Optional[int] = None) -> Result: ...
def tensor_scatter_nd_add(tensor: TensorLike, indices: TensorLike, updates: TensorLike,
                          name: Optional[str] = None, *, out: Optional[Result] = None,
                          bad_indices: ScatterBadIndices = None, threads: Optional[int] = None,
                          max_memory: Optional[int] = None) -> Result: ...
def tensor_scatter_nd_sub(tensor: TensorLike, indices: TensorLike, updates: TensorLike,
                          name: Optional[str] = None, *, out: Optional[Result] = None,
                          bad_indices: ScatterBadIndices = None, threads: Optional[int] = None,
                          max_memory: Optional[int] = None) -> Result: ...
def tensor_scatter_nd_min(tensor: TensorLike, indices: TensorLike, updates: TensorLike,
                          name: Optional[str] = None, *, out: Optional[Result] = None,
                          bad_indices: ScatterBadIndices = None, threads: Optional[int] = None,
                          max_memory: Optional[int] = None) -> Result: ...
def tensor_scatter_nd_max(tensor: TensorLike, indices: TensorLike, updates: TensorLike,
                          name: Optional[str] = None, *, out: Optional[Result] = None,
                          bad_indices: ScatterBadIndices = None, threads: Optional[int] = None,
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
