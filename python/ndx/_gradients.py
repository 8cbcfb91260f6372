"""Gradients: ndx.gradients (TensorFlow's tf.gradients, inside traced functions),
ndx.GradientTape (tf.GradientTape: inside traced functions, and eagerly through ndx/_tape.py)
and ndx.IndexedSlices, over the C graph's ndx_graph_gradients (ndx_graph.h section 7), which
adds ordinary nodes to the traced graph (eagerly: to the graph a tape's record is replayed in).

A gradient is None (no target depends on the source), a Tensor of the source's dtype and shape,
or an IndexedSlices: the gradient of a gather is the gathered rows, never a dense table.
ndx's slices have an index depth k (the gather_nd's): for k = 1 `indices` is a vector [N] as
TensorFlow's; for k > 1 it is [N, k], rows into the first k dims (values [N] + shape[k:]).
Used where a tensor is expected (an op's input, arithmetic) an IndexedSlices is densified
(scatter_nd, duplicates adding up), as TensorFlow's convert_to_tensor does."""
import warnings

import numpy as np

from . import _trace
from ._convert import BFloat16Array
from ._graph import Tensor, _convert_to, _user_frame, dtype_of

__all__ = ["IndexedSlices", "gradients", "GradientTape", "convert_to_tensor"]


class IndexedSlices:
    """A sparse gradient (TensorFlow's tf.IndexedSlices): the dense value is `values[r]` added
    at row `indices[r]` of a zero tensor of shape `dense_shape`. Inside a trace its parts are
    Tensors; returned from a traced function they are NumPy arrays. indices is int64, a vector
    [N] (index depth 1, TensorFlow's form) or [N, k] for index depth k > 1."""

    __slots__ = ("values", "indices", "dense_shape")

    def __init__(self, values, indices, dense_shape=None):
        self.values, self.indices, self.dense_shape = values, indices, dense_shape

    @property
    def dtype(self):
        return getattr(self.values, "dtype", None)

    @property
    def graph(self):
        return getattr(self.values, "graph", None)

    def _rows(self, g):
        """indices as [N, k] rows for scatter_nd."""
        from ._glue import reshape
        if self.indices.shape is not None and len(self.indices.shape) == 1:
            return reshape(self.indices, np.array([-1, 1], np.int64))
        return self.indices

    def _ndx_tensor(self, g):
        """The dense value in graph g (ScatterNd, rows out of range skipped)."""
        if self.dense_shape is None:
            raise ValueError("IndexedSlices without dense_shape cannot be densified")
        return g.op("ScatterNd", [g.convert(self._rows(g)), g.convert(self.values),
                                  g.convert(self.dense_shape)], {"bad_indices": 1})[0]

    def numpy(self):
        """The dense value of slices of NumPy arrays (outside a trace)."""
        from ._dense import scatter_nd
        indices = np.asarray(self.indices)
        if indices.ndim == 1:
            indices = indices.reshape(-1, 1)
        return scatter_nd(indices, self.values, np.asarray(self.dense_shape))

    def _dense(self):
        g = _trace.graph() if _trace.active else None
        return self._ndx_tensor(g) if g is not None else self.numpy()

    def __add__(self, o):
        return self._dense() + o

    def __radd__(self, o):
        return o + self._dense()

    def __sub__(self, o):
        return self._dense() - o

    def __rsub__(self, o):
        return o - self._dense()

    def __mul__(self, o):
        return self._dense() * o

    def __rmul__(self, o):
        return o * self._dense()

    def __truediv__(self, o):
        return self._dense() / o

    def __neg__(self):
        return -self._dense()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        return (f"IndexedSlices(indices={self.indices!r}, values={self.values!r}, "
                f"dense_shape={self.dense_shape!r})")


def convert_to_tensor(value, dtype=None):
    """value as a tensor (TensorFlow's tf.convert_to_tensor): inside a trace a Tensor (an
    IndexedSlices densified, a Variable read, a value a constant); outside a NumPy array (a
    Variable read while an eager tape records: the ndx.TapedArray the tape follows)."""
    g = _trace.graph() if _trace.active else None
    if g is not None:
        return g.convert(value, None if dtype is None else _dtype(dtype))
    if isinstance(value, IndexedSlices):
        value = value.numpy()
    from ._tape import TapedArray
    if isinstance(value, TapedArray) and (dtype is None or _dtype(dtype) is dtype_of(value)):
        return value  # (the tensor itself, as TensorFlow's: a tape goes on following it)
    if getattr(value, "_ndx_variable", False) and _trace.active and _trace.tapes() is not None:
        value = _trace.read(value)  # (a read an eager tape follows)
        if dtype is None:
            return value
    from ._graph import _convert_to
    from ._convert import _as_array
    return _as_array(value) if dtype is None else _convert_to(value, _dtype(dtype))


