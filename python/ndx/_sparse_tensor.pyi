from typing import Any, Optional, Tuple

import numpy as np

class SparseTensor:
    # NumPy arrays; inside a trace (a symbolic sparse tensor) ndx Tensors
    indices: Any
    values: Any
    dense_shape: Any
    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None: ...
    @property
    def shape(self) -> Optional[Tuple[Optional[int], ...]]: ...
    @property
    def dtype(self) -> Any: ...
