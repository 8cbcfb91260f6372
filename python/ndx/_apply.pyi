# Type stubs for ndx._apply: the sparse optimizer steps.
from typing import Any, Optional

def sparse_apply_sgd(var: Any, lr: Any, grad: Any, indices: Any, *, bad_indices: Optional[str] = None,
                     threads: Optional[int] = None, max_memory: Optional[int] = None) -> Any: ...
def sparse_apply_adagrad(var: Any, accum: Any, lr: Any, grad: Any, indices: Any, epsilon: Any = None,
                         update_slots: bool = True, *, sum_duplicates: bool = False,
                         bad_indices: Optional[str] = None,
                         threads: Optional[int] = None, max_memory: Optional[int] = None) -> Any: ...
