# Type stubs for ndx._function: ndx.function, its traces, and ndx.load.
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union, overload

from ._graph import Graph, Tensor, TensorSpec

class ConcreteFunction:
    graph: Graph
    inputs: List[Tensor]
    outputs: List[Tensor]
    @property
    def structured_input_signature(self) -> Tuple[TensorSpec, ...]: ...
    def __call__(self, *args: Any, threads: Optional[int] = ..., max_memory: Optional[int] = ...,
                 out: Any = ..., **kwargs: Any) -> Any: ...
    def save(self, path: Any) -> None: ...

class Function:
    python_function: Callable[..., Any]
    input_signature: Optional[List[Any]]
    reduce_retracing: bool
    autograph: bool
    jit_compile: Optional[bool]
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction: ...
    def experimental_get_tracing_count(self) -> int: ...
    @property
    def trace_count(self) -> int: ...
    @property
    def graph(self) -> Graph: ...
    def save(self, path: Any) -> None: ...

@overload
def function(func: Callable[..., Any], input_signature: Optional[Sequence[Any]] = None,
             autograph: bool = True, jit_compile: Optional[bool] = None,
             reduce_retracing: bool = False, *, threads: Optional[int] = None,
             max_memory: Optional[int] = None, name: Optional[str] = None) -> Function: ...
@overload
def function(func: None = None, input_signature: Optional[Sequence[Any]] = None,
             autograph: bool = True, jit_compile: Optional[bool] = None,
             reduce_retracing: bool = False, *, threads: Optional[int] = None,
             max_memory: Optional[int] = None,
             name: Optional[str] = None) -> Callable[[Callable[..., Any]], Function]: ...
def function(func: Optional[Callable[..., Any]] = None,
             input_signature: Optional[Sequence[Any]] = None, autograph: bool = True,
             jit_compile: Optional[bool] = None, reduce_retracing: bool = False, *,
             threads: Optional[int] = None, max_memory: Optional[int] = None,
             name: Optional[str] = None) -> Any: ...

class LoadedFunction:
    graph: Graph
    feeds: List[str]
    default_fetches: List[str]
    def __call__(self, fetches: Union[None, str, Sequence[str]] = ..., **feeds: Any) -> Any: ...

def load(path: Any, threads: Optional[int] = None, max_memory: Optional[int] = None) -> LoadedFunction: ...
