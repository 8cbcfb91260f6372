"""ndx.Variable: state that persists from call to call (TensorFlow's tf.Variable under
tf.function), and the update nodes a traced function runs on it.

Where a variable's value lives. Each session of each trace that uses a Variable holds its own
copy (the C graph's Variable node: ndx_op_variable), updated in place by the update nodes, so a
training step copies nothing. The Variable object knows which copy is newest: `_version` counts
its changes, each session remembers the version it holds (`_versions[session]`), and `_holder` is
the session that made the newest version (None when `_value`, the host copy, is newest). Before a
run, every variable whose copy in that session is stale is brought up to date (read from the
holder into `_value`, written into the session); after a run that updates it, the running session
becomes its holder. So calls of one trace never copy, and switching between traces (or reading
the value with numpy()) copies each changed variable once. Runs that touch a variable hold its
lock, so two functions sharing a variable run one after the other.

In a graph a Variable becomes one Variable node per graph, made on first use (named after the
Variable; its initial value is a Const of the value at trace time, or a Fill of zeros past 64 KiB,
which the first run overwrites anyway). Updates (assign_add, assign_sub, scatter_nd_add, the
optimizers' steps) are nodes with no outputs that every call of the trace runs, after everything
else, all or nothing (ndx_session_run_targets); reads in a call see the value at its start."""
import threading

import numpy as np

from . import _ndx, _trace
from ._convert import BFloat16Array, _as_array
from ._graph import Tensor, _convert_to, _user_frame, as_dtype, dtype_of, valid_name
from ._ref import IdentityDict, Reference, unhashable

__all__ = ["Variable", "run"]

_CONST_INIT_BYTES = 1 << 16
_next_id = [0]


