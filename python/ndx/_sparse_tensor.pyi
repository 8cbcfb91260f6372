from typing import Any, Tuple

import numpy as np

class SparseTensor:
    indices: np.ndarray
    values: Any
    dense_shape: np.ndarray
    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None: ...
    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def dtype(self) -> Any: ...
