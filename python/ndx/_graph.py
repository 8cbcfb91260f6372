"""Graphs from Python: dtypes, TensorSpec, the symbolic Tensor and the Graph it lives in.

Design (what ndx.function, gradients and variables build on):
  * Graph wraps one C graph (`Graph._g`, an ndx._ndx._Graph owning an ndx_graph). Nodes are
    added only through `Graph.placeholder`, `Graph.constant` and `Graph.op(type, inputs,
    attrs, name)`, the last over the C library's generic builder ndx_op_by_type: `type` is
    TensorFlow's op type as in the text form ("GatherNd"), `attrs` a dict of the text form's
    attribute names to ints (dtypes as DType, policies as "error"/"ignore"). Each build passes
    the user's file:line (the first stack frame outside the ndx package), so a shape or dtype
    error raises InvalidArgumentError naming the node and that line, at trace time.
  * Tensor is one output of a node: `graph` (its Graph), `op` (the node's id, ndx_operation.id),
    `index` (the output), `dtype` (a DType) and `shape` (the inferred partial shape: a tuple of
    ints and None, or None for an unknown rank). `tensor.output` is (op, index), the C handle
    {{graph, op}, index} that _ndx._Graph's methods take. A Tensor is usable only while its
    graph's trace runs in the thread that traces it (Graph.check_open); anything else is a
    clear error, not a crash.
  * A Graph being traced is `_trace.graph()`; the public ops (ndx.gather_nd, ndx.add, ...) see
    it and call the builders of this module instead of running. Graph.finish() freezes the
    graph; sessions (_ndx._Session) run it (ndx/_function.py).
"""
import operator
import os
import re
import shutil
import subprocess
import sys

import numpy as np

from . import _kinds, _ndx, _trace
from ._convert import BFloat16Array, _as_array, bfloat16
from ._ref import IdentityDict, IdentitySet, Reference, unhashable
from ._sparse_tensor import SparseTensor

__all__ = ["DType", "TensorSpec", "SparseTensorSpec", "Tensor", "Graph", "Node"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class DType:
    """An ndx dtype (TensorFlow's tf.DType): `name`, `as_numpy_dtype` (None for bfloat16, whose
    arrays are ndx.BFloat16Array; numpy.bytes_ for string)."""

    __slots__ = ("name", "code", "_np")

    def __init__(self, name, code, np_dtype):
        self.name, self.code, self._np = name, code, np_dtype

    @property
    def as_numpy_dtype(self):
        return self._np.type if self._np is not None else None

    @property
    def is_integer(self):
        return self._np is not None and self._np.kind in "iu"

    @property
    def is_floating(self):
        return self.name == "bfloat16" or (self._np is not None and self._np.kind == "f")

    @property
    def is_complex(self):
        return self._np is not None and self._np.kind == "c"

    @property
    def is_bool(self):
        return self.name == "bool"

    def __repr__(self):
        return f"ndx.{self.name}"

    def __reduce__(self):
        return (as_dtype, (self.name,))


# In the order of ndx_dtype (include/ndx.h).
_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "string"]
DTYPES = tuple(DType(n, i, None if n == "bfloat16" else np.dtype("S") if n == "string" else
                     np.dtype(n)) for i, n in enumerate(_NAMES))
_BY_NAME = {d.name: d for d in DTYPES}


_CACHE = {}  # (NumPy dtypes and names seen: as_dtype runs on every eager glue call)


def as_dtype(value):
    """A DType from a DType, its name, a NumPy dtype or type, or "bfloat16"."""
    if isinstance(value, DType):
        return value
    try:
        return _CACHE[value]
    except (KeyError, TypeError):
        pass
    d = _as_dtype(value)
    try:
        if len(_CACHE) < 4096:
            _CACHE[value] = d
    except TypeError:
        pass
    return d


