"""ndx.function: Python functions traced into ndx graphs and called like functions
(TensorFlow's tf.function), and ndx.load for saved graphs.

Objects (see ndx/_graph.py for Graph and Tensor):
  * Function (what @ndx.function returns) holds the Python function and a cache of
    ConcreteFunction keyed by the call's signature: per argument, the dtype and shape of each
    array leaf, the structure of lists, tuples and dicts, and the value of every other Python
    value (ints, strings: baked into the trace, as TensorFlow does). With input_signature there
    is one key. Calling it inside another trace runs the Python function there (inlined).
  * ConcreteFunction: one traced Graph, its placeholders (`inputs`, one per array leaf, named
    after the argument), the fetched Tensors (`outputs`) and the returned structure, and a
    session per (threads, max_memory), created on first call and kept, so that repeated calls
    allocate only their results. A call converts its arguments as the eager ops do (in place
    for C-contiguous arrays), checks every dtype and shape before any node runs, and runs the
    session, the GIL released unless the run is small (one run per session at a time: the C
    side holds a lock). The common call, arrays by position that are the last trace's leaves
    as they are, takes a short path (_fast_call: one _ndx._Session.call, which checks them
    against the inputs the session was given once, _Session.signature, and makes the result
    arrays itself); Function.__call__ keeps that trace's _fast_call and tries it first.
  * Gradients and variables add nodes to the graph being traced (`_trace.graph()`) through
    Graph.op, or through new methods of _ndx._Graph for the C builders ndx_op_by_type does not
    cover (python/src/graph.h declares the objects and py_graph_output, the C handle of a
    Tensor's (op, index)); Graph.add_target(node) makes every call run a node it fetches
    nothing from (an update); ConcreteFunction._session(threads, max_memory) is the
    _ndx._Session a call runs (where a session's variables live).
"""
import functools
import inspect
import os
import threading

import numpy as np

from . import _ndx, _trace
from ._convert import BFloat16Array, _as_array
from ._graph import (Graph, SparseTensorSpec, Tensor, TensorSpec, _like, _shape_text,
                     _shapes_agree, dtype_of, valid_name)
from ._sparse_tensor import SparseTensor
from . import _variables
from ._gradients import IndexedSlices

__all__ = ["function", "Function", "ConcreteFunction", "load", "LoadedFunction"]

_trace.watch(globals())  # (_tracing: whether any trace runs)


# ---- argument structures --------------------------------------------------------------------

def _is_array_like(value):
    if getattr(value, "_ndx_variable", False):
        return False  # (a Variable is passed by reference, as tf.function passes it)
    return (isinstance(value, (np.ndarray, np.generic, BFloat16Array)) or
            hasattr(value, "__dlpack__") or hasattr(value, "__array_interface__") or
            hasattr(value, "__array__"))


def _structure(value, name, leaves):
    """The cache key of one argument; its array leaves are appended to `leaves` as
    (None, placeholder name, array)."""
    if isinstance(value, Tensor):
        value.graph.check_open()  # raises: a symbolic tensor outside its trace
    if isinstance(value, SparseTensor):
        for part, what in ((value.indices, "indices"), (value.values, "values"),
                           (value.dense_shape, "dense_shape")):
            leaves.append((None, f"{name}_{what}", _array(part)))
        return ("sparse",) + tuple(TensorSpec.from_value(a)._key() for _, _, a in leaves[-3:])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(
            _structure(v, f"{name}_{i}", leaves) for i, v in enumerate(value))
    if isinstance(value, dict):
        return ("dict",) + tuple((k, _structure(value[k], f"{name}_{k}", leaves))
                                 for k in sorted(value, key=repr))
    if isinstance(value, np.ndarray):  # (the common case first: its dtype and shape are the key)
        leaves.append((None, name, value))
        return ("array", value.dtype, value.shape)
    if _is_array_like(value) and not isinstance(value, (bool, int, float, complex, str, bytes)):
        a = _array(value)
        leaves.append((None, name, a))
        return ("array",) + TensorSpec.from_value(a)._key()
    if getattr(value, "_ndx_variable", False):  # (unhashable, as TensorFlow 2's: by identity)
        return ("variable", value.ref())
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"argument {name}: a {type(value).__name__} is neither an array, a "
                        f"list, tuple or dict, nor a hashable Python value") from None
    return ("value", type(value), value)