def _dtype(d):
    from ._graph import as_dtype
    return as_dtype(d)


def _graph(what):
    g = _trace.graph() if _trace.active else None
    if g is None:
        raise RuntimeError(f"{what} works inside a function traced by ndx.function (gradients "
                           f"are nodes of its graph, as tf.gradients' are of a tf.Graph)")
    return g.check_open()


def _flatten(value, out):
    """The structure of a (nested) list/tuple/dict of tensors; leaves appended to out."""
    if isinstance(value, (list, tuple)):
        return (type(value),) + tuple(_flatten(v, out) for v in value)
    if isinstance(value, dict):
        return (dict, tuple(value)) + tuple(_flatten(value[k], out) for k in value)
    out.append(value)
    return None


def _unflatten(structure, it):
    if structure is None:
        return next(it)
    if structure[0] is dict:
        return {k: _unflatten(s, it) for k, s in zip(structure[1], structure[2:])}
    items = [_unflatten(s, it) for s in structure[1:]]
    return items if structure[0] is list else tuple(items)


def _source(g, x):
    """A source as a Tensor of g (a Variable: its Variable node, which every read of it in g
    passes its gradient to)."""
    if getattr(x, "_ndx_variable", False):
        return x._ndx_handle(g)
    if not isinstance(x, Tensor):
        raise TypeError(f"gradients: a source must be a Tensor of the traced function or an "
                        f"ndx.Variable, not {type(x).__name__}")
    return g.convert(x)


def _wrap(g, form):
    """A gradient from _Graph.gradients' answer."""
    from ._glue import reshape
    if form is None:
        return None
    values, indices, dense_shape = (g._tensors(h[0], h[1] + 1)[h[1]] for h in
                                    (form[1:] if form[0] == "slices" else form[1:] * 3))
    if form[0] == "dense":
        return values
    if indices.shape is not None and len(indices.shape) == 2 and indices.shape[1] == 1:
        indices = reshape(indices, np.array([-1], np.int64))
    return IndexedSlices(values, indices, dense_shape)


def _gradients(g, ys, xs, grad_ys, ranges=None):
    """Gradients of the Tensors ys (with grad_ys, or ones) for the Tensors xs; ranges: None
    (every node) or the (begin, end) node counts whose nodes alone carry gradients (a tape's
    record, ndx_graph_gradients_within)."""
    ys = [g.convert(y) for y in ys]
    dys = None if grad_ys is None else [
        g.convert(d if isinstance(d, Tensor) else _convert_to(d, y.dtype))
        for d, y in zip(grad_ys, ys)]
    if dys is not None and len(dys) != len(ys):
        raise ValueError(f"gradients: {len(grad_ys)} grad_ys for {len(ys)} ys")
    file, line = _user_frame()
    forms = g._g.gradients([y.output for y in ys], None if dys is None else
                           [d.output for d in dys], [x.output for x in xs], file, line, ranges)
    return [_wrap(g, f) for f in forms]


def gradients(ys, xs, grad_ys=None):
    """The gradients of sum(ys) (each weighted by its grad_ys, ones by default) with respect to
    each of xs, inside a traced function (TensorFlow's tf.gradients): ys and xs a tensor or a
    list of them (xs may be Variables); returns a list, one per x: a Tensor, an IndexedSlices
    (the gradient of a gather), or None when no y depends on that x. An op on the way with no
    gradient, or an integer x, raises InvalidArgumentError naming the node and your line."""
    g = _graph("ndx.gradients")
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    if grad_ys is not None:
        grad_ys = list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys]
    return _gradients(g, ys, [_source(g, x) for x in xs], grad_ys)