def _as_dtype(value):
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if value is BFloat16Array or value is bfloat16:  # (ndx.bfloat16, the function, too)
        return _BY_NAME["bfloat16"]
    try:
        d = np.dtype(value)
    except TypeError:
        raise TypeError(f"{value!r} is not a dtype") from None
    if d.kind in "SU":
        return _BY_NAME["string"]
    if d.kind == "b":
        return _BY_NAME["bool"]
    name = d.name
    if name not in _BY_NAME:
        raise TypeError(f"ndx has no dtype {d}")
    return _BY_NAME[name]


def dtype_of(value):
    """The DType of an ndarray (or BFloat16Array, NumPy scalar)."""
    if isinstance(value, BFloat16Array):
        return _BY_NAME["bfloat16"]
    return as_dtype(value.dtype)


def _like(dtype):
    """What ndx's converters take as the dtype lists and scalars become."""
    return "bfloat16" if dtype.name == "bfloat16" else dtype._np


class TensorSpec:
    """The dtype and partial shape of a tensor (TensorFlow's tf.TensorSpec): `shape` a list of
    ints and None (an unknown dim), or None for an unknown rank; `dtype` a DType (default
    float32); `name` the placeholder's name, or None for the argument's."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=None, name=None):
        if shape is not None:
            shape = tuple(None if d is None else int(d) for d in shape)
            if any(d is not None and d < 0 for d in shape):
                raise ValueError(f"TensorSpec: dims must be >= 0 or None, not {shape}")
        self.shape = shape
        self.dtype = as_dtype("float32" if dtype is None else dtype)
        self.name = name

    @classmethod
    def from_value(cls, value, name=None):
        return cls(np.shape(value.bits if isinstance(value, BFloat16Array) else value),
                   dtype_of(value), name)

    def _key(self):
        """What a trace's cache key holds of this spec."""
        return (self.dtype.name, self.shape)

    def is_compatible_with(self, value):
        """Whether an array (or spec) fits: the same dtype, and the same dims where known."""
        other = value if isinstance(value, TensorSpec) else TensorSpec.from_value(value)
        return other.dtype is self.dtype and _shapes_agree(self.shape, other.shape)

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape and
                self.dtype is other.dtype and self.name == other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype.name, self.name))

    def __repr__(self):
        return f"TensorSpec(shape={_shape_text(self.shape)}, dtype={self.dtype!r}, name={self.name!r})"


class SparseTensorSpec:
    """The spec of an ndx.SparseTensor argument (TensorFlow's tf.SparseTensorSpec): its dense
    `shape` (ints and None; its length, the rank, must be known) and the values' `dtype`. It
    stands for three placeholders: indices int64 [?, rank], values dtype [?], dense_shape int64
    [rank]."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype=None):
        if shape is None:
            raise ValueError("SparseTensorSpec: the rank (len(shape)) must be known")
        self.shape = TensorSpec(shape).shape
        self.dtype = as_dtype("float32" if dtype is None else dtype)

    def parts(self, name=None):
        """The three TensorSpecs: indices, values, dense_shape."""
        rank = len(self.shape)
        i64 = as_dtype("int64")
        return (TensorSpec([None, rank], i64, name and name + "_indices"),
                TensorSpec([None], self.dtype, name and name + "_values"),
                TensorSpec([rank], i64, name and name + "_dense_shape"))

    def __repr__(self):
        return f"SparseTensorSpec(shape={_shape_text(self.shape)}, dtype={self.dtype!r})"


def _shapes_agree(a, b):
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _shape_text(shape):
    if shape is None:
        return "[*]"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _user_frame():
    """(file, line) of the innermost frame outside the ndx package: where the user called."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
        f = f.f_back
    if f is None:
        return "<ndx>", 0
    return f.f_code.co_filename, f.f_lineno


_POLICIES = {None: 0, "error": 0, "ignore": 1}


def _policy(value, alias):
    """A bad_indices keyword as the graph attribute's int; `alias` is the kind's own word for
    "ignore" (the registry's, ndx/_kinds.py)."""
    if alias is not None and value == alias:
        return 1
    try:
        return _POLICIES[value]
    except (KeyError, TypeError):
        words = f"\"error\", \"ignore\" or \"{alias}\"" if alias else "\"error\" or \"ignore\""
        raise _ndx.InvalidArgumentError(f"bad_indices must be {words}, not {value!r}") from None


