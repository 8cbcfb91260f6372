"""GradientTape in eager code (TensorFlow 2's shape): the record, and gradients from it.

Recording. While a tape records in a thread, the op wrappers of that thread hand every call to
`record` (index and sparse ops: the public function and its arguments) and the glue ops run
through `_TapeMode.op` (one node: its type, attributes and input arrays). Either runs the op
eagerly as always; when an input is one the tape follows (a watched array, a Variable it
watches, or a result it recorded) the call is noted as an _Entry on each such tape and the
results come back as TapedArrays: read-only ndarrays (TensorFlow's tensors are immutable) that
remember their entry, and whose NumPy operators run the glue ops (so `x * x` is recorded too).
An op that raises records nothing. Nothing else changes outside a recording tape: the wrappers
reach this module only when `_trace.active` says a trace or a tape is running.

Gradients. gradient() replays the entries the target depends on into a fresh graph, inside a
trace, through the same public functions (so each becomes the very node ndx.function would
build), with placeholders for the arrays read, and builds the gradients there with the C
gradient layer (ndx.gradients' path). The session is fed the recorded values, the results of
the entries included, so the forward is not computed again and the gradient is that of the
values the code saw.

Nested tapes. A gradient() asked while other tapes record in the thread, whose record reads a
value one of them follows, is itself an entry on them (_NestedGradient): replayed in an outer
tape's graph, it replays the inner record there on the outer replay's tensors and builds the
gradients through those nodes only (ndx_graph_gradients_within), so the outer tape can
differentiate the gradient (second derivatives), exactly as ndx.function's traced tapes do."""
import threading
import warnings
import weakref

import numpy as np

from . import _glue, _ndx, _trace
from ._convert import BFloat16Array
from ._graph import Graph, _like, dtype_of
from ._ref import IdentityDict
from ._sparse_tensor import SparseTensor
from ._variables import Variable

__all__ = ["TapedArray"]

_SMALL = 16  # arrays read by a recorded op up to this size become constants, larger ones feeds
_EAGER_ONLY = ("threads", "max_memory", "out")  # keywords of the eager call, not of nodes