def _array(value):
    if isinstance(value, (np.ndarray, BFloat16Array)):
        return value
    return _as_array(value)


def _node_name(name):
    """A placeholder name from an argument name (TensorFlow's rule for node names)."""
    return name if valid_name(name) else "input"


# ---- the traced function --------------------------------------------------------------------

class ConcreteFunction:
    """One trace of a Function: `graph` (an ndx Graph: .nodes, str(), to_dot(), save()),
    `inputs` (the placeholders, Tensors), `outputs` (the fetched Tensors) and
    `structured_input_signature`. Call it with arrays (the same structure of arguments as the
    trace had); it returns NumPy arrays in the structure the Python function returned."""

    def __init__(self, function, graph, inputs, output_structure, outputs, threads, max_memory):
        self._function = function        # binds a call's arguments to array leaves
        self.graph = graph
        self.inputs = inputs             # placeholder Tensors, in leaf order
        self._output_structure = output_structure
        self.outputs = outputs           # fetched Tensors
        self._fetches = tuple(t.output for t in outputs)
        self._likes = [_like(t.dtype) for t in inputs]  # (NumPy dtypes; "bfloat16")
        # Per input: (node, what its lists become, rank or None, the known dims, the Tensor).
        self._checks = [(t.op, like, None if t.shape is None else len(t.shape),
                         [(i, d) for i, d in enumerate(t.shape or ()) if d is not None], t)
                        for t, like in zip(inputs, self._likes)]
        self._single = output_structure == ("tensor",)
        self._targets = tuple(graph.targets)
        self._threads, self._max_memory = threads, max_memory
        self._sessions = {}
        self._lock = threading.Lock()
        self._fast = None                # see _fast_call
        # Arguments by position are the leaves when there are as many as parameters (and no
        # nested input_signature: TensorSpecs of lists and dicts take those apart).
        self._params = (len(function._names) if function._fixed and
                        (function.input_signature is None or function._flat) else -1)

    @property
    def structured_input_signature(self):
        return tuple(TensorSpec(t.shape, t.dtype, t.node.name) for t in self.inputs)

    def _session(self, threads, max_memory):
        key = (threads, max_memory)
        s = self._sessions.get(key)
        if s is None:
            with self._lock:
                s = self._sessions.get(key)
                if s is None:
                    s = _ndx._Session(self.graph._g, threads, max_memory)
                    s.signature([(t.op, like) for t, like in zip(self.inputs, self._likes)],
                                [f + (_like(t.dtype),) for f, t in zip(self._fetches,
                                                                       self.outputs)],
                                self._targets, self._single)
                    self._sessions[key] = s
        return s

    def _fast_call(self):
        """A call of the default session with one array per input, as given (the arguments'
        tuple when they are the leaves): its results packed, or NotImplemented when an argument
        is not one _ndx._Session.call takes as it is (then nothing ran: take _run)."""
        fast = self._fast
        if fast is not None:
            return fast
        session = self._session(self._threads, self._max_memory)
        call, graph, structure = session.call, self.graph, self._output_structure
        if graph._variables:
            def fast(arrays):
                result = _variables.run(graph, session, call, arrays)
                return (result if result is NotImplemented or structure == ("tensor",) else
                        _unflatten(structure, iter(result)))
        elif self._single:
            fast = call  # (it returns the one array itself)
        else:
            def fast(arrays):
                result = call(arrays)
                return result if result is NotImplemented else _unflatten(structure, iter(result))
        self._fast = fast
        return fast

    def _run(self, arrays, threads, max_memory, out=None):
        """Runs the graph on one array per placeholder (checked first); `out` is None or what
        the function returns with arrays to write into (and None for new ones)."""
        if len(arrays) != len(self.inputs):
            raise TypeError(f"{self.graph.name}: {len(arrays)} arrays for {len(self.inputs)} "
                            f"inputs")
        feeds = []
        for (op, like, rank, known, t), a in zip(self._checks, arrays):
            if type(a) is np.ndarray and a.dtype == like:  # the common case, checked quickly
                shape = a.shape
                if rank is not None and (len(shape) != rank or any(shape[i] != d for i, d in known)):
                    self._refuse_shape(t, shape)
            else:
                self._check_other(t, a)
            feeds.append((op, 0, a, like))
        threads = self._threads if threads is None else threads
        max_memory = self._max_memory if max_memory is None else max_memory
        fetches = self._fetches
        if out is not None:
            outs = []
            _flatten_out(self._output_structure, out, outs)
            fetches = [f + (o,) for f, o in zip(fetches, outs)]
        session = self._session(threads, max_memory)
        if self.graph._variables:  # (sync the variables' copies, run the updates)
            return _variables.run(self.graph, session, session.run, feeds, fetches,
                                  self._targets)
        return session.run(feeds, fetches, self._targets)

    def _refuse_shape(self, t, shape):
        raise _ndx.InvalidArgumentError(
            f"{self.graph.name}: argument {t.node.name} must have shape {_shape_text(t.shape)}, "
            f"not {list(shape)}")

    def _check_other(self, t, a):
        """The checks of an argument that is not an ndarray of the placeholder's dtype."""
        if isinstance(a, Tensor):
            a.graph.check_open()
        if isinstance(a, (np.ndarray, BFloat16Array, np.generic)):
            d = dtype_of(a)
            if d is not t.dtype:
                raise TypeError(f"{self.graph.name}: argument {t.node.name} must be "
                                f"{t.dtype.name}, not {d.name}")
            shape = a.bits.shape if isinstance(a, BFloat16Array) else np.shape(a)
            if t.shape is not None and (len(shape) != len(t.shape) or any(
                    d is not None and d != s for d, s in zip(t.shape, shape))):
                self._refuse_shape(t, shape)

    def __call__(self, *args, threads=None, max_memory=None, out=None, **kwargs):
        if (threads is None and max_memory is None and out is None and not kwargs and
                len(args) == self._params):
            result = (self._fast or self._fast_call())(args)
            if result is not NotImplemented:
                return result
        fn = self._function
        _, leaves = fn._key(fn._bind(args, kwargs))
        return self._pack(self._run([a for _, _, a in leaves], threads, max_memory, out))

    def _pack(self, values):
        if self._single:
            return values[0]
        return _unflatten(self._output_structure, iter(values))

    def save(self, path):
        """Writes the graph's text form at `path` (+ .npz for large constants); `ndx run` and
        ndx.load read it. Placeholders keep their argument names."""
        self.graph.save(path)

    def __repr__(self):
        ins = ", ".join(f"{t.node.name}: {t.dtype.name}{_shape_text(t.shape)}" for t in self.inputs)
        return f"<ndx.ConcreteFunction {self.graph.name}({ins})>"