class Tensor:
    """A symbolic tensor: output `index` of node `op` of `graph`, with the dtype and partial
    shape the graph inferred. It has no value: ndx.function's call computes one. Operators
    build nodes as TensorFlow 2's do: + - * / // %, unary -, abs(); == and != elementwise
    (tf.equal, tf.not_equal; None gives False / True, shapes that cannot broadcast a scalar
    False / True); < <= > >= (tf.less ...); & | ^ ~ on bool tensors (the logical ops); an
    integer index (x[i]). As in TensorFlow 2 a Tensor is unhashable: key dicts and sets by
    x.ref()."""

    __slots__ = ("graph", "op", "index", "dtype", "shape", "__weakref__")
    __array_ufunc__ = None  # NumPy defers: np.float32(2) * x calls x.__rmul__

    def __init__(self, graph, op, index, dtype, shape):
        self.graph, self.op, self.index, self.dtype, self.shape = graph, op, index, dtype, shape

    @property
    def output(self):
        """(node id, output index): the C handle of this output in graph._g."""
        return (self.op, self.index)

    @property
    def name(self):
        """"node:index", as TensorFlow names tensors."""
        return f"{self.graph._g.node(self.op)[0]}:{self.index}"

    @property
    def node(self):
        """The Node this tensor is an output of."""
        return self.graph.node(self.op)

    @property
    def ndim(self):
        return None if self.shape is None else len(self.shape)

    def __repr__(self):
        return f"<ndx.Tensor '{self.name}' shape={_shape_text(self.shape)} dtype={self.dtype.name}>"

    # Operators: the public glue ops, which build in this tensor's graph.
    def __add__(self, other):
        return _glue().add(self, other)

    def __radd__(self, other):
        return _glue().add(other, self)

    def __sub__(self, other):
        return _glue().subtract(self, other)

    def __rsub__(self, other):
        return _glue().subtract(other, self)

    def __mul__(self, other):
        return _glue().multiply(self, other)

    def __rmul__(self, other):
        return _glue().multiply(other, self)

    def __truediv__(self, other):
        return _glue().divide(self, other)

    def __rtruediv__(self, other):
        return _glue().divide(other, self)

    def __floordiv__(self, other):
        return _glue().floordiv(self, other)

    def __rfloordiv__(self, other):
        return _glue().floordiv(other, self)

    def __mod__(self, other):
        return _glue().floormod(self, other)

    def __rmod__(self, other):
        return _glue().floormod(other, self)

    def __neg__(self):
        return _glue().negative(self)

    def __abs__(self):
        return _glue().abs(self)

    def __eq__(self, other):
        return _glue().tensor_equals(self, other)

    def __ne__(self, other):
        return _glue().tensor_equals(self, other, negate=True)

    def __lt__(self, other):
        return _glue().less(self, other)

    def __le__(self, other):
        return _glue().less_equal(self, other)

    def __gt__(self, other):
        return _glue().greater(self, other)

    def __ge__(self, other):
        return _glue().greater_equal(self, other)

    def __and__(self, other):
        return _glue().bool_operator("&", self, other)

    def __rand__(self, other):
        return _glue().bool_operator("&", other, self)

    def __or__(self, other):
        return _glue().bool_operator("|", self, other)

    def __ror__(self, other):
        return _glue().bool_operator("|", other, self)

    def __xor__(self, other):
        return _glue().bool_operator("^", self, other)

    def __rxor__(self, other):
        return _glue().bool_operator("^", other, self)

    def __invert__(self):
        return _glue().bool_operator("~", self)

    __hash__ = unhashable("Tensor", "tensor")

    def ref(self):
        """A hashable reference to this tensor (TensorFlow's Tensor.ref()): equal for the same
        tensor, usable as a dict key; deref() gives the tensor back."""
        return Reference(self)

    def __getitem__(self, key):
        return self.graph.check_open().index(self, key)

    def __iter__(self):
        raise TypeError(f"{self!r} is symbolic: it cannot be iterated over while tracing "
                        f"(index it with an int, or use the ops)")

    def __bool__(self):
        raise TypeError(f"{self!r} is symbolic: it has no truth value while tracing "
                        f"(Python control flow cannot depend on it)")

    def __len__(self):
        raise TypeError(f"{self!r} is symbolic: use ndx.shape(x)[0] or ndx.size(x)")

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"{self!r} is a symbolic tensor of a traced function's graph; it has "
                        f"no value (it cannot be used outside its function, or as a NumPy "
                        f"array)")