class Variable:
    """A mutable tensor that persists across calls of traced functions (TensorFlow's
    tf.Variable): `Variable(initial_value, name=None, trainable=True, dtype=None)`.

    Create it outside a function, or inside one on its first trace (a later trace that would
    create one raises, as tf.function does). Inside a trace it reads as a tensor (its value at
    the start of the call) wherever an op takes one, and assign_add, assign_sub and
    scatter_nd_add add update nodes that every call runs; outside, numpy() / read_value() give
    a copy of its value and assign, assign_add, assign_sub, scatter_nd_add change it now.
    Optimizers (ndx.optimizers) and GradientTape take it as a source. Operators are its
    value's (TensorFlow 2's: == and != elementwise, < <= > >=, & | ^ ~ on bool, abs()); as in
    TensorFlow 2 a Variable is unhashable: key dicts and sets by v.ref()."""

    _ndx_variable = True  # (ndx.function passes it by reference, not as an array)

    def __init__(self, initial_value, name=None, trainable=True, dtype=None):
        if callable(initial_value):
            initial_value = initial_value()
        if isinstance(initial_value, (Tensor, Variable)):
            if isinstance(initial_value, Variable):
                initial_value = initial_value.numpy()
            else:
                raise TypeError(f"Variable: the initial value {initial_value!r} is symbolic; give "
                                f"a value (an array, a list or a number)")
        value = (_convert_to(initial_value, as_dtype(dtype)) if dtype is not None
                 else _as_array(initial_value))
        value = value.copy() if isinstance(value, BFloat16Array) else np.array(value, order="C")
        self.dtype = dtype_of(value)
        if self.dtype.name == "string":
            raise TypeError("Variable: ndx variables hold numbers and bools, not strings")
        self.shape = tuple(value.bits.shape if isinstance(value, BFloat16Array) else value.shape)
        if name is not None and (not isinstance(name, str) or not valid_name(name)):
            raise ValueError(f"Variable: name {name!r} is not a valid node name "
                             f"([A-Za-z0-9.][A-Za-z0-9_.-]*)")
        self.name = name or "Variable"
        self.trainable = bool(trainable)
        self._value = value
        self._holder = None      # (session, node id) with the newest value, or None: _value
        self._version = 0
        self._versions = {}      # session -> the version its copy has
        self._lock = threading.RLock()
        g = _trace.graph() if _trace.active else None
        if g is not None:
            fn = getattr(g, "function", None)
            if fn is not None and fn._trace_count > 0:
                raise ValueError(
                    f"{fn._name}: a Variable is created while tracing it again; ndx.function "
                    f"(like tf.function) takes variables created on the first trace only: "
                    f"create it outside the function, or once (if self.v is None: ...)")

    # ---- the value ------------------------------------------------------------------------

    def _fresh(self):
        """Makes _value the newest value (reading the holder's copy). Under the lock."""
        if self._holder is not None:
            session, node = self._holder
            session.read_variable(node, self._value)
            self._holder = None

    def numpy(self):
        """A copy of the value (a NumPy array; ndx.BFloat16Array for bfloat16)."""
        if _graph() is not None:
            raise TypeError(f"{self.name}.numpy() inside a traced function: its value is only "
                            f"known when the function runs (use the variable as a tensor)")
        with self._lock:
            self._fresh()
            return self._value.copy()

    def read_value(self):
        """The value: a Tensor inside a trace; while an eager GradientTape records, the read it
        follows (an ndx.TapedArray); else numpy()."""
        g = _graph()
        if g is not None:
            return self._ndx_tensor(g)
        if _trace.active and _trace.tapes() is not None:
            return _trace.read(self)
        return self.numpy()

    value = read_value

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def _set(self, value):
        """Replaces the host value (eager). Under the lock."""
        self._value = value
        self._holder = None
        self._version += 1

    def _eager_value(self, value, what):
        v = _convert_to(value, self.dtype)
        shape = v.bits.shape if isinstance(v, BFloat16Array) else np.shape(v)
        if tuple(shape) != self.shape:
            raise _ndx.InvalidArgumentError(
                f"{self.name}.{what}: the value has shape {list(shape)}, the variable "
                f"{list(self.shape)}")
        return v

    def assign(self, value):
        """Sets the value (outside a traced function: ndx graphs have no Assign node; inside,
        use assign_add / assign_sub / scatter_nd_add or an optimizer)."""
        if _graph() is not None:
            raise TypeError(f"{self.name}.assign inside a traced function: ndx graphs update "
                            f"variables with assign_add, assign_sub, scatter_nd_add and the "
                            f"optimizers' steps only (assign it outside the function)")
        v = self._eager_value(value, "assign")
        with self._lock:
            self._set(v.copy() if isinstance(v, BFloat16Array) else np.array(v, order="C"))
        return self

    def _assign_op(self, value, subtract):
        g = _graph()
        if g is not None:
            var = self._ndx_tensor(g)
            _update(g, self, "AssignSubVariableOp" if subtract else "AssignAddVariableOp",
                    [var, g.convert(value, self.dtype)])
            return None
        v = self._eager_value(value, "assign_sub" if subtract else "assign_add")
        from ._glue import add, subtract as sub
        with self._lock, _trace.paused():  # (an update is not recorded by tapes, as in TF)
            self._fresh()
            self._set((sub if subtract else add)(self._value, v))
        return self

    def assign_add(self, value):
        """value added to the variable (TensorFlow's AssignAddVariableOp)."""
        return self._assign_op(value, False)

    def assign_sub(self, value):
        """value subtracted from the variable (AssignSubVariableOp)."""
        return self._assign_op(value, True)

    def scatter_nd_add(self, indices, updates):
        """updates added at indices, duplicates adding up (TensorFlow's Variable.scatter_nd_add,
        ResourceScatterNdAdd; indices as ndx.tensor_scatter_nd_add takes them)."""
        g = _graph()
        if g is not None:
            var = self._ndx_tensor(g)
            _update(g, self, "ResourceScatterNdAdd",
                    [var, g.convert(indices), g.convert(updates, self.dtype)])
            return None
        from ._dense import tensor_scatter_nd_add
        with self._lock, _trace.paused():
            self._fresh()
            self._set(tensor_scatter_nd_add(self._value, indices, _convert_to(updates, self.dtype)))
        return self

    # ---- in graphs ------------------------------------------------------------------------

    def _ndx_tensor(self, g):
        """This variable's Variable node in graph g (made on first use), as a Tensor."""
        t = g._variables.get(self)
        if t is not None:
            return t
        g.check_open()
        value = self._value
        with self._lock:
            self._fresh()
        nbytes = (value.bits if isinstance(value, BFloat16Array) else value).nbytes
        if nbytes <= _CONST_INIT_BYTES:
            init = g.constant(self._value)
        else:
            from ._glue import fill
            init = fill(np.array(self.shape, np.int64), _convert_to(0, self.dtype))
        file, line = _user_frame()
        node = g._g.variable(init.op, g._name(self.name), file, line)
        t = g._tensors(node, 1)[0]
        g._variables[self] = t
        return t

    # Operators: the value's (a Tensor inside a trace).
    def _v(self):
        return self.read_value()

    def __add__(self, o):
        return self._v() + o

    def __radd__(self, o):
        return o + self._v()

    def __sub__(self, o):
        return self._v() - o

    def __rsub__(self, o):
        return o - self._v()

    def __mul__(self, o):
        return self._v() * o

    def __rmul__(self, o):
        return o * self._v()

    def __truediv__(self, o):
        return self._v() / o

    def __rtruediv__(self, o):
        return o / self._v()

    def __neg__(self):
        return -self._v()

    def __getitem__(self, key):
        return self._v()[key]

    def __abs__(self):
        from ._glue import abs
        return abs(self._v())

    def __eq__(self, o):
        from ._glue import tensor_equals
        return tensor_equals(self._v(), _value_of(o))

    def __ne__(self, o):
        from ._glue import tensor_equals
        return tensor_equals(self._v(), _value_of(o), negate=True)

    def __lt__(self, o):
        from ._glue import less
        return less(self._v(), _value_of(o))

    def __le__(self, o):
        from ._glue import less_equal
        return less_equal(self._v(), _value_of(o))

    def __gt__(self, o):
        from ._glue import greater
        return greater(self._v(), _value_of(o))

    def __ge__(self, o):
        from ._glue import greater_equal
        return greater_equal(self._v(), _value_of(o))

    def __and__(self, o):
        from ._glue import bool_operator
        return bool_operator("&", self._v(), _value_of(o))

    def __rand__(self, o):
        from ._glue import bool_operator
        return bool_operator("&", o, self._v())

    def __or__(self, o):
        from ._glue import bool_operator
        return bool_operator("|", self._v(), _value_of(o))

    def __ror__(self, o):
        from ._glue import bool_operator
        return bool_operator("|", o, self._v())

    def __xor__(self, o):
        from ._glue import bool_operator
        return bool_operator("^", self._v(), _value_of(o))

    def __rxor__(self, o):
        from ._glue import bool_operator
        return bool_operator("^", o, self._v())

    def __invert__(self):
        from ._glue import bool_operator
        return bool_operator("~", self._v())

    __hash__ = unhashable("Variable", "variable")

    def ref(self):
        """A hashable reference to this variable (TensorFlow's Variable.ref()): equal for the
        same variable, usable as a dict key; deref() gives the variable back."""
        return Reference(self)

    def __repr__(self):
        return (f"<ndx.Variable '{self.name}' shape={list(self.shape)} "
                f"dtype={self.dtype.name}>")