class GradientTape:
    """TensorFlow's tf.GradientTape, in eager code and inside a traced function:

        with ndx.GradientTape() as tape:
            loss = ...
        grads = tape.gradient(loss, [v1, v2])

    Trainable Variables read while the tape records are watched by themselves
    (watch_accessed_variables=True); other values once passed to watch(). gradient(target,
    sources, output_gradients=None, unconnected_gradients="none") returns the gradients in the
    structure of sources (None for a source the target does not depend on through what the
    tape recorded, or one not watched); without persistent=True it can be called once.

    The tape records the ops run in its `with` block (outside stop_recording() blocks), as
    TensorFlow's does, and only those carry gradients: a target computed before the block, or
    a path through an op run before or after it, contributes nothing. A watched value is a
    source wherever it was computed. Eagerly the tape records the ndx ops (and the NumPy
    operators on their results) run in its thread (ndx/_tape.py); inside a trace it notes
    which nodes of the graph were built while it recorded (ndx_graph_gradients_within). A
    gradient computed while another tape records is recorded by it too, so nested tapes give
    second derivatives (as far as the gradients' own ops have gradients; else the error names
    the op). An integer or bool source, or watch() of one, gives None with a warning (as
    TensorFlow's log). The mode is fixed by where the tape is entered (or first used)."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_variables = bool(watch_accessed_variables)
        self._watched = {}
        self._graph = None
        self._used = False
        self._eager = None  # an _tape.EagerTape once used outside a trace
        self._ranges = []   # traced: (begin, end) node counts of the stretches recorded
        self._begin = None  # traced: the node count where recording (re)started, while it records

    def _mode(self):
        """The graph this tape works in, or None for eager (fixed on first use)."""
        if self._graph is None and self._eager is None:
            g = _trace.graph() if _trace.active else None
            if g is not None:
                self._graph = g.check_open()
            else:
                from ._tape import EagerTape
                self._eager = EagerTape(self._persistent, self._watch_variables)
        return self._graph

    def __enter__(self):
        if self._mode() is None:
            self._eager.enter()
        else:
            if self._begin is not None:
                raise RuntimeError("GradientTape: this tape is already recording (a tape cannot "
                                   "be entered again inside its own `with` block)")
            self._begin = self._graph.check_open()._g.count()
        return self

    def __exit__(self, *exc):
        if self._eager is not None:
            self._eager.exit()
        elif self._begin is not None:
            self._pause()
        return False

    def _pause(self):
        """Traced: closes the stretch being recorded."""
        self._ranges.append((self._begin, self._graph._g.count()))
        self._begin = None

    def _recorded(self):
        """Traced: the stretches recorded so far, the open one included."""
        if self._begin is None:
            return list(self._ranges)
        return self._ranges + [(self._begin, self._graph._g.count())]

    def stop_recording(self):
        """`with tape.stop_recording():` the ops in the block are not recorded (their paths
        carry no gradient)."""
        if self._mode() is None:
            return self._eager.stop_recording()
        return _TracedStop(self)

    def reset(self):
        """Clears what the tape recorded and watched; it goes on recording if inside its
        `with` block."""
        if self._mode() is None:
            self._eager.reset()
        else:
            self._watched.clear()
            self._used = False
            self._ranges = []
            if self._begin is not None:
                self._begin = self._graph._g.count()

    def watched_variables(self):
        """The Variables the tape watches: given to watch(), or trainable and read while it
        recorded (with watch_accessed_variables; inside a trace: read by a node it recorded)."""
        if self._mode() is None:
            return self._eager.watched_variables()
        out = [t for t in self._watched.values() if getattr(t, "_ndx_variable", False)]
        if self._watch_variables:
            g, ranges = self._graph, self._recorded()
            read = {i[0] for b, e in ranges for n in range(b + 1, e + 1) for i in g._g.node(n)[4]}
            out += [v for v, t in g._variables.items()
                    if v.trainable and t.op in read and id(v) not in self._watched]
        return tuple(out)

    def watch(self, tensor):
        """Records gradients for tensor (a Tensor, array, Variable, or a structure of them).
        An integer or bool value is not watched (a warning says so, as TensorFlow's log does):
        gradients are for floating and complex values."""
        items = []
        _flatten(tensor, items)
        g = self._mode()
        if g is None:
            return self._eager.watch(items)
        for t in items:
            if getattr(t, "_ndx_variable", False):
                if _not_differentiable(t.dtype, "watch", 2):
                    continue
                self._watched[id(t)] = t
            else:
                t = _source(g, t)
                if _not_differentiable(t.dtype, "watch", 2):
                    continue
                self._watched[t.output] = t

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """The gradients of target (a value or structure: their sum, each weighted by its
        output_gradients, ones by default) for each of sources, in their structure."""
        if unconnected_gradients not in ("none", "zero"):
            raise ValueError("unconnected_gradients must be \"none\" or \"zero\"")
        leaves = []
        structure = _flatten(sources, leaves)
        targets = []
        _flatten(target, targets)
        if output_gradients is not None:
            given, output_gradients = output_gradients, []
            _flatten(given, output_gradients)
        integer = []
        for s in leaves:
            integer.append(_not_differentiable(_dtype_of_source(s), "gradient", 2))
        if self._mode() is None:
            out = self._eager.gradient(targets, leaves, output_gradients,
                                       unconnected_gradients == "zero")
            out = [None if bad and unconnected_gradients == "none" else d
                   for d, bad in zip(out, integer)]
            return _unflatten(structure, iter(out))
        if self._used and not self._persistent:
            raise RuntimeError("GradientTape.gradient can only be called once on a "
                               "non-persistent tape (use GradientTape(persistent=True))")
        g = self._graph.check_open()
        self._used = True
        watched = []
        on_tape = None
        for s, bad in zip(leaves, integer):
            if getattr(s, "_ndx_variable", False):
                ok = id(s) in self._watched or (self._watch_variables and s.trainable)
            elif isinstance(s, Tensor):
                ok = s.output in self._watched
                if not ok and not bad:  # (an intermediate result the tape recorded)
                    on_tape = on_tape or self._on_tape(g)
                    ok = on_tape(s.op)
            else:
                raise TypeError(f"GradientTape.gradient: a source must be a Tensor or an "
                                f"ndx.Variable, not {type(s).__name__}")
            watched.append(ok and not bad)
        xs = [_source(g, s) for s, ok in zip(leaves, watched) if ok]
        begin = g._g.count()  # (a target that is an IndexedSlices is densified here: recorded)
        targets = [g.convert(y) if isinstance(y, IndexedSlices) else y for y in targets]
        ranges = self._recorded() + [(begin, g._g.count())]
        grads = _gradients(g, targets, xs, output_gradients, ranges) if xs else []
        it = iter(grads)
        out = [next(it) if ok else None for ok in watched]
        if unconnected_gradients == "zero":
            from ._glue import zeros_like
            out = [zeros_like(_source(g, s)) if d is None else d for s, d in zip(leaves, out)]
        return _unflatten(structure, iter(out))


    def _on_tape(self, g):
        """Traced: whether a node's outputs are on the tape (TensorFlow records an op run while
        it records when one of its inputs is watched, or is on the tape): a function of node
        ids, memoized."""
        ranges = self._recorded()
        starts = {out for out in self._watched if isinstance(out, tuple)}
        for v, t in g._variables.items():
            if id(v) in self._watched or (self._watch_variables and v.trainable):
                starts.add(t.output)
        memo = {}

        def on(node):
            stack = [node]
            while stack:
                n = stack[-1]
                if n in memo:
                    stack.pop()
                    continue
                if not any(b < n <= e for b, e in ranges):
                    memo[n] = False
                    stack.pop()
                    continue
                inputs = g._g.node(n)[4]
                pending = [i for i, k in inputs if i not in memo and (i, k) not in starts]
                if pending:
                    stack.extend(pending)
                    continue
                memo[n] = any(inp in starts or memo.get(inp[0], False) for inp in inputs)
                stack.pop()
            return memo[node]
        return on


class _TracedStop:
    """`with tape.stop_recording():` inside a trace: the nodes built in it are not recorded."""

    def __init__(self, tape):
        self._tape = tape

    def __enter__(self):
        if self._tape._begin is None:
            raise ValueError("GradientTape.stop_recording: the tape is not recording (call it "
                             "inside the tape's `with` block)")
        self._tape._pause()

    def __exit__(self, *exc):
        self._tape._begin = self._tape._graph._g.count()
        return False


def _dtype_of_source(s):
    """A source's dtype (None for what is not a tensor: the mode's own check names it)."""
    if getattr(s, "_ndx_variable", False) or isinstance(s, Tensor):
        return s.dtype
    if isinstance(s, (np.ndarray, np.generic, BFloat16Array)):
        return dtype_of(s)
    return None


def _not_differentiable(dtype, what, stacklevel):
    """Whether dtype has no gradients (integer, bool, string); warns, as TensorFlow's log, in
    the same words eagerly and inside a trace."""
    if dtype is None or dtype.is_floating or dtype.is_complex:
        return False
    if what == "watch":
        warnings.warn(f"GradientTape.watch: a {dtype.name} value is not watched; only floating "
                      f"and complex values have gradients", stacklevel=stacklevel + 1)
    else:
        warnings.warn(f"GradientTape.gradient: a {dtype.name} source has no gradient (None); "
                      f"only floating and complex values have gradients",
                      stacklevel=stacklevel + 1)
    return True