def _glue():
    from . import _glue as glue  # (the glue ops import this module)
    return glue


class Node:
    """One node of a graph: `name`, `type` (TensorFlow's op type), `inputs` (tensor names
    "node:k"), `outputs` (a TensorSpec per output, as inferred), `file` and `line` (where it
    was built), `known` (its value is known at build time: a constant or a folded node)."""

    __slots__ = ("id", "name", "type", "inputs", "outputs", "file", "line", "known")

    def __init__(self, graph, node_id):
        name, type_, file, line, inputs, specs, known = graph._g.node(node_id)
        self.id, self.name, self.type, self.file, self.line, self.known = (
            node_id, name, type_, file, line, known)
        self.inputs = [f"{graph._g.node(i)[0]}:{k}" for i, k in inputs]
        self.outputs = [TensorSpec(s, DTYPES[d]) for d, s, _ in specs]

    def __repr__(self):
        specs = ", ".join(f"{s.dtype.name}{_shape_text(s.shape)}" for s in self.outputs)
        return f"<ndx.Node {self.name} = {self.type}({', '.join(self.inputs)}) : {specs}>"


class Graph:
    """A graph of ndx ops (a traced function's, or one loaded from a file).

    `nodes` lists its Node objects in build order; str(graph) is its text form (what save
    writes, what `ndx run` and ndx_graph_load read); to_dot() its Graphviz drawing."""

    def __init__(self, name="graph", _g=None):
        self.name = name
        self._g = _ndx._Graph() if _g is None else _g
        self._open = _g is None
        # Nodes every call runs without fetching anything from them (updates of variables, say:
        # TensorFlow's control outputs); ids, added with add_target during the trace.
        self.targets = []
        # Variable -> its Variable node's Tensor (ndx/_variables.py); Variables are keys by
        # identity (their == is elementwise).
        self._variables = IdentityDict()
        self._updated = IdentitySet()  # the Variables the targets update
        # updated Variable -> its read after the last update (None: none yet)
        self._reads = IdentityDict()

    # ---- building -----------------------------------------------------------------------

    def check_open(self):
        """self, when nodes may be added to it from this thread (its trace is running)."""
        if not self._open or _trace.graph() is not self:
            raise _ndx.InvalidArgumentError(
                f"a tensor of the graph of {self.name!r} is used outside the trace of that "
                f"function; a symbolic tensor lives only while its function is traced (return "
                f"it from the function to get its value)")
        return self

    def _tensors(self, node_id, count):
        out = []
        for k in range(count):
            d, shape, _ = self._g.spec(node_id, k)
            out.append(Tensor(self, node_id, k, DTYPES[d], shape))
        return out

    def _name(self, name):
        """A name for the next node: `name` if free, else name_1, name_2, ... (TensorFlow's)."""
        if name is None:
            return None
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        base, k = name, 0
        while self._g.find(name):
            k += 1
            name = f"{base}_{k}"
        return name

    def placeholder(self, dtype, shape=None, name=None):
        """A Placeholder of this dtype and partial shape (a function's input)."""
        dtype = as_dtype(dtype)
        file, line = _user_frame()
        node = self._g.placeholder(self._name(name), dtype.code,
                                   None if shape is None else tuple(shape), 0, file, line)
        return self._tensors(node, 1)[0]

    def constant(self, value, dtype=None, name=None):
        """A Const of `value` (converted as the eager ops convert, to `dtype` when given)."""
        if isinstance(value, Tensor):
            raise TypeError(f"constant: {value!r} is symbolic, not a value")
        if dtype is not None:
            value = _convert_to(value, as_dtype(dtype))
        elif not isinstance(value, (np.ndarray, BFloat16Array)):
            value = _as_array(value)
        file, line = _user_frame()
        return self._tensors(self._g.const(value, self._name(name), file, line), 1)[0]

    def op(self, type, inputs, attrs=None, name=None):
        """Adds a node of TensorFlow op `type` with these input Tensors (of this graph) and
        attributes (text-form names: ints, bools, DTypes, "error"/"ignore"); returns its
        outputs, a list of Tensor."""
        self.check_open()
        handles = []
        for t in inputs:
            if not isinstance(t, Tensor):
                raise TypeError(f"{type}: inputs must be ndx Tensors, not {t.__class__.__name__}")
            if t.graph is not self:
                raise _ndx.InvalidArgumentError(
                    f"{type}: input {t.name} comes from another function's graph "
                    f"({t.graph.name!r}); pass it as an argument instead")
            handles.append((t.op, t.index))
        pairs = []
        schema = _kinds.attrs_of(type)
        for key, value in (attrs or {}).items():
            if isinstance(value, DType):
                value = value.code
            elif (isinstance(value, str) or value is None) and \
                    schema.get(key, {}).get("type") == "policy":
                if value not in _POLICIES:
                    raise _ndx.InvalidArgumentError(
                        f"{type}: {key} must be \"error\" or \"ignore\", not {value!r}")
                value = _POLICIES[value]
            else:
                try:  # ints, bools and NumPy integers only: int() would take None, 1.5, "0"
                    value = operator.index(bool(value) if isinstance(value, np.bool_) else value)
                except TypeError:
                    raise TypeError(f"{type}: attribute {key} must be an int, a bool or a DType, "
                                    f"not {value!r}") from None
            pairs.append((key, value))
        file, line = _user_frame()
        node, count = self._g.op(type, handles, pairs, self._name(name), file, line)
        return self._tensors(node, count)

    def add_target(self, node):
        """Makes every call of this graph's function run `node` (a node id, or a Tensor's
        node), as TensorFlow runs a function's stateful ops, without fetching it."""
        self.check_open()
        self.targets.append(node.op if isinstance(node, Tensor) else int(node))

    def convert(self, value, dtype=None):
        """`value` as a Tensor of this graph: a Tensor of it as is, anything else a constant
        (Python values take `dtype` when given, else TensorFlow's defaults; a Variable is read,
        an IndexedSlices densified)."""
        if hasattr(type(value), "_ndx_tensor"):
            value = value._ndx_tensor(self)
        if isinstance(value, Tensor):
            if value.graph is not self:
                raise _ndx.InvalidArgumentError(
                    f"{value.name} comes from another function's graph ({value.graph.name!r}); "
                    f"pass it as an argument instead")
            return value
        if dtype is not None and not isinstance(value, (np.ndarray, np.generic, BFloat16Array)):
            return self.constant(_convert_to(value, dtype))
        return self.constant(value)

    def index(self, x, key):
        """x[key] for an integer key: a GatherNd of row key (negative counts from the end)."""
        if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer)):
            raise TypeError(f"a symbolic tensor takes an integer index only, not {key!r}")
        key = int(key)
        if x.shape is not None and len(x.shape) == 0:
            raise _ndx.InvalidArgumentError(f"{x.name} is a scalar: it cannot be indexed")
        dim = None if x.shape is None else x.shape[0]
        if dim is not None:
            if not -dim <= key < dim:
                raise _ndx.InvalidArgumentError(
                    f"index {key} is out of range for {x.name} of {dim} rows")
            key = key + dim if key < 0 else key
        if key >= 0:
            return self.op("GatherNd", [x, self.constant(np.array([key], np.int32))])[0]
        glue = _glue()
        rows = glue.shape(x)
        rows = self.op("GatherNd", [rows, self.constant(np.array([0], np.int32))])[0]
        where = glue.reshape(glue.add(rows, key), np.array([1], np.int32))
        return self.op("GatherNd", [x, where])[0]

    def finish(self):
        """Freezes the graph (no more nodes); raises its first build error if it has one."""
        self._open = False
        self._g.finish()

    # ---- inspecting ---------------------------------------------------------------------

    def node(self, node_id):
        return Node(self, node_id)

    @property
    def nodes(self):
        """Every Node, in build order."""
        return [Node(self, i) for i in range(1, self._g.count() + 1)]

    def get_tensor(self, name):
        """The Tensor named "node" or "node:k"."""
        node, _, k = name.partition(":")
        node_id = self._g.find(node)
        if not node_id:
            raise KeyError(f"no node named {node!r} in this graph")
        index = int(k) if k else 0
        _, _, _, _, _, specs, _ = self._g.node(node_id)
        if not 0 <= index < len(specs):
            raise KeyError(f"node {node!r} has no output {index}")
        return self._tensors(node_id, len(specs))[index]

    def to_text(self):
        """The text form (section 6 of ndx_graph.h)."""
        return self._g.to_text()

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        return f"<ndx.Graph {self.name!r} of {self._g.count()} nodes>"

    def save(self, path):
        """Writes the text form at `path` (+ PATH.npz, or .npz beside a .txt, for constants of
        more than 64 elements), as ndx_graph_save; `ndx run` and ndx_graph_load read it."""
        self._g.save(os.fspath(path))

    def to_dot(self):
        """The graph in Graphviz's DOT language, as `ndx graph dot` draws it: a box per node
        with its name, op and output specs (placeholders rounded, constants dashed), an edge
        per input labelled with its spec."""
        def q(s):
            return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

        def spec(raw):
            dtype, shape, itemsize = raw
            name = DTYPES[dtype].name
            if name == "string" and itemsize:
                name = f"string({itemsize})"
            return f"{name}{_shape_text(shape)}"

        lines = ["digraph ndx {", "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']
        raw = [self._g.node(i) for i in range(1, self._g.count() + 1)]
        for name, type_, _, _, inputs, specs, known in raw:
            label = "\n".join([name, type_] + [spec(x) for x in specs])
            style = (", style=rounded" if type_ == "Placeholder" else
                     ", style=dashed" if known else "")
            lines.append(f"  {q(name)} [label={q(label)}{style}];")
            for src, k in inputs:
                src_name, src_specs = raw[src - 1][0], raw[src - 1][5]
                lines.append(f"  {q(src_name)} -> {q(name)} [label={q(spec(src_specs[k]))}];")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _repr_svg_(self):
        """An SVG drawing (for Jupyter) when Graphviz's dot is on PATH, else None."""
        dot = shutil.which("dot")
        if dot is None:
            return None
        done = subprocess.run([dot, "-Tsvg"], input=self.to_dot().encode(), capture_output=True,
                              timeout=60)
        return done.stdout.decode() if done.returncode == 0 else None


def _convert_to(value, dtype):
    """A Python or NumPy value as an array of `dtype` (TensorFlow's conversion: Python values
    must fit; arrays are cast)."""
    if isinstance(value, (np.ndarray, np.generic)):
        if dtype.name == "bfloat16":
            return BFloat16Array(value)
        return np.asarray(value).astype(dtype._np, copy=False)
    if isinstance(value, BFloat16Array):
        return value if dtype.name == "bfloat16" else np.asarray(value).astype(dtype._np)
    return _as_array(value, _like(dtype))


_NAME_RE = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_.-]*\Z")


def valid_name(name):
    """Whether `name` is a node name TensorFlow (and ndx) accepts."""
    return bool(_NAME_RE.match(name))


def is_symbolic(value):
    return isinstance(value, Tensor) or (isinstance(value, SparseTensor) and
                                         isinstance(value.values, Tensor))