class TapedArray(np.ndarray):
    """An ndarray a recording ndx.GradientTape returned (TensorFlow's EagerTensor in a tape):
    the result of an ndx op whose input the tape follows. Read-only; `+ - * / // %`, unary
    `-`, abs(), and np.add, np.maximum, np.sqrt, ... on it run ndx's glue ops while the tape
    records, so they are recorded too (`x += y` gives a new array, as with tensors). Comparisons
    (== != < <= > >=) and the logical ops run ndx's ops too and give plain bool arrays, which
    have no gradient. Other NumPy functions,
    slicing and views give plain results the tape does not follow: gradients through them are
    None. Outside a tape it behaves as an ndarray."""

    _ndx_ref = None  # (weakref to its entry, output) or a _Read; views and copies have none

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs and _trace.active:
            op = _UFUNCS.get(ufunc)
            tapes = _trace.tapes()
            if op is not None and tapes is not None and _touching(tapes, inputs):
                return op(*inputs)
        inputs = tuple(x.view(np.ndarray) if isinstance(x, TapedArray) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(x.view(np.ndarray) if isinstance(x, TapedArray) else x
                                  for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    # In place on a tensor makes a new one (TensorFlow's `x += y`); the array is read-only.
    def __iadd__(self, o):
        return self + o

    def __isub__(self, o):
        return self - o

    def __imul__(self, o):
        return self * o

    def __itruediv__(self, o):
        return self / o

    def __ifloordiv__(self, o):
        return self // o

    def __imod__(self, o):
        return self % o


_UFUNCS = {np.add: _glue.add, np.subtract: _glue.subtract, np.multiply: _glue.multiply,
           np.true_divide: _glue.divide, np.floor_divide: _glue.floordiv,
           np.remainder: _glue.floormod, np.negative: _glue.negative,
           np.maximum: _glue.maximum, np.minimum: _glue.minimum, np.equal: _glue.equal,
           np.not_equal: _glue.not_equal, np.less: _glue.less, np.less_equal: _glue.less_equal,
           np.greater: _glue.greater, np.greater_equal: _glue.greater_equal,
           np.logical_and: _glue.logical_and, np.logical_or: _glue.logical_or,
           np.logical_not: _glue.logical_not, np.logical_xor: _glue.logical_xor,
           np.absolute: _glue.abs, np.square: _glue.square, np.sqrt: _glue.sqrt}


class _Entry:
    """One recorded call: `fn(*args, **kwargs)` (an index or sparse op) or, with fn None, the
    node `node` = (type, attrs) on the input arrays `args`. `outputs`: the arrays it returned,
    in the order _flatten gives (None where a result is not an ndarray). The tapes hold their
    entries; a TapedArray only a weak reference to its own, so a result kept after its tape
    is gone (a loss appended to a list) keeps nothing else alive."""

    __slots__ = ("fn", "node", "args", "kwargs", "outputs", "__weakref__")

    def __init__(self, fn, node, args, kwargs, outputs):
        self.fn, self.node, self.args, self.kwargs, self.outputs = fn, node, args, kwargs, outputs


class _Read:
    """A Variable's value as read while tapes recorded (one read per version)."""

    __slots__ = ("variable", "version")

    def __init__(self, variable, version):
        self.variable, self.version = variable, version


def _taped(a, ref):
    t = a.view(TapedArray)
    t.flags.writeable = False
    t._ndx_ref = ref
    return t


def _output(x):
    """(entry, output index) of a TapedArray a recorded op returned, while a tape holds the
    entry; else None."""
    ref = x._ndx_ref if isinstance(x, TapedArray) else None
    if type(ref) is tuple:
        entry = ref[0]()
        if entry is not None:
            return entry, ref[1]
    return None


def _outputs(entry, results):
    """The results as TapedArrays of entry (ndarrays only), and entry.outputs set."""
    entry.outputs = [a if type(a) is np.ndarray else None for a in results]
    ref = weakref.ref(entry)
    return [_taped(a, (ref, k)) if a is not None else None
            for k, a in enumerate(entry.outputs)]


def _is_variable(x):
    return isinstance(x, Variable)


def _leaves(value, out):
    """The arrays (and anything else not a container) of an op's arguments, in order."""
    if isinstance(value, (list, tuple)):
        for v in value:
            _leaves(v, out)
    elif isinstance(value, SparseTensor):
        out.extend((value.indices, value.values, value.dense_shape))
    else:
        out.append(value)


def _map(value, f):
    """value with each leaf x replaced by f(x) (lists, tuples and SparseTensors rebuilt)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, f) for v in value)
    if isinstance(value, SparseTensor):
        return SparseTensor._from_parts(f(value.indices), f(value.values), f(value.dense_shape))
    return f(value)


def _flatten(result):
    """An op's results as a flat list (an array, a list of arrays, or a SparseTensor)."""
    out = []
    _leaves(result, out)
    return out


def _plain(x):
    return x.view(np.ndarray) if isinstance(x, TapedArray) else x


def _follows(tape, x):
    """Whether `tape` follows the value x (a leaf of an op's inputs; a Variable it watches or
    will watch when read)."""
    if isinstance(x, TapedArray):
        out = _output(x)
        if out is not None and out[0] in tape._entries:
            return True
        if type(x._ndx_ref) is _Read and x._ndx_ref.variable in tape._variables:
            return True
    elif isinstance(x, Variable):
        return x in tape._variables or (tape._watch_accessed and x.trainable and
                                        _differentiable(x.dtype))
    return id(x) in tape._watched


def _touching(tapes, leaves):
    return [t for t in tapes if any(_follows(t, x) for x in leaves)]


def read(variable):
    """The variable's value for this thread's recording tapes: a TapedArray of one read per
    version (no copy: it shares the variable's buffer, and a later in-place write moves the
    variable to a copy, Variable._lend), which each tape that watches the variable follows. A
    trainable variable read while a tape records with watch_accessed_variables is watched by
    it (TensorFlow's)."""
    tapes = _trace.tapes()
    if variable.trainable and _differentiable(variable.dtype):
        for t in tapes:
            if t._watch_accessed and variable not in t._variables:
                with t._lock:
                    t._variables[variable] = None
    reads = _thread.__dict__.get("reads")
    if reads is None:
        reads = _thread.reads = IdentityDict()  # (Variables are keys by identity)
    with variable._lock:
        hit = reads.get(variable)
        if hit is not None and hit._ndx_ref.version == variable._version:
            return hit
        variable._fresh()
        if not isinstance(variable._value, np.ndarray):  # (bfloat16: not followed)
            return variable._value.copy()
        value = _taped(variable._lend(), _Read(variable, variable._version))
    if len(reads) > 256:  # (a thread that reads many variables keeps only recent reads)
        reads.clear()
    reads[variable] = value
    return value


_thread = threading.local()


def _substitute(x):
    """An argument as the recorded call sees it: a Variable read for the tapes."""
    return read(x) if isinstance(x, Variable) else x


def record(fn, *args, **kwargs):
    """fn(*args, **kwargs), an index or sparse op, run eagerly for this thread's tapes. Its
    arrays are its positional arguments (the keywords are ndx's options, and out=, whose call
    is not recorded: its result is the caller's buffer, not a new value). The ops take
    TapedArrays as the ndarrays they are."""
    touched = None
    if kwargs.get("out") is None:
        leaves = []
        _leaves(args, leaves)
        if any(isinstance(x, Variable) for x in leaves):
            args = _map(args, _substitute)
            leaves = []
            _leaves(args, leaves)
        touched = _touching(_trace.tapes(), leaves)
    with _trace.paused():
        result = fn(*args, **kwargs)
    if not touched:
        return result
    entry = _Entry(fn, None, args, kwargs, None)
    it = iter(_outputs(entry, _flatten(result)))
    for t in touched:
        t._add(entry)
    return _map(result, lambda a: o if (o := next(it)) is not None else a)


def unrecorded(name, args, kwargs):
    """Warns when a call the tapes cannot record (an ndx.function's) reads a value they
    follow: gradients through it will be None."""
    leaves = []
    _leaves((args, list(kwargs.values())), leaves)
    if _touching(_trace.tapes(), leaves):
        warnings.warn(f"{name}: a call of an ndx.function is not recorded by an eager "
                      f"GradientTape; gradients through its results are None (differentiate "
                      f"inside the function, or call the ops eagerly)", stacklevel=3)


def _differentiable(dtype):
    return dtype.is_floating or dtype.is_complex


class _TapeMode(_glue._Eager):
    """The glue's eager mode while tapes record in this thread: Variables read as the tapes
    see them, and each node whose input a tape follows recorded on it."""

    @staticmethod
    def convert(value, dtype=None):
        if _is_variable(value) and _trace.tapes() is not None:
            value = read(value)
        return _glue._Eager.convert(value, dtype)

    def op(self, op_type, inputs, attrs=None, name=None):
        tapes = _trace.tapes()
        touched = _touching(tapes, inputs) if tapes is not None else None
        results = _glue._EAGER.op(op_type, [_plain(x) for x in inputs], attrs, name)
        if not touched or all(getattr(a, "dtype", None) == np.bool_ for a in results):
            return results  # (bool results have no gradient: nothing to follow)
        entry = _Entry(None, (op_type, dict(attrs or {})), list(inputs), None, None)
        outputs = _outputs(entry, results)
        for t in touched:
            t._add(entry)
        return [o if o is not None else a for o, a in zip(outputs, results)]


class EagerTape:
    """The eager side of ndx.GradientTape (ndx/_gradients.py delegates here)."""

    def __init__(self, persistent, watch_accessed_variables):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._entries = {}      # _Entry -> None, in recording order
        self._watched = {}      # id -> the watched array (kept alive: ids stay unique)
        self._variables = IdentityDict()  # watched Variable -> None, in watching order
        self._lock = threading.Lock()
        self._thread = None     # the thread recording, while it records
        self._used = False

    # ---- recording ------------------------------------------------------------------------

    def enter(self):
        if self._thread is not None:
            raise RuntimeError("GradientTape: this tape is already recording (a tape cannot be "
                               "entered again inside its own `with` block)")
        self._thread = threading.get_ident()
        _trace.push_tape(self)

    def exit(self):
        if self._thread != threading.get_ident():
            raise RuntimeError("GradientTape: a tape's `with` block must end in the thread "
                               "that entered it")
        _trace.pop_tape(self)
        self._thread = None
        if _trace.tapes() is None:  # (the thread's last tape: its Variable reads go)
            _thread.__dict__.pop("reads", None)

    def _add(self, entry):
        with self._lock:
            self._entries[entry] = None

    def stop_recording(self):
        return _Stopped(self)

    def reset(self):
        """Forgets everything recorded and watched; a tape in its `with` block goes on
        recording."""
        with self._lock:
            self._entries, self._watched, self._variables = {}, {}, IdentityDict()
            self._used = False

    def watch(self, items):
        from ._gradients import _not_differentiable
        for x in items:
            if _is_variable(x):
                dtype = x.dtype
            elif isinstance(x, np.ndarray):
                dtype = dtype_of(x)
            else:
                raise TypeError(f"GradientTape.watch: watch takes NumPy arrays, the arrays ndx "
                                f"ops return, or ndx.Variables, not {type(x).__name__}")
            if _not_differentiable(dtype, "watch", 3):
                continue
            with self._lock:
                if _is_variable(x):
                    self._variables[x] = None
                else:
                    self._watched[id(x)] = x

    def watched_variables(self):
        with self._lock:
            return tuple(self._variables)

    # ---- gradients ------------------------------------------------------------------------

    def gradient(self, targets, sources, output_gradients, zero):
        """The gradient for each of `sources` (flat lists), as GradientTape.gradient."""
        from ._gradients import IndexedSlices
        outer = _trace.tapes()  # (the tapes recording in this thread record this gradient)
        with self._lock:  # (checked and marked at once: two threads cannot both pass)
            if self._used and not self._persistent:
                raise RuntimeError("GradientTape.gradient can only be called once on a "
                                   "non-persistent tape (use GradientTape(persistent=True))")
            self._used = True
            entries = list(self._entries)
            watched, variables = dict(self._watched), self._variables.copy()
        try:
            with _trace.paused():
                replay = _Replay(entries, watched, variables)
                grads = replay.run(targets, sources, output_gradients, IndexedSlices)
            touched = _touching(outer, replay.inputs) if outer is not None else None
            if touched:
                grads = self._record(touched, replay, entries, watched, variables, targets,
                                     sources, output_gradients, grads, IndexedSlices)
            if zero:
                grads = [_zeros(s) if d is None else d for s, d in zip(sources, grads)]
        except BaseException:
            with self._lock:  # (a call that failed used nothing up)
                self._used = False
            raise
        if not self._persistent:
            with self._lock:
                self._entries, self._watched = {}, {}  # (the record is spent: free it)
        return grads


    @staticmethod
    def _record(touched, replay, entries, watched, variables, targets, sources,
                output_gradients, grads, IndexedSlices):
        """grads as the results of an entry the touched tapes record (a nested gradient): the
        arrays (an IndexedSlices' three parts) as TapedArrays of it."""
        layout = [None if d is None else "slices" if isinstance(d, IndexedSlices) else "dense"
                  for d in grads]
        fn = _NestedGradient([e for e in entries if e in replay.need], watched, variables,
                             targets, sources, output_gradients, replay.inputs, layout)
        entry = _Entry(fn, None, (replay.inputs,), {}, None)
        flat = []
        for d in grads:
            if isinstance(d, IndexedSlices):
                flat.extend((d.values, d.indices, d.dense_shape))
            elif d is not None:
                flat.append(d)
        it = iter(_outputs(entry, flat))
        for t in touched:
            t._add(entry)
        out = []
        for d in grads:
            if isinstance(d, IndexedSlices):
                d = IndexedSlices(*(o if o is not None else a for o, a in
                                    zip((next(it), next(it), next(it)),
                                        (d.values, d.indices, d.dense_shape))))
            elif d is not None:
                o = next(it)
                d = o if o is not None else d
            out.append(d)
        return out


class _Stopped:
    """`with tape.stop_recording():` ops in it are not recorded on the tape."""

    def __init__(self, tape):
        self._tape = tape

    def __enter__(self):
        if self._tape._thread != threading.get_ident():
            raise ValueError("GradientTape.stop_recording: the tape is not recording in this "
                             "thread (call it inside the tape's `with` block)")
        _trace.pop_tape(self._tape)

    def __exit__(self, *exc):
        _trace.push_tape(self._tape)
        return False


def _zeros(source):
    if _is_variable(source):
        return np.zeros(source.shape, source.dtype.as_numpy_dtype)
    return np.zeros_like(np.asarray(source))


class _Replay:
    """The recorded program the targets need, as a graph (see the module's doc)."""

    def __init__(self, entries, watched, variables):
        self.entries, self.watched, self.variables = entries, watched, variables
        self.memo = {}       # id(array) -> its Tensor in the replay
        self.outs = {}       # (entry, output index) -> its Tensor in the replay
        self.feeds = []      # (node, index, array, like)
        self.reads = IdentityDict()  # Variable -> [Tensor of each read]
        self.inputs = []     # the arrays read that no needed entry returned, in memo order
        self.constants = []  # (dtype code, bytes) of each small array made a Const, in order

    def _follows(self, x):
        """Whether a source is one the tape follows."""
        out = _output(x)
        if out is not None and out[0] in self.need:
            return True
        ref = x._ndx_ref if isinstance(x, TapedArray) else None
        if type(ref) is _Read and ref.variable in self.variables:
            return True
        return id(x) in self.watched

    def _needed(self, targets):
        """The entries the targets depend on, in recording order."""
        entries = set(self.entries)
        need = self.need = set()
        stack = list(targets)
        while stack:
            x = stack.pop()
            out = _output(x)
            if out is not None and out[0] in entries and out[0] not in need:
                need.add(out[0])
                _leaves((out[0].args, list((out[0].kwargs or {}).values())), stack)
        return [e for e in self.entries if e in need]

    def leaf(self, x):
        """x as a Tensor of the replay (arrays), or x itself (anything else)."""
        if not isinstance(x, (np.ndarray, BFloat16Array)):
            return x
        out = _output(x)
        if out is not None and out[0] in self.need:
            return self.outs[out]
        t = self.memo.get(id(x))
        if t is not None:
            return t
        ref = x._ndx_ref if isinstance(x, TapedArray) else None
        value = _plain(x)
        if (type(ref) is _Read and ref.variable in self.variables) or id(x) in self.watched:
            t = self._feed(value)
            if type(ref) is _Read and ref.variable in self.variables:
                self.reads.setdefault(ref.variable, []).append(t)
        elif (value.bits.size if isinstance(value, BFloat16Array) else value.size) <= _SMALL:
            t = self.g.constant(value)
            self.constants.append((t.dtype.code, value.tobytes()))
        else:
            t = self._feed(value)
        self.memo[id(x)] = t
        self.inputs.append(x)
        return t

    def _feed(self, value):
        dtype = dtype_of(value)
        shape = value.bits.shape if isinstance(value, BFloat16Array) else value.shape
        t = self.g.placeholder(dtype, shape)
        self.feeds.append((t.op, 0, value, _like(dtype)))
        return t

    def _replay(self, entry):
        if entry.fn is None:
            type_, attrs = entry.node
            outs = self.g.op(type_, [self.leaf(x) for x in entry.args], attrs)
        else:
            kwargs = {k: _map(v, self.leaf) for k, v in entry.kwargs.items()
                      if k not in _EAGER_ONLY}
            outs = _flatten(entry.fn(*_map(entry.args, self.leaf), **kwargs))
        for k, (t, a) in enumerate(zip(outs, entry.outputs)):
            if a is None:
                continue
            self.outs[entry, k] = t
            if not self.g._g.node(t.op)[6]:  # (a node folded at build time is not fed)
                self.feeds.append((t.op, t.index, a, None))

    def build(self, targets, sources, output_gradients, ranges):
        """Replays the entries the targets need into self.g (inside its trace) and builds the
        gradients there: (forms, where), a form per Tensor differentiated for and, per source,
        the indices of its forms (a Variable read several times has several)."""
        from ._gradients import IndexedSlices, _gradients
        parts = []  # (an IndexedSlices target: its parts, densified in the graph)
        _leaves([(y.values, y.indices, y.dense_shape) if isinstance(y, IndexedSlices) else y
                 for y in targets], parts)
        self.needed = self._needed(parts)
        for entry in self.needed:
            self._replay(entry)
        ys = [IndexedSlices(*(self.leaf(_as_value(p)) for p in (y.values, y.indices,
                                                                y.dense_shape)))
              if isinstance(y, IndexedSlices) else self.leaf(_as_value(y)) for y in targets]
        xs, where = [], []   # the Tensors to differentiate for, and per source which
        for s in sources:
            if _is_variable(s):
                ts = self.reads.get(s, []) if s in self.variables else []
            elif isinstance(s, (np.ndarray, BFloat16Array)):
                out = _output(s)
                t = (self.outs.get(out) if out is not None and out[0] in self.need
                     else self.memo.get(id(s)))
                ok = t is not None and _differentiable(t.dtype) and self._follows(s)
                ts = [t] if ok else []
            else:
                raise TypeError(f"GradientTape.gradient: a source must be an array or "
                                f"an ndx.Variable, not {type(s).__name__}")
            where.append([len(xs) + k for k in range(len(ts))])
            xs.extend(ts)
        forms = _gradients(self.g, ys, xs, output_gradients, ranges) if xs else []
        return forms, where

    def run(self, targets, sources, output_gradients, IndexedSlices):
        self.g = g = Graph("tape")
        with _trace.tracing(g):
            try:
                forms, where = self.build(targets, sources, output_gradients, None)
                fetches, shapes = [], []
                for form in forms:
                    if form is None:
                        shapes.append(None)
                    elif isinstance(form, IndexedSlices):
                        shapes.append((len(fetches), 3))
                        fetches.extend((form.values, form.indices, form.dense_shape))
                    else:
                        shapes.append((len(fetches), 1))
                        fetches.append(form)
            except BaseException:
                g._open = False
                raise
        g.finish()
        if fetches:
            outputs = [t.output for t in fetches]
            session = _sessions.get(g, self.feeds, outputs, self.constants)
            values = session.run(self.feeds, outputs, ())
        answers = []
        for shape in shapes:
            if shape is None:
                answers.append(None)
            elif shape[1] == 1:
                answers.append(values[shape[0]])
            else:
                answers.append(IndexedSlices(*values[shape[0]:shape[0] + 3]))
        return [_sum([answers[k] for k in ks], IndexedSlices) for ks in where]


class _SessionCache:
    """The planned sessions of the last few replays, by what determines them, so a training
    loop's gradient() (the same ops on the same shapes each step) runs the session it planned
    before, its memory pool warm, instead of planning a new one. The key is the replay graph's
    text form (every node, attribute, dtype, shape and small constant) with the feeds, the
    fetches and the exact bytes of the constants the replay made from arrays (so a changed
    shape, dtype, op, attribute, source or constant never reuses a stale session). Bounded:
    the least recently used session goes beyond `KEPT`. A session runs under its own lock, so
    threads may share one."""

    KEPT = 4

    def __init__(self):
        self._sessions = {}  # key -> _Session, least recently used first
        self._lock = threading.Lock()

    def get(self, g, feeds, outputs, constants):
        try:
            text = g._g.to_text()
        except (ValueError, TypeError, MemoryError):  # (no text form: planned, not kept)
            return _ndx._Session(g._g, None, None)
        key = (text, tuple((op, k, like) for op, k, _, like in feeds), tuple(outputs),
               tuple(constants))
        with self._lock:
            session = self._sessions.pop(key, None)
            if session is not None:
                self._sessions[key] = session  # (now the most recently used)
                return session
        session = _ndx._Session(g._g, None, None)
        with self._lock:
            session = self._sessions.setdefault(key, session)
            while len(self._sessions) > self.KEPT:
                del self._sessions[next(iter(self._sessions))]
        return session

    def clear(self):
        with self._lock:
            self._sessions.clear()

    def __len__(self):
        return len(self._sessions)


_sessions = _SessionCache()


class _NestedGradient:
    """A tape's gradient() as an op the other tapes recording in the thread record (TensorFlow's
    nested tapes: second derivatives). Called in the replay of an outer tape with the outer
    graph's Tensors for the arrays the inner record read (`inputs`), it replays the inner record
    there and builds the gradients through those nodes only (ndx_graph_gradients_within: what
    the inner tape did not record carries nothing, as in its own replay). Returns a dense
    Tensor per dense source and an IndexedSlices' three parts per slices one (`layout`, the
    forms of the recorded answers)."""

    def __init__(self, entries, watched, variables, targets, sources, output_gradients, inputs,
                 layout):
        self.entries, self.watched, self.variables = entries, watched, variables
        self.targets, self.sources, self.output_gradients = targets, sources, output_gradients
        self.inputs, self.layout = inputs, layout

    def __call__(self, tensors):
        from ._gradients import IndexedSlices
        g = _trace.graph()
        inner = _Replay(self.entries, self.watched, self.variables)
        inner.g = g
        for x, t in zip(self.inputs, tensors):
            inner.memo[id(x)] = t
            ref = x._ndx_ref if isinstance(x, TapedArray) else None
            if type(ref) is _Read and ref.variable in self.variables:
                inner.reads.setdefault(ref.variable, []).append(t)
        begin = g._g.count()
        forms, where = inner.build(self.targets, self.sources, self.output_gradients,
                                   _Ranges(g, begin))
        out = []
        for ks, form in zip(where, self.layout):
            ds = [forms[k] for k in ks if forms[k] is not None]
            if form == "slices":
                # (several reads: their rows one after another, as _sum concatenates them)
                out.extend((_concat_rows([d.values for d in ds]),
                            _concat_rows([d.indices for d in ds]), ds[0].dense_shape))
            elif form == "dense":
                total = None
                for d in ds:
                    d = d._ndx_tensor(g) if isinstance(d, IndexedSlices) else d
                    total = d if total is None else total + d
                out.append(total)
        return out


def _concat_rows(parts):
    """The Tensors' rows one after another (a dynamic_stitch, which has a gradient)."""
    if len(parts) == 1:
        return parts[0]
    from ._dense import dynamic_stitch
    from ._glue import range as arange, shape
    positions, start = [], 0
    for p in parts:
        end = start + shape(p)[0]
        positions.append(arange(start, end))
        start = end
    return dynamic_stitch(positions, parts)


class _Ranges:
    """The one range of the nodes built from `begin` up to now (read when the gradients are
    built: the nodes an inner record's replay added)."""

    def __init__(self, g, begin):
        self.g, self.begin = g, begin

    def __iter__(self):
        return iter([(self.begin, self.g._g.count())])


def _as_value(y):
    """A target: a Variable is its value (read now)."""
    return y.numpy() if _is_variable(y) else y


def _sum(grads, IndexedSlices):
    """The gradient of a Variable read more than once (values differing between reads): the
    sum of the reads' (slices of one depth concatenated, else densified and added)."""
    grads = [d for d in grads if d is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    if all(isinstance(d, IndexedSlices) and np.ndim(d.indices) == np.ndim(grads[0].indices)
           for d in grads):
        return IndexedSlices(np.concatenate([d.values for d in grads]),
                             np.concatenate([d.indices for d in grads]), grads[0].dense_shape)
    total = np.asarray(grads[0])
    for d in grads[1:]:
        total = total + np.asarray(d)
    return total


_trace.record, _trace.read, _trace.mode = record, read, _TapeMode()
_trace.unrecorded = unrecorded
