# Type stubs for ndx.optimizers: SGD and Adagrad.
from typing import Any, Dict, Iterable, Optional, Tuple

from ._variables import Variable

class Optimizer:
    learning_rate: float
    name: str
    def __init__(self, learning_rate: float, name: str) -> None: ...
    def apply_gradients(self, grads_and_vars: Iterable[Tuple[Any, Variable]]) -> None: ...

class SGD(Optimizer):
    def __init__(self, learning_rate: float = ..., name: str = ...) -> None: ...

class Adagrad(Optimizer):
    initial_accumulator_value: float
    epsilon: Optional[float]
    accumulators: Dict[Variable, Variable]
    def __init__(self, learning_rate: float = ..., initial_accumulator_value: float = ...,
                 epsilon: Optional[float] = ..., name: str = ...) -> None: ...