def _graph():
    return _trace.graph() if _trace.active else None


def _value_of(o):
    """The other operand of an operator: a Variable's value, anything else as it is."""
    return o._v() if isinstance(o, Variable) else o


def _update(g, variable, type, inputs, attrs=None):
    """Adds an update node (no outputs) that every call of the trace runs."""
    g.op(type, inputs, attrs)
    g.add_target(g._g.count())  # (an update is the last node its builder adds)
    g._updated.add(variable)


def run(graph, session, run, *args):
    """run(*args), a run of a graph that uses variables in `session` (its run or call method):
    each stale copy in the session written first; after it, unless it returned NotImplemented
    (the call ran nothing), the updated variables' holder is the session."""
    variables = sorted(graph._variables.items(), key=lambda vt: id(vt[0]))
    for v, _ in variables:
        v._lock.acquire()
    try:
        for v, t in variables:
            if v._versions.get(session) != v._version:
                v._fresh()
                session.write_variable(t.op, v._value)
                v._versions[session] = v._version
        result = run(*args)
        if result is NotImplemented:
            return result
        for v in graph._updated:
            v._version += 1
            v._holder = (session, graph._variables[v].op)
            v._versions[session] = v._version
        return result
    finally:
        for v, _ in variables:
            v._lock.release()