def _flatten_outputs(graph, value, out):
    """The structure of what the function returned; its Tensors appended to `out`."""
    if isinstance(value, SparseTensor):
        out.extend(graph.convert(p) for p in (value.indices, value.values, value.dense_shape))
        return ("sparse",)
    if isinstance(value, IndexedSlices):
        out.extend(graph.convert(p) for p in (value.values, value.indices, value.dense_shape))
        return ("slices",)
    if isinstance(value, Tensor):
        out.append(graph.convert(value))
        return ("tensor",)
    if isinstance(value, (list, tuple)):
        return (type(value),) + tuple(_flatten_outputs(graph, v, out) for v in value)
    if isinstance(value, dict):
        return (dict, tuple(value)) + tuple(_flatten_outputs(graph, value[k], out) for k in value)
    if value is None:
        return ("none",)
    out.append(graph.convert(value))  # an array or Python value: a constant, as TensorFlow
    return ("tensor",)


def _flatten_out(structure, out, outs):
    """out= matched to the returned structure: an array (or None) per fetched tensor."""
    kind = structure[0]
    if kind == "tensor":
        outs.append(out)
        return
    if kind == "none":
        if out is not None:
            raise TypeError("out=: the function returns None there")
        return
    if kind == "slices":
        if out is not None:
            raise TypeError("out=: an IndexedSlices result is allocated; give None for it")
        outs.extend([None] * 3)
        return
    if kind == "sparse":
        if out is not None:
            raise TypeError("out=: a sparse result is allocated; give None for it")
        outs.extend([None] * 3)
        return
    if out is None:
        for s in (structure[2:] if kind is dict else structure[1:]):
            _flatten_out(s, None, outs)
        return
    if kind is dict:
        if not isinstance(out, dict) or set(out) - set(structure[1]):
            raise TypeError(f"out=: a dict with keys among {list(structure[1])}")
        for k, s in zip(structure[1], structure[2:]):
            _flatten_out(s, out.get(k), outs)
        return
    if not isinstance(out, (list, tuple)) or len(out) != len(structure) - 1:
        raise TypeError(f"out=: a sequence of {len(structure) - 1} items (arrays or None)")
    for s, o in zip(structure[1:], out):
        _flatten_out(s, o, outs)


