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
which the first run overwrites anyway): its handle, whose output is the value at the start of a
call. Updates (assign, assign_add, assign_sub, scatter_nd_add, the row scatters scatter_add ..
scatter_update, the optimizers' steps) are nodes
with no outputs that every call of the trace runs (ndx_session_run_targets), all or nothing.
Reads and updates follow program order, as TensorFlow 2's automatic control dependencies make
them: a read before the variable's first update in the trace is the handle itself (so a trace
that only reads, then updates, runs exactly as it always did); a read after an update is a
ReadVariableOp node (one per run of reads between two updates), which the C session runs after
every update of the variable built before it (ndx_graph.h, "Program order"). sparse_read (and
ndx.gather / ndx.nn.embedding_lookup of a Variable) is a ResourceGather node on the handle, which
the C session runs at its place in program order too, gathering straight from the variable."""
import threading
import weakref

import numpy as np

from . import _ndx, _trace
from ._convert import BFloat16Array, _as_array
from ._graph import Tensor, _convert_to, _user_frame, as_dtype, dtype_of, valid_name
from ._ref import IdentityDict, Reference, unhashable

__all__ = ["Variable", "run", "scatter_add", "scatter_sub", "scatter_mul", "scatter_div",
           "scatter_min", "scatter_max", "scatter_update"]

# The row scatters, by ndx_resource_scatter_op (ndx_graph.h): the kind's type and the method.
_SCATTERS = ("ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterMul",
             "ResourceScatterDiv", "ResourceScatterMin", "ResourceScatterMax",
             "ResourceScatterUpdate")
_ADD, _SUB, _MUL, _DIV, _MIN, _MAX, _UPDATE = range(7)

_CONST_INIT_BYTES = 1 << 16
_next_id = [0]


class Variable:
    """A mutable tensor that persists across calls of traced functions (TensorFlow's
    tf.Variable): `Variable(initial_value, name=None, trainable=True, dtype=None)`.

    Create it outside a function, or inside one on its first trace (a later trace that would
    create one raises, as tf.function does). Inside a trace it reads as a tensor wherever an op
    takes one, and assign, assign_add, assign_sub and scatter_nd_add add update nodes that every
    call runs; reads and updates happen in program order, as in TensorFlow 2 (a read after
    `v.assign_add(1.)` sees the new value, a read before it the old one), and a call that fails
    anywhere changes no variable. Outside, numpy() / read_value() give a copy of its value and
    the updates change it now. Optimizers (ndx.optimizers) and GradientTape take it as a
    source. Operators are its value's (TensorFlow 2's: == and != elementwise, < <= > >=,
    & | ^ ~ on bool, abs()); as in TensorFlow 2 a Variable is unhashable: key dicts and sets by
    v.ref()."""

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
        self._lease = None       # weakref to the _Lease of an array lent from _value, or None
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
            self._own(keep=False)
            session.read_variable(node, self._value)
            self._holder = None

    def _lend(self):
        """_value as a read-only array sharing its buffer, without a copy (an eager tape's read
        of the table: a copy of [1,000,000, 64] floats per read was most of an eager training
        step). Under the lock; _own keeps the lent values unchanged by later writes."""
        lease = _Lease(self._value)
        self._lease = weakref.ref(lease)
        return np.asarray(lease)

    def _own(self, keep=True):
        """Before _value is written in place (under the lock): while an array _lend gave (or
        any view of it) is alive, the variable moves to a buffer of its own, a copy of the
        value (keep=False: uninitialized, for a caller that overwrites all of it), so the lent
        array keeps the values it was read with."""
        lease = self._lease() if self._lease is not None else None
        if lease is not None:
            self._value = self._value.copy() if keep else np.empty_like(self._value)
        self._lease = None

    def numpy(self):
        """A copy of the value (a NumPy array; ndx.BFloat16Array for bfloat16)."""
        if _graph() is not None:
            raise TypeError(f"{self.name}.numpy() inside a traced function: its value is only "
                            f"known when the function runs (use the variable as a tensor)")
        with self._lock:
            self._fresh()
            return self._value.copy()

    def read_value(self):
        """The value: inside a trace a Tensor, the value at this point of the program (after the
        updates of it made before); while an eager GradientTape records, the read it follows
        (an ndx.TapedArray); else numpy()."""
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

    # The updates return what TensorFlow 2's return: the variable (TF2 gives a variable-like
    # object on the same handle), whose reads made afterwards (read_value(), operators, use as a
    # tensor) see the new value; read_value=False returns None.

    def assign(self, value, read_value=True):
        """Sets the value (TensorFlow's AssignVariableOp): value of the variable's shape,
        converted to its dtype. Returns the variable (None with read_value=False)."""
        g = _graph()
        if g is not None:
            value = g.convert(value, self.dtype)
            _update(g, [self], "AssignVariableOp", [self._ndx_handle(g), value])
            return self if read_value else None
        v = self._eager_value(value, "assign")
        with self._lock:
            self._set(v.copy() if isinstance(v, BFloat16Array) else np.array(v, order="C"))
        return self if read_value else None

    def _assign_op(self, value, subtract, read_value):
        g = _graph()
        if g is not None:
            value = g.convert(value, self.dtype)
            _update(g, [self], "AssignSubVariableOp" if subtract else "AssignAddVariableOp",
                    [self._ndx_handle(g), value])
            return self if read_value else None
        v = self._eager_value(value, "assign_sub" if subtract else "assign_add")
        from ._glue import add, subtract as sub
        with self._lock, _trace.paused():  # (an update is not recorded by tapes, as in TF)
            self._fresh()
            self._set((sub if subtract else add)(self._value, v))
        return self if read_value else None

    def assign_add(self, value, read_value=True):
        """value added to the variable (TensorFlow's AssignAddVariableOp). Returns the variable
        (None with read_value=False)."""
        return self._assign_op(value, False, read_value)

    def assign_sub(self, value, read_value=True):
        """value subtracted from the variable (AssignSubVariableOp). Returns the variable (None
        with read_value=False)."""
        return self._assign_op(value, True, read_value)

    def scatter_nd_add(self, indices, updates):
        """updates added at indices, duplicates adding up (TensorFlow's Variable.scatter_nd_add,
        ResourceScatterNdAdd; indices as ndx.tensor_scatter_nd_add takes them). Returns the
        variable."""
        g = _graph()
        if g is not None:
            indices, updates = g.convert(indices), g.convert(updates, self.dtype)
            _update(g, [self], "ResourceScatterNdAdd", [self._ndx_handle(g), indices, updates])
            return self
        from ._dense import tensor_scatter_nd_add
        with self._lock, _trace.paused():
            self._fresh()
            self._set(tensor_scatter_nd_add(self._value, indices, _convert_to(updates, self.dtype)))
        return self

    # ---- rows: the row scatters (ResourceScatterAdd ..) and sparse reads (ResourceGather) ----
    #
    # Each scatter combines the rows of sparse_delta.values into the variable's rows that
    # sparse_delta.indices names (any shape, int32 or int64): values of shape indices.shape +
    # shape[1:], or a scalar for every element of every row named. A repeated index applies its
    # rows one after another in the order of the flattened indices (update: the last one wins),
    # the same bits at any thread count. An index outside [0, shape[0]) raises
    # InvalidArgumentError ("ResourceScatterAdd: indices[3] = 9 is not in [0, 5)") and changes
    # nothing, as does an integer scatter_div by zero. use_locking is accepted for TensorFlow's
    # signature (updates of a variable never overlap in ndx). Inside a trace each is an update
    # node every call runs, in program order; outside it runs now. Returns the variable.

    def _scatter_rows(self, op, indices, updates, name=None):
        g = _graph()
        if g is not None:
            from ._gather_ops import _index
            inputs = [self._ndx_handle(g), _index(g, indices), g.convert(updates, self.dtype)]
            _update(g, [self], _SCATTERS[op], inputs, name=name)
            return self
        updates = _convert_to(updates, self.dtype)
        with self._lock, _trace.paused():  # (an update is not recorded by tapes, as in TF)
            self._fresh()
            self._own()
            _ndx._resource_scatter(self._value, op, indices, updates, None)
            self._set(self._value)
        return self

    def _scatter(self, op, sparse_delta, name):
        from ._gradients import IndexedSlices
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta!r}")
        return self._scatter_rows(op, sparse_delta.indices, sparse_delta.values, name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        """Adds sparse_delta.values to the rows sparse_delta.indices names (TensorFlow's
        Variable.scatter_add, ResourceScatterAdd; see the notes above these methods).

        >>> v = ndx.Variable([1., 2., 3., 4.])
        >>> v.scatter_add(ndx.IndexedSlices(np.float32([10., 20., 30.]), [2, 0, 2])).numpy()
        array([21.,  2., 43.,  4.], dtype=float32)
        """
        return self._scatter(_ADD, sparse_delta, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        """Subtracts sparse_delta.values from the rows it names (ResourceScatterSub)."""
        return self._scatter(_SUB, sparse_delta, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        """Multiplies the rows sparse_delta names by its values (ResourceScatterMul)."""
        return self._scatter(_MUL, sparse_delta, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        """Divides the rows sparse_delta names by its values (ResourceScatterDiv): integers
        truncate, an integer zero divisor raises InvalidArgumentError; floats as IEEE."""
        return self._scatter(_DIV, sparse_delta, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        """The smaller of each element and its update (ResourceScatterMin; integers and real
        floats; a NaN update leaves the element)."""
        return self._scatter(_MIN, sparse_delta, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        """The larger of each element and its update (ResourceScatterMax; integers and real
        floats; a NaN update leaves the element)."""
        return self._scatter(_MAX, sparse_delta, name)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """Sets the rows sparse_delta names to its values; of a repeated index the last row
        wins (ResourceScatterUpdate).

        >>> v = ndx.Variable([[1, 2], [3, 4], [5, 6]])
        >>> v.scatter_update(ndx.IndexedSlices(np.int32([[0, 0], [9, 9]]), [2, 2])).numpy()
        array([[1, 2],
               [3, 4],
               [9, 9]], dtype=int32)
        """
        return self._scatter(_UPDATE, sparse_delta, name)

    def sparse_read(self, indices, name=None):
        """The rows `indices` names (any shape; int32 or int64), as TensorFlow's
        Variable.sparse_read: shape indices.shape + shape[1:]. Inside a trace one ResourceGather
        node, which reads the rows straight from the variable at this point of the program (no
        copy of the table) and whose gradient reaches the variable as an ndx.IndexedSlices of
        the rows read, for the optimizers' sparse steps; ndx.gather(v, ids) and
        ndx.nn.embedding_lookup(v, ids) on a Variable read it this way. An index out of range
        raises InvalidArgumentError.

        >>> ndx.Variable([[1., 2.], [3., 4.], [5., 6.]]).sparse_read([2, 0])
        array([[5., 6.],
               [1., 2.]], dtype=float32)
        """
        from ._gather_ops import _index, gather
        g = _graph()
        if g is not None:
            return g.op("ResourceGather", [self._ndx_handle(g), _index(g, indices)], {}, name)[0]
        if _trace.active and _trace.tapes() is not None:  # (recorded as a gather of the read)
            return gather(_trace.read(self), indices, name=name)
        with self._lock:
            self._fresh()
            return gather(self._value, indices)

    def gather_nd(self, indices, name=None):
        """gather_nd(value, indices) (TensorFlow's Variable.gather_nd): the slices of the value
        at the rows of `indices` (index depth indices.shape[-1])."""
        from ._dense import gather_nd
        return gather_nd(self.read_value(), indices, name=name)

    # ---- in graphs ------------------------------------------------------------------------

    def _ndx_tensor(self, g):
        """The variable read at this point of graph g's program: its Variable node until an
        update of it is built, then a ReadVariableOp made after each update, on first use."""
        if self not in g._reads:
            return self._ndx_handle(g)
        t = g._reads[self]
        if t is None:
            t = g._reads[self] = g.op("ReadVariableOp", [self._ndx_handle(g)])[0]
        return t

    def _ndx_handle(self, g):
        """This variable's Variable node in graph g (made on first use), as a Tensor: what
        updates take and gradients are taken for."""
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


class _Lease:
    """The owner of the arrays Variable._lend gives: every view of them leads back to it (a
    non-array base ends NumPy's chain of bases), so a weak reference to it says whether any is
    still alive. Read-only: the interface marks the memory so."""

    __slots__ = ("__array_interface__", "value", "__weakref__")

    def __init__(self, value):
        self.value = value  # (keeps the buffer alive)
        interface = dict(value.__array_interface__)
        interface["data"] = (interface["data"][0], True)
        self.__array_interface__ = interface


def _graph():
    return _trace.graph() if _trace.active else None


def _value_of(o):
    """The other operand of an operator: a Variable's value, anything else as it is."""
    return o._v() if isinstance(o, Variable) else o


def _update(g, variables, type, inputs, attrs=None, name=None):
    """Adds an update node (no outputs) of these Variables that every call of the trace runs;
    their reads from now on read after it."""
    g.op(type, inputs, attrs, name)
    g.add_target(g._g.count())  # (an update is the last node its builder adds)
    for v in variables:
        g._updated.add(v)
        g._reads[v] = None


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


# ---- TensorFlow 1's functions on a variable (tf.compat.v1.scatter_add ...) -------------------

def _ref(ref, what):
    if not isinstance(ref, Variable):
        raise TypeError(f"{what}: ref must be an ndx.Variable, not {type(ref).__name__}")
    return ref


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i...], ...] += updates[i..., ...] for each position of indices, in order
    (TensorFlow 1's tf.scatter_add, tf.compat.v1.scatter_add, on a Variable): Variable.scatter_add
    with indices and updates apart. Returns ref.

    The example of TensorFlow's documentation:

    >>> ref = ndx.Variable([1, 2, 3, 4, 5, 6, 7, 8])
    >>> ndx.scatter_add(ref, [4, 3, 1, 7], [9, 10, 11, 12]).numpy()
    array([ 1, 13,  3, 14, 14,  6,  7, 20], dtype=int32)
    """
    return _ref(ref, "scatter_add")._scatter_rows(_ADD, indices, updates, name)


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i...], ...] -= updates[i..., ...] (tf.compat.v1.scatter_sub). Returns ref.

    >>> ref = ndx.Variable([1, 2, 3, 4, 5, 6, 7, 8])
    >>> ndx.scatter_sub(ref, [4, 3, 1, 7], [9, 10, 11, 12]).numpy()
    array([ 1, -9,  3, -6, -4,  6,  7, -4], dtype=int32)
    """
    return _ref(ref, "scatter_sub")._scatter_rows(_SUB, indices, updates, name)


def scatter_mul(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i...], ...] *= updates[i..., ...] (tf.compat.v1.scatter_mul). Returns ref."""
    return _ref(ref, "scatter_mul")._scatter_rows(_MUL, indices, updates, name)


def scatter_div(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i...], ...] /= updates[i..., ...] (tf.compat.v1.scatter_div; integers
    truncate, an integer zero divisor raises). Returns ref."""
    return _ref(ref, "scatter_div")._scatter_rows(_DIV, indices, updates, name)


def scatter_min(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i...], ...] = min(that, updates[i..., ...]) (tf.compat.v1.scatter_min).
    Returns ref."""
    return _ref(ref, "scatter_min")._scatter_rows(_MIN, indices, updates, name)


def scatter_max(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i...], ...] = max(that, updates[i..., ...]) (tf.compat.v1.scatter_max).
    Returns ref."""
    return _ref(ref, "scatter_max")._scatter_rows(_MAX, indices, updates, name)


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    """ref[indices[i...], ...] = updates[i..., ...] (tf.compat.v1.scatter_update); of a
    repeated index the last update wins. Returns ref.

    >>> ref = ndx.Variable([1, 2, 3, 4, 5, 6, 7, 8])
    >>> ndx.scatter_update(ref, [4, 3, 1, 7], [9, 10, 11, 12]).numpy()
    array([ 1, 11,  3, 10,  9,  6,  7, 12], dtype=int32)
    """
    return _ref(ref, "scatter_update")._scatter_rows(_UPDATE, indices, updates, name)
