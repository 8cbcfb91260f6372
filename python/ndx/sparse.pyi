from typing import Any, Optional, Sequence

from ._sparse_tensor import SparseTensor as SparseTensor

def concat(axis: int, sp_inputs: Sequence[SparseTensor], expand_nonconcat_dims: bool = False,
           name: Optional[str] = None, *, expand_nonconcat_dim: Optional[bool] = None,
           threads: Optional[int] = None, max_memory: Optional[int] = None) -> SparseTensor: ...
def reorder(sp_input: SparseTensor, name: Optional[str] = None, *, threads: Optional[int] = None,
            max_memory: Optional[int] = None) -> SparseTensor: ...
def to_dense(sp_input: SparseTensor, default_value: Any = None, validate_indices: bool = True,
             name: Optional[str] = None, *, threads: Optional[int] = None,
             max_memory: Optional[int] = None) -> Any: ...
def from_dense(tensor: Any, name: Optional[str] = None, *, threads: Optional[int] = None,
               max_memory: Optional[int] = None) -> SparseTensor: ...
def sparse_concat(axis: Optional[int], sp_inputs: Sequence[SparseTensor], name: Optional[str] = None,
                  expand_nonconcat_dim: bool = False, concat_dim: Optional[int] = None,
                  expand_nonconcat_dims: Optional[bool] = None, *, threads: Optional[int] = None,
                  max_memory: Optional[int] = None) -> SparseTensor: ...

# the sparse segment reductions, in TensorFlow 2's order (ndx/_segment.py)
def segment_sum(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None,
                name: Optional[str] = None, sparse_gradient: bool = False) -> Any: ...
def segment_mean(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None,
                 name: Optional[str] = None, sparse_gradient: bool = False) -> Any: ...
def segment_sqrt_n(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None,
                   name: Optional[str] = None, sparse_gradient: bool = False) -> Any: ...

# sparse times dense (ndx/_sparse_matmul.py)
def sparse_dense_matmul(sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False,
                        name: Optional[str] = None) -> Any: ...
matmul = sparse_dense_matmul
# slice, split, reshape, transpose, expand_dims, reset_shape (ndx/_sparse_reshape.py)
from ._sparse_reshape import (expand_dims as expand_dims, reset_shape as reset_shape,
                              reshape as reshape, slice as slice, split as split,
                              transpose as transpose)