def _unflatten(structure, it):
    kind = structure[0]
    if kind == "tensor":
        return next(it)
    if kind == "sparse":
        return SparseTensor._from_parts(next(it), next(it), next(it))
    if kind == "slices":
        return IndexedSlices(next(it), next(it), next(it))
    if kind == "none":
        return None
    if kind is dict:
        keys = structure[1]
        return {k: _unflatten(s, it) for k, s in zip(keys, structure[2:])}
    items = [_unflatten(s, it) for s in structure[1:]]
    return items if kind is list else tuple(items) if kind is tuple else kind(*items)


class Function:
    """A Python function traced into ndx graphs (TensorFlow's tf.function); see ndx.function."""

    def __init__(self, func, input_signature=None, threads=None, max_memory=None, name=None,
                 reduce_retracing=False, autograph=True, jit_compile=None):
        functools.update_wrapper(self, func)
        self.python_function = func
        self._signature = inspect.signature(func)
        params = list(self._signature.parameters.values())
        self._names = [p.name for p in params]  # (every parameter, *args and **kwargs too)
        self._positional = [p.name for p in params
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._var_args = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
        var_kwargs = next((p.name for p in params if p.kind == p.VAR_KEYWORD), None)
        self._fixed = len(self._positional) == len(params)  # (only positional parameters)
        if input_signature is not None:
            input_signature = list(input_signature)
            if len(input_signature) > len(self._positional) and self._var_args is None:
                raise TypeError(f"ndx.function: {len(input_signature)} specs for "
                                f"{len(self._positional)} positional parameters of "
                                f"{func.__name__}")
            if var_kwargs is not None:
                raise TypeError(f"ndx.function: {func.__name__} takes **{var_kwargs}: an "
                                f"input_signature is for positional parameters (and *args) "
                                f"only, as TensorFlow's")
            _check_specs(input_signature)
        self.input_signature = input_signature
        # {parameter name: its specs}: the leading positional parameters, then *args (a tuple)
        self._signed = {}
        if input_signature is not None:
            self._signed = dict(zip(self._positional, input_signature))
            if len(input_signature) > len(self._positional):
                self._signed[self._var_args] = tuple(input_signature[len(self._positional):])
        self._flat = (input_signature is not None and self._fixed and
                      len(input_signature) == len(self._names) and
                      all(isinstance(x, TensorSpec) for x in input_signature))
        self.reduce_retracing = bool(reduce_retracing)
        self._general = {}  # reduce_retracing: skeleton of a key -> (leaf shapes, trace)
        if not isinstance(autograph, bool) or not (jit_compile is None or
                                                   isinstance(jit_compile, bool)):
            raise TypeError("ndx.function: autograph is True or False, jit_compile None, True "
                            "or False")
        self.autograph, self.jit_compile = autograph, jit_compile
        self._flat_cf = None
        self._fast = None  # the _fast_call of the trace the arguments' tuple may call directly
        self._threads, self._max_memory = threads, max_memory
        self._name = name or getattr(func, "__name__", "function")
        self._cache = {}
        self._lock = threading.RLock()
        self._trace_count = 0
        self._takes = {k: k in self._names for k in ("threads", "max_memory", "out")}
        kinds = [p.kind for p in self._signature.parameters.values()]
        self._plain = all(k == inspect.Parameter.POSITIONAL_OR_KEYWORD for k in kinds)

    def experimental_get_tracing_count(self):
        """How many times the Python function was traced (TensorFlow's name)."""
        return self._trace_count

    @property
    def trace_count(self):
        return self._trace_count

    def _bind(self, args, kwargs):
        """{parameter name: value} of a call (every parameter, defaults applied)."""
        if not kwargs and len(args) == len(self._names) and self._plain:
            return dict(zip(self._names, args))
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.arguments

    def _key(self, bound):
        """(cache key, array leaves) of one call."""
        leaves = []
        if self.input_signature is None:
            key = tuple(_structure(bound[n], n, leaves) for n in self._names)
            return key, leaves
        signed = self._signed
        for n, spec in signed.items():
            _spec_leaves(spec, bound[n], n, leaves)
        if self._var_args is not None and self._var_args not in signed and bound[self._var_args]:
            raise TypeError(f"{self._name}: {len(bound[self._var_args])} more positional "
                            f"arguments than input_signature has specs")
        rest = tuple(_structure(bound[n], n, []) for n in self._names if n not in signed)
        return ("signature",) + rest, leaves

    def get_concrete_function(self, *args, **kwargs):
        """The ConcreteFunction for these arguments (arrays, or TensorSpec for array
        arguments), traced now if it was not yet."""
        if self.input_signature is not None and not args and not kwargs:
            args = tuple(self.input_signature)
        bound = self._bind(args, kwargs)
        for n in self._names:  # TensorSpec arguments stand for arrays of that spec
            if n == self._var_args:
                bound[n] = tuple(self._example(v) for v in bound[n])
            else:
                bound[n] = self._example(bound[n])
        key, leaves = self._key(bound)
        return self._concrete(key, bound, leaves)

    def _example(self, v):
        """An argument of get_concrete_function: a spec as an example array (or SparseTensor)."""
        if isinstance(v, SparseTensorSpec):
            return SparseTensor._from_parts(*(_spec_example(p) for p in v.parts()))
        if isinstance(v, TensorSpec):
            if (v.shape is None or None in v.shape) and self.input_signature is None:
                raise TypeError("get_concrete_function: a TensorSpec with unknown dims needs "
                                "ndx.function(input_signature=...)")
            return _spec_example(v)
        return v

    def _concrete(self, key, bound, leaves):
        cf = self._cache.get(key)
        if cf is None:
            with self._lock:
                cf = self._cache.get(key)
                if cf is None:
                    if self.reduce_retracing and self.input_signature is None:
                        cf = self._relaxed(key, bound, leaves)
                    else:
                        cf = self._trace(bound, leaves)
                    self._cache[key] = cf
        return cf

    def _relaxed(self, key, bound, leaves):
        """reduce_retracing (TensorFlow's rule): a call whose arrays differ from an earlier
        trace's in dims only (same structure, dtypes, ranks and Python values) runs a trace where
        each dim that differed is None; traced once for those dims, then reused."""
        skeleton = _skeleton(key)
        shapes = [TensorSpec.from_value(a).shape for _, _, a in leaves]
        known = self._general.get(skeleton)
        if known is None:
            cf = self._trace(bound, leaves)
            self._general[skeleton] = (shapes, cf)
            return cf
        general, cf = known
        if all(_shapes_agree(g, s) for g, s in zip(general, shapes)):
            return cf
        general = [tuple(a if a == b else None for a, b in zip(g, s))
                   for g, s in zip(general, shapes)]
        cf = self._trace(bound, [(TensorSpec(g, dtype_of(a)), n, a)
                                 for g, (_, n, a) in zip(general, leaves)])
        self._general[skeleton] = (general, cf)
        return cf

    def _trace(self, bound, leaves):
        graph = Graph(self._name)
        graph.function = self  # (Variables may be created on the first trace only)
        specs = [s if s is not None else TensorSpec.from_value(a) for s, _, a in leaves]
        names = [(s.name or _node_name(n)) for s, (_, n, _) in zip(specs, leaves)]
        with _trace.tracing(graph):
            try:
                inputs = [graph.placeholder(s.dtype, s.shape, name=n) for s, n in zip(specs, names)]
                it = iter(inputs)
                signed = self._signed
                args = {n: _replace_spec(signed[n], it) if n in signed else
                        _replace(bound[n], it) for n in self._names}
                call = inspect.BoundArguments(self._signature, args)
                result = self.python_function(*call.args, **call.kwargs)
                outputs = []
                structure = _flatten_outputs(graph, result, outputs)
            except BaseException:
                graph._open = False
                raise
        graph.finish()
        self._trace_count += 1
        return ConcreteFunction(self, graph, inputs, structure, outputs, self._threads,
                                self._max_memory)

    def __call__(self, *args, **kwargs):
        if _tracing and _trace.graph() is not None:
            return self.python_function(*args, **kwargs)  # inside a trace: inlined
        if _tracing and _trace.tapes() is not None:
            _trace.unrecorded(self._name, args, kwargs)  # (an eager tape does not see calls)
        fast = self._fast
        if fast is not None and not kwargs:
            # The last trace called with arrays by position, whose arguments are its leaves.
            result = fast(args)
            if result is not NotImplemented:
                return result
        if self._flat and self._plain and not kwargs and len(args) == len(self._names):
            # A signature of one TensorSpec per parameter, arguments by position: no binding.
            cf = self._flat_cf or self.get_concrete_function()
            self._flat_cf = cf
            self._fast = cf._fast_call()
            return cf._pack(cf._run(args, None, None))
        plain = not kwargs and self._plain and len(args) == len(self._names)
        threads = kwargs.pop("threads", None) if not self._takes["threads"] else None
        max_memory = kwargs.pop("max_memory", None) if not self._takes["max_memory"] else None
        out = kwargs.pop("out", None) if not self._takes["out"] else None
        bound = self._bind(args, kwargs)
        key, leaves = self._key(bound)
        cf = self._concrete(key, bound, leaves)
        if plain and self.input_signature is None and all(type(a) is np.ndarray for a in args):
            self._fast = cf._fast_call()  # (the leaves are the arguments)
        return cf._pack(cf._run([a for _, _, a in leaves], threads, max_memory, out))

    def save(self, path):
        """Saves the one ConcreteFunction (with input_signature, or traced once)."""
        if self.input_signature is not None:
            return self.get_concrete_function().save(path)
        if len(self._cache) != 1:
            raise ValueError(f"{self._name} has {len(self._cache)} traces; save one of them: "
                             f"f.get_concrete_function(...).save(path)")
        return next(iter(self._cache.values())).save(path)

    @property
    def graph(self):
        """The graph of the one ConcreteFunction (see save)."""
        if self.input_signature is not None:
            return self.get_concrete_function().graph
        if len(self._cache) != 1:
            raise ValueError(f"{self._name} has {len(self._cache)} traces; use "
                             f"f.get_concrete_function(...).graph")
        return next(iter(self._cache.values())).graph

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<ndx.Function {self._name}: {self._trace_count} traces>"


def _check_specs(spec):
    if isinstance(spec, (TensorSpec, SparseTensorSpec)):
        return
    if isinstance(spec, (list, tuple)):
        for s in spec:
            _check_specs(s)
        return
    if isinstance(spec, dict):
        for s in spec.values():
            _check_specs(s)
        return
    raise TypeError(f"input_signature holds TensorSpec and SparseTensorSpec (or lists, tuples "
                    f"and dicts of them), not {type(spec).__name__}")


def _spec_leaves(spec, value, name, leaves):
    """The argument's arrays matched to its specs: (spec, name, array) appended per leaf;
    Python values are converted to the spec's dtype."""
    if isinstance(spec, TensorSpec):
        if isinstance(value, TensorSpec):
            value = _spec_example(value)
        if isinstance(value, Tensor):
            value.graph.check_open()  # raises: a symbolic tensor outside its trace
        if isinstance(value, (np.ndarray, BFloat16Array)):
            a = value
        elif isinstance(value, (list, tuple, bool, int, float, complex, str, bytes)):
            a = _as_array(value, _like(spec.dtype))
        else:
            a = _as_array(value)
        leaves.append((spec, name, a))
        return
    if isinstance(spec, SparseTensorSpec):
        if isinstance(value, SparseTensorSpec):
            value = SparseTensor._from_parts(*(_spec_example(p) for p in value.parts()))
        if not isinstance(value, SparseTensor):
            raise TypeError(f"argument {name}: expected an ndx.SparseTensor, not "
                            f"{type(value).__name__}")
        for part_spec, part, what in zip(spec.parts(), (value.indices, value.values,
                                                        value.dense_shape),
                                         ("indices", "values", "dense_shape")):
            _spec_leaves(part_spec, part, f"{name}_{what}", leaves)
        return
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            raise TypeError(f"argument {name}: expected a dict with keys {sorted(spec)}")
        for k in spec:
            _spec_leaves(spec[k], value[k], f"{name}_{k}", leaves)
        return
    if not isinstance(value, (list, tuple)) or len(value) != len(spec):
        raise TypeError(f"argument {name}: expected a sequence of {len(spec)} items")
    for i, (s, v) in enumerate(zip(spec, value)):
        _spec_leaves(s, v, f"{name}_{i}", leaves)


def _spec_example(spec):
    """An array of the spec (unknown dims 0), standing for it when tracing."""
    shape = tuple(0 if d is None else d for d in (spec.shape or ()))
    if spec.dtype.name == "bfloat16":
        return BFloat16Array.from_bits(np.zeros(shape, np.uint16))
    return np.zeros(shape, spec.dtype._np if spec.dtype.name != "string" else "S1")


def _replace(value, it):
    """The argument with each array leaf replaced by its placeholder Tensor (in the order
    _structure met them)."""
    if isinstance(value, SparseTensor):
        return SparseTensor._from_parts(next(it), next(it), next(it))
    if isinstance(value, (list, tuple)):
        items = [_replace(v, it) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        out = {k: _replace(value[k], it) for k in sorted(value, key=repr)}
        return {k: out[k] for k in value}
    if _is_array_like(value) and not isinstance(value, (bool, int, float, complex, str, bytes)):
        return next(it)
    return value


def _skeleton(key):
    """A cache key without its arrays' dims (their ranks kept): the traces reduce_retracing
    may share."""
    if not isinstance(key, tuple) or not key:
        return key
    if key[0] == "value":
        return key
    if key[0] == "dict":
        return ("dict",) + tuple((k, _skeleton(v)) for k, v in key[1:])
    if key[0] == "array":
        shape = key[2] if len(key) == 3 else None
        return ("array", str(key[1]), None if shape is None else len(shape))
    if key[0] == "sparse":
        return ("sparse",) + tuple((d, None if sh is None else len(sh)) for d, sh in key[1:])
    return tuple(_skeleton(k) for k in key)


def _replace_spec(spec, it):
    if isinstance(spec, TensorSpec):
        return next(it)
    if isinstance(spec, SparseTensorSpec):
        return SparseTensor._from_parts(next(it), next(it), next(it))
    if isinstance(spec, dict):
        return {k: _replace_spec(spec[k], it) for k in spec}
    items = [_replace_spec(s, it) for s in spec]
    return items if isinstance(spec, list) else tuple(items)


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, *, threads=None, max_memory=None, name=None):
    """Traces a Python function of ndx ops into a graph and runs the graph when it is called
    (TensorFlow's tf.function).

    Inside the function ndx's ops (gather_nd, dynamic_partition, ..., the glue: ndx.add,
    ndx.cast, ndx.range, ndx.shape, ...) and the operators + - * / // % and unary - on its
    tensors build nodes; Python values beside a tensor become constants of its dtype. A shape
    or dtype error is raised at trace time, as InvalidArgumentError naming the node and the
    line of your code that built it.

    Traced on the first call from the arguments' dtypes and shapes (each array, or list, tuple
    or dict of arrays, is an input; other Python values are part of the trace), and traced
    again when they change; with input_signature (a TensorSpec per leading parameter, None
    for an unknown dim) once, for every call that fits. Calls take NumPy arrays (anything the
    eager ops take, read in place when they can be) and return NumPy arrays in the structure
    the function returned (sparse results as ndx.SparseTensor). Each trace keeps a session and
    its memory pool: repeated calls allocate only their results, and not even those with out=
    (an array, or the returned structure with arrays and None, of the results' exact dtypes and
    shapes; written only when the whole call succeeds). threads= and max_memory= (as for
    ndx.gather_nd) may be given here or to a call; the GIL is released while the graph runs
    (unless the run is small: feeds and the session's pool under 256 KiB). (A function with a
    parameter named threads, max_memory or out keeps it for itself.)

    >>> @ndx.function(input_signature=[ndx.TensorSpec([None], ndx.float32)])
    ... def plus_one_except_minus_one(x):
    ...     mask = ndx.cast(ndx.not_equal(x, -1.0), ndx.int32)
    ...     data = ndx.dynamic_partition(x, mask, 2)
    ...     data[1] = data[1] + 1.0
    ...     where = ndx.dynamic_partition(ndx.range(ndx.shape(x)[0]), mask, 2)
    ...     return ndx.dynamic_stitch(where, data)
    >>> plus_one_except_minus_one(np.array([0.1, -1., 5.2], np.float32))
    array([ 1.1, -1. ,  6.2], dtype=float32)

    The function may take *args, keyword-only parameters and **kwargs (each array leaf an
    input, named after its parameter: args_0, ...); input_signature covers the leading
    positional parameters and, beyond them, *args (TensorFlow's rule; not **kwargs). TensorFlow's
    other keywords: reduce_retracing=True traces again, when a call's arrays differ from an
    earlier trace's in dims only, once with each differing dim None, and that trace serves every
    later call that fits (TensorFlow's shape relaxing; the first trace keeps exact shapes).
    autograph (True by default, as TensorFlow's) and False do the same: ndx does not rewrite
    the code, so Python `if`, `while` and `bool()` on a traced tensor raise ndx's TypeError
    ("... is symbolic: it has no truth value while tracing"); branch and loop on Python values,
    or compute both sides and combine them with ops. jit_compile (None,
    True or False) is accepted for TensorFlow's code and changes nothing: ndx always runs the
    traced graph as one planned session (there is no XLA).

    A tape inside the function records the nodes built in its `with` block (ndx.GradientTape).
    Inside the trace ndx.SparseTensor(indices, values, dense_shape) of traced tensors is a
    symbolic sparse tensor the ndx.sparse ops take; returned, it comes back as an
    ndx.SparseTensor of arrays.

    The traced graph: f.graph (or f.get_concrete_function(...).graph) lists its nodes
    (.nodes, str()), draws itself (to_dot()); f.save(path) writes it for `ndx run`,
    ndx.load and ndx_graph_load.
    """
    def wrap(f):
        return Function(f, input_signature, threads, max_memory, name, reduce_retracing,
                        autograph, jit_compile)
    return wrap if func is None else wrap(func)


# ---- saved graphs ---------------------------------------------------------------------------

_SPARSE_TYPES = ("SparseConcat", "SparseReorder", "DenseToSparse")


class LoadedFunction:
    """A saved graph as a callable (ndx.load): keyword arguments feed placeholders by name,
    `fetches` names what to compute ("node" or "node:k"; a sparse op's node gives an
    ndx.SparseTensor). `graph` is the loaded Graph, `feeds` the placeholders' names,
    `default_fetches` the nodes no other node reads."""

    def __init__(self, path, threads=None, max_memory=None):
        self.graph = Graph(os.path.basename(os.fspath(path)), _g=_ndx._Graph.load(os.fspath(path)))
        self.graph._g.finish()
        nodes = self.graph.nodes
        self.feeds = [n.name for n in nodes if n.type == "Placeholder"]
        read = {i.rpartition(":")[0] for n in nodes for i in n.inputs}
        self.default_fetches = [n.name for n in nodes if n.name not in read and n.outputs and
                                n.type not in ("Placeholder", "Const")]
        self._threads, self._max_memory = threads, max_memory
        self._session = _ndx._Session(self.graph._g, threads, max_memory)

    def __call__(self, fetches=None, **feeds):
        single = isinstance(fetches, str) or (fetches is None and len(self.default_fetches) == 1)
        names = ([fetches] if isinstance(fetches, str) else
                 list(self.default_fetches if fetches is None else fetches))
        outs, kinds = [], []
        for name in names:
            node_name, colon, _ = name.partition(":")
            node_id = self.graph._g.find(node_name)
            if not node_id:
                raise KeyError(f"no node named {node_name!r} in {self.graph.name}")
            node = self.graph.node(node_id)
            if node.type in _SPARSE_TYPES and not colon:
                outs.extend((node_id, k) for k in range(3))
                kinds.append(3)
            else:
                outs.append(self.graph.get_tensor(name).output)
                kinds.append(1)
        run_feeds = []
        for name, value in feeds.items():
            if name not in self.feeds:
                raise TypeError(f"{self.graph.name} has no placeholder {name!r} (it has "
                                f"{', '.join(self.feeds) or 'none'})")
            t = self.graph.get_tensor(name)
            run_feeds.append((t.op, 0, value, _like(t.dtype)))
        values = iter(self._session.run(run_feeds, outs, ()))
        results = [SparseTensor._from_parts(next(values), next(values), next(values)) if k == 3
                   else next(values) for k in kinds]
        if single:
            return results[0]
        return dict(zip(names, results))

    def __repr__(self):
        return f"<ndx.LoadedFunction {self.graph.name}({', '.join(self.feeds)}) -> " \
               f"{', '.join(self.default_fetches)}>"


def load(path, threads=None, max_memory=None):
    """A graph saved by f.save, ndx_graph_save or written by hand, as a callable: call it with
    keyword arguments by placeholder name; it returns the value of the one node no other reads
    (or a dict of them), or what fetches= names ("y", or a list giving a dict).

    >>> g = ndx.load("examples/graphs/replace_minus_one.txt")
    >>> g(x=np.array([0.1, -1.0], np.float32))
    array([ 1.1, -1. ], dtype=float32)
    """
    return LoadedFunction(path, threads, max_memory)
