"""Tests of ndx.function and graphs from Python: the replace -1 entries program traced into one
graph (and its text, the same as the C program's), every op and glue builder traced against the
eager op and NumPy, retracing, structured results, inspection, save/load and `ndx run`, errors at
trace time naming the caller's line, and hostile use (a trace that raises, wrong inputs, tensors
outside their function, nested functions, calls from many threads while another mutates the
input)."""
import os
import shutil
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REPLACE_MINUS_ONE_TXT = os.path.join(ROOT, "examples", "graphs", "replace_minus_one.txt")
THIS = os.path.basename(__file__)


def replace_minus_one_reference(x):
    """The replace -1 entries program's result by NumPy: every entry but -1 plus 1."""
    return np.where(x != -1, x + 1, x).astype(x.dtype)


@ndx.function(input_signature=[ndx.TensorSpec([None], ndx.float32)])
def replace_minus_one(x):
    # The program as tf.dynamic_stitch's page writes it, with tf replaced by ndx.
    condition_mask = ndx.not_equal(x, ndx.constant(-1.))
    partitioned_data = ndx.dynamic_partition(
        x, ndx.cast(condition_mask, ndx.int32), 2)
    partitioned_data[1] = partitioned_data[1] + 1.0
    condition_indices = ndx.dynamic_partition(
        ndx.range(ndx.shape(x)[0]), ndx.cast(condition_mask, ndx.int32), 2)
    x = ndx.dynamic_stitch(condition_indices, partitioned_data)
    return x


def test_replace_minus_one_runs_as_one_graph():
    x = np.array([0.1, -1., 5.2, 4.3, -1., 7.4], np.float32)
    np.testing.assert_array_equal(replace_minus_one(x), replace_minus_one_reference(x))
    rng = np.random.default_rng(3)
    for n in (0, 1, 7, 1000):
        x = np.where(rng.random(n) < 0.3, -1, rng.normal(size=n)).astype(np.float32)
        np.testing.assert_array_equal(replace_minus_one(x), replace_minus_one_reference(x))
    assert replace_minus_one.experimental_get_tracing_count() == 1  # one signature, one trace
    types = [n.type for n in replace_minus_one.graph.nodes]
    assert types.count("DynamicPartition") == 2 and types[-1] == "DynamicStitch"
    first = replace_minus_one.graph.nodes[0]
    assert first.name == "x" and first.type == "Placeholder"


@ndx.function(input_signature=[ndx.TensorSpec([None], ndx.float32)])
def replace_minus_one_as_in_c(x):
    # examples/graph_replace_minus_one.c line by line: the same nodes, in the same order, the same names.
    minus_one = ndx.constant(-1.0)
    mask = ndx.cast(ndx.not_equal(x, minus_one), ndx.int32)
    data = ndx.dynamic_partition(x, mask, 2)
    data[1] = data[1] + 1.0
    zero, one = ndx.constant(0), ndx.constant(1)
    where = ndx.range(zero, ndx.size(x), one)
    positions = ndx.dynamic_partition(where, mask, 2)
    return ndx.dynamic_stitch(positions, data, name="y")


def test_saved_text_is_the_c_programs():
    # examples/graphs/replace_minus_one.txt is the text of examples/graph_replace_minus_one.c's
    # graph (tests/graph/build/test_graph_by_type.c checks that); the graph traced from Python is
    # the same text.
    with open(REPLACE_MINUS_ONE_TXT) as f:
        assert replace_minus_one_as_in_c.graph.to_text() == f.read()


def test_save_load_and_ndx_run(tmp_path):
    path = tmp_path / "replace_minus_one.txt"
    replace_minus_one.save(path)
    with open(path) as f:
        assert f.read() == str(replace_minus_one.graph)
    loaded = ndx.load(path)
    assert loaded.feeds == ["x"] and loaded.default_fetches == ["DynamicStitch"]
    x = np.array([3., -1., 0.5], np.float32)
    np.testing.assert_array_equal(loaded(x=x), replace_minus_one_reference(x))
    both = loaded(x=x, fetches=["DynamicStitch", "DynamicPartition:1"])
    np.testing.assert_array_equal(both["DynamicPartition:1"], [3., 0.5])
    np.testing.assert_array_equal(loaded(fetches="Cast", x=x), [1, 0, 1])
    with pytest.raises(TypeError, match="no placeholder 'y'"):
        loaded(y=x)
    with pytest.raises(KeyError):
        loaded(x=x, fetches="nowhere")
    cli = os.path.join(ROOT, "build", "ndx")
    if not os.path.exists(cli):
        pytest.skip("build/ndx is not built (scripts/test.sh builds it before pytest)")
    np.save(tmp_path / "x.npy", x)
    subprocess.run([cli, "run", str(path), "--feed", f"x={tmp_path / 'x.npy'}", "--fetch",
                    f"DynamicStitch={tmp_path / 'y.npy'}"], check=True, capture_output=True)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), replace_minus_one_reference(x))


def test_large_constants_go_to_npz(tmp_path):
    table = np.arange(1000, dtype=np.float64).reshape(100, 10)

    @ndx.function
    def lookup(ids):
        return ndx.gather_nd(table, ids)

    ids = np.array([[3], [97]], np.int64)
    np.testing.assert_array_equal(lookup(ids), table[[3, 97]])
    path = tmp_path / "lookup.txt"
    lookup.save(path)
    assert (tmp_path / "lookup.npz").exists()
    np.testing.assert_array_equal(ndx.load(path)(ids=ids), table[[3, 97]])


# ---- every op traced against the eager op -----------------------------------------------------

def traced(fn, *args):
    """fn's result through a graph: every array argument is a placeholder."""
    return ndx.function(fn)(*args)


P = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
I = np.array([[1, 2], [3, 0], [0, 1]], np.int64)

INDEX_CASES = {
    "gather_nd": (lambda p, i: ndx.gather_nd(p, i), (P, I)),
    "gather_nd_batch": (lambda p, i: ndx.gather_nd(p, i, batch_dims=1),
                        (P, np.array([[[1]], [[0]], [[2]], [[1]]], np.int32))),
    "gather_nd_ignore": (lambda p, i: ndx.gather_nd(p, i, bad_indices="ignore"),
                         (P, np.array([[9, 0], [1, 1]], np.int32))),
    "scatter_nd": (lambda i, u: ndx.scatter_nd(i, u, [5, 2]),
                   (np.array([[4], [1], [4]], np.int32), np.ones((3, 2), np.int64))),
    "dynamic_stitch": (lambda a, b, d0, d1: ndx.dynamic_stitch([a, b], [d0, d1]),
                       (np.array([0, 2]), np.array([1, 2]), np.array([1., 2.]),
                        np.array([3., 4.]))),
    "parallel_dynamic_stitch": (
        lambda a, b, d0, d1: ndx.parallel_dynamic_stitch([a, b], [d0, d1]),
        (np.array([0, 2]), np.array([1, 3]), np.array([1, 2]), np.array([3, 4]))),
    "dynamic_partition": (lambda d, p: ndx.dynamic_partition(d, p, 3),
                          (np.arange(6.), np.array([2, 0, 2, 1, 0, 2], np.int32))),
}
for op in ("update", "add", "sub", "min", "max"):
    INDEX_CASES["tensor_scatter_nd_" + op] = (
        (lambda name: lambda t, i, u: getattr(ndx, name)(t, i, u))("tensor_scatter_nd_" + op),
        (np.full((4, 2), 5, np.int32), np.array([[3], [0], [3]]),
         np.array([[1, 9], [7, 7], [2, 2]], np.int32)))


@pytest.mark.parametrize("name", sorted(INDEX_CASES))
def test_index_ops_traced_equal_eager(name):
    fn, args = INDEX_CASES[name]
    want, got = fn(*args), traced(fn, *args)
    if isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype
    else:
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


def sparse_parts(sp):
    return sp.indices.tolist(), np.asarray(sp.values).tolist(), sp.dense_shape.tolist()


def test_sparse_ops_traced_equal_eager():
    a = ndx.SparseTensor([[0, 1], [1, 0]], np.array([1., 2.], np.float32), [2, 3])
    b = ndx.SparseTensor([[1, 1], [0, 0]], np.array([3., 4.], np.float32), [2, 2])
    dense = np.array([[0, 5], [6, 0]], np.int64)

    def program(a, b, dense):
        cat = ndx.sparse.concat(1, [a, b])
        return (cat, ndx.sparse.reorder(b), ndx.sparse.to_dense(a, -1.0),
                ndx.sparse.from_dense(dense), ndx.sparse.to_dense(cat))

    got, want = traced(program, a, b, dense), program(a, b, dense)
    for g, w in zip(got, want):
        if isinstance(w, ndx.SparseTensor):
            assert isinstance(g, ndx.SparseTensor)
            assert sparse_parts(g) == sparse_parts(w)
        else:
            np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(want[2], [[-1, 1, -1], [2, -1, -1]])  # (NumPy by hand)


# ---- glue, eager and traced, against NumPy ------------------------------------------------------

X = np.array([7, -7, 3, -1, 0, 9], np.int32)
F = np.array([1.5, -2.0, np.nan, 0.25], np.float32)
GLUE = [  # (name, fn, args, NumPy's answer)
    ("add", ndx.add, (X, 3), X + 3),
    ("subtract", ndx.subtract, (X, np.int32(2)), X - 2),
    ("multiply", ndx.multiply, (2, X), X * 2),
    ("floordiv", ndx.floordiv, (X, 2), np.floor_divide(X, 2)),
    ("floordiv_neg", ndx.floordiv, (X, -3), np.floor_divide(X, -3)),
    ("floormod", ndx.floormod, (X, 3), np.mod(X, 3)),
    ("floormod_neg", ndx.floormod, (X, -4), np.mod(X, -4)),
    ("floormod_float", ndx.floormod, (F[:2], np.float32(0.75)), np.mod(F[:2], np.float32(0.75))),
    ("divide_int", ndx.divide, (X, 4), X / 4),
    ("divide_float", ndx.divide, (F, 2.0), F / np.float32(2)),
    ("negative", ndx.negative, (X,), -X),
    ("equal", ndx.equal, (X, 3), X == 3),
    ("not_equal", ndx.not_equal, (F, -2.0), F != -2),
    ("maximum", ndx.maximum, (F, 0.0), np.maximum(F, np.float32(0))),
    ("minimum", ndx.minimum, (X, 1), np.minimum(X, 1)),
    ("cast", lambda x: ndx.cast(x, ndx.int32), (F[:2],), np.array([1, -2], np.int32)),
    ("cast_bool", lambda x: ndx.cast(x, ndx.float64), (X == 3,), (X == 3).astype(np.float64)),
    ("zeros_like", ndx.zeros_like, (F,), np.zeros_like(F)),
    ("ones_like", lambda x: ndx.ones_like(x, dtype=ndx.int64), (F,), np.ones(4, np.int64)),
    ("fill", lambda v: ndx.fill([2, 3], v), (np.float64(2.5),), np.full((2, 3), 2.5)),
    ("identity", ndx.identity, (X,), X),
    ("reshape", lambda x: ndx.reshape(x, [3, -1]), (X,), X.reshape(3, 2)),
    ("reduce_sum_all", ndx.reduce_sum, (X.reshape(2, 3),), np.int32(X.sum())),
    ("reduce_sum_axis", lambda x: ndx.reduce_sum(x, axis=-1, keepdims=True), (X.reshape(2, 3),),
     X.reshape(2, 3).sum(axis=-1, keepdims=True, dtype=np.int32)),
    ("range", lambda n: ndx.range(n), (np.int32(5),), np.arange(5, dtype=np.int32)),
    ("range_float", lambda a: ndx.range(a, 2, 0.25), (np.float32(1),),
     np.arange(1, 2, 0.25, dtype=np.float32)),
    ("range_int64", lambda n: ndx.range(1, n, 3), (np.int64(10),), np.arange(1, 10, 3)),
    ("size", ndx.size, (P,), np.int32(P.size)),
    ("shape", lambda x: ndx.shape(x, out_type=ndx.int64), (P,), np.array(P.shape)),
    ("constant", lambda x: x + ndx.constant([1, 2, 3, 4, 5, 6]), (X,), X + np.arange(1, 7, dtype=np.int32)),
]


@pytest.mark.parametrize("name,fn,args,want", GLUE, ids=[g[0] for g in GLUE])
def test_glue_eager_and_traced_match_numpy(name, fn, args, want):
    for got in (fn(*args), traced(fn, *args)):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.asarray(want).dtype, (got.dtype, want)


def test_glue_conversions_and_errors():
    assert ndx.constant([1, 2]).dtype == np.int32 and ndx.constant(1.5).dtype == np.float32
    np.testing.assert_array_equal(ndx.constant(2, ndx.int64, shape=[2, 2]), np.full((2, 2), 2))
    with pytest.raises(ndx.InvalidArgumentError, match="division by zero|by zero"):
        ndx.floordiv(X, 0)
    with pytest.raises(ndx.InvalidArgumentError) as e:
        ndx.add(X, np.float32(1))
    assert "<ndx eager>" not in str(e.value) and "int32" in str(e.value)
    with pytest.raises(TypeError):
        ndx.add(X, 1.5)  # a float does not fit int32 (TensorFlow refuses it too)
    with pytest.raises(TypeError) as e:
        ndx.cast(np.array([b"a"]), ndx.int32)
    assert str(e.value).startswith("Cast: cast: ")
    with pytest.raises(ndx.InvalidArgumentError, match="^AddV2: add: x has shape"):
        ndx.add(np.ones(3), np.ones(4))
    np.testing.assert_array_equal(ndx.add(np.ones((2, 1)), np.arange(3.)),
                                  np.ones((2, 1)) + np.arange(3.))  # broadcasting


def test_operators_convert_python_scalars_to_the_tensors_dtype():
    @ndx.function
    def ops(x, y):
        return (x + 1, 1 + x, x - 2, 10 - x, x * 3, 3 * x, x / 2, 1 / x, x // 2, 7 // x,
                x % 3, 7 % x, -x, x + y)

    x = np.array([1., 2., -4.], np.float32)
    got = ops(x, x)
    want = (x + 1, 1 + x, x - 2, 10 - x, x * 3, 3 * x, x / 2, 1 / x, x // 2, 7 // x,
            np.mod(x, 3), np.mod(7, x), -x, x + x)
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w.astype(np.float32), rtol=1e-6)
    @ndx.function
    def numpy_first(x):
        return np.float32(2) * x, np.arange(3, dtype=np.float32) + x, np.float32(1) - x

    twice, plus, minus = numpy_first(x)
    np.testing.assert_array_equal(twice, 2 * x)
    np.testing.assert_array_equal(plus, np.arange(3) + x)
    np.testing.assert_array_equal(minus, 1 - x)
    xi = np.array([5, -3], np.int64)
    got = ops(xi, xi)
    assert got[0].dtype == np.int64 and got[6].dtype == np.float64  # int / int is float64
    np.testing.assert_array_equal(got[8], [2, -2])


def test_getitem_with_an_integer():
    @ndx.function(input_signature=[ndx.TensorSpec([None, 2], ndx.int32)])
    def rows(x):
        return x[0], x[-1], ndx.shape(x)[0], ndx.shape(x)[-1]

    x = np.arange(10, dtype=np.int32).reshape(5, 2)
    first, last, n, width = rows(x)
    np.testing.assert_array_equal(first, x[0])
    np.testing.assert_array_equal(last, x[-1])
    assert n == 5 and width == 2
    with pytest.raises(ndx.InvalidArgumentError):
        rows(np.zeros((0, 2), np.int32))  # x[0] of no rows: a clean error at run time

    @ndx.function
    def bad(x):
        return x[1:]

    with pytest.raises(TypeError, match="integer index"):
        bad(x)

    @ndx.function
    def past(x):
        return x[5]

    with pytest.raises(ndx.InvalidArgumentError, match="out of range"):
        past(x)


# ---- tracing and calling ------------------------------------------------------------------------

def test_retracing_follows_dtypes_shapes_and_python_values():
    traces = []

    @ndx.function
    def f(x, k):
        traces.append(1)
        return x * k

    f(np.ones(3, np.float32), 2)
    f(np.zeros(3, np.float32), 2)  # same dtype, shape, k: the trace is reused
    assert f.experimental_get_tracing_count() == 1
    f(np.ones(4, np.float32), 2)   # a new shape
    f(np.ones(4, np.float64), 2)   # a new dtype
    f(np.ones(4, np.float64), 3)   # a new Python value
    assert f.experimental_get_tracing_count() == 4 == len(traces)
    np.testing.assert_array_equal(f(np.ones(4, np.float64), 3), np.full(4, 3.))
    assert f.experimental_get_tracing_count() == 4
    cf = f.get_concrete_function(np.ones(4, np.float32), 2)
    assert isinstance(cf, ndx.ConcreteFunction) and f.experimental_get_tracing_count() == 4
    np.testing.assert_array_equal(cf(np.full(4, 2, np.float32), 2), np.full(4, 4.))
    assert [t.dtype for t in cf.inputs] == [ndx.float32]


def test_structured_results_and_arguments():
    @ndx.function
    def f(pair, table):
        a, b = pair
        return {"sum": a + b, "both": [a, (b, None)], "rows": ndx.gather_nd(table["t"], [[1]])}

    a, b = np.array([1, 2]), np.array([10, 20])
    got = f((a, b), {"t": np.arange(6).reshape(3, 2)})
    assert set(got) == {"sum", "both", "rows"}
    np.testing.assert_array_equal(got["sum"], [11, 22])
    assert isinstance(got["both"], list) and isinstance(got["both"][1], tuple)
    assert got["both"][1][1] is None
    np.testing.assert_array_equal(got["rows"], [[2, 3]])
    assert [t.node.name for t in f.get_concrete_function((a, b), {"t": np.zeros((3, 2), int)}).inputs] \
        == ["pair_0", "pair_1", "table_t"]


def test_wrong_inputs_raise_before_running():
    x = np.array([1., -1.], np.float32)
    with pytest.raises(TypeError, match="float32"):
        replace_minus_one(np.array([1., -1.]))  # float64 for a float32 signature
    with pytest.raises(ndx.InvalidArgumentError, match="shape"):
        replace_minus_one(np.zeros((2, 2), np.float32))
    with pytest.raises(TypeError):
        replace_minus_one({"x": x})
    with pytest.raises(TypeError):
        replace_minus_one(x, x)
    # still fine
    np.testing.assert_array_equal(replace_minus_one(x), replace_minus_one_reference(x))
    np.testing.assert_array_equal(replace_minus_one([1.0, -1.0]), [2., -1.])  # a list takes float32


def test_errors_at_trace_time_name_the_callers_line():
    @ndx.function
    def mismatched(x):
        y = ndx.cast(x, ndx.int64)
        return x + y  # the line named

    line = mismatched.python_function.__code__.co_firstlineno + 3
    with pytest.raises(ndx.InvalidArgumentError) as e:
        mismatched(np.ones(2, np.float32))
    assert f"{THIS}:{line}: AddV2: " in str(e.value), str(e.value)
    assert mismatched.experimental_get_tracing_count() == 0

    @ndx.function
    def bad_gather(p):
        return ndx.gather_nd(p, [[0, 0, 0]])

    line = bad_gather.python_function.__code__.co_firstlineno + 2
    with pytest.raises(ndx.InvalidArgumentError) as e:
        bad_gather(np.ones((2, 2)))
    assert f"{THIS}:{line}: GatherNd:" in str(e.value), str(e.value)


def test_a_trace_that_raises_is_discarded():
    state = {"fail": True}
    leaked = []

    @ndx.function
    def f(x):
        y = x * 2
        leaked.append(y)
        if state["fail"]:
            raise RuntimeError("user error")
        return y

    with pytest.raises(RuntimeError, match="user error"):
        f(np.ones(2))
    assert f.experimental_get_tracing_count() == 0
    state["fail"] = False
    np.testing.assert_array_equal(f(np.ones(2)), [2., 2.])
    with pytest.raises(ndx.InvalidArgumentError, match="outside the trace"):
        leaked[0] + 1  # a tensor of the discarded graph


def test_symbolic_tensors_outside_their_function():
    kept = []

    @ndx.function
    def f(x):
        kept.append(x + 1)
        return kept[-1]

    f(np.ones(2))
    t = kept[0]
    assert "AddV2:0" in repr(t) and t.shape == (2,) and t.dtype is ndx.float64
    with pytest.raises(ndx.InvalidArgumentError, match="outside the trace"):
        ndx.add(t, 1)
    with pytest.raises(TypeError, match="symbolic"):
        ndx.gather_nd(t, [[0]])
    with pytest.raises(TypeError, match="symbolic"):
        np.asarray(t)
    with pytest.raises(ndx.InvalidArgumentError, match="outside the trace"):
        f(t)

    @ndx.function
    def g(x):
        return x + t  # a tensor of f's graph inside g's trace

    with pytest.raises(ndx.InvalidArgumentError):
        g(np.ones(2))

    @ndx.function
    def truth(x):
        return x if x else -x

    with pytest.raises(TypeError, match="truth value"):
        truth(np.ones(2))


def test_nested_functions_are_inlined():
    @ndx.function
    def inner(x):
        return x * 2

    @ndx.function
    def outer(x):
        return inner(x) + inner(x + 1)

    np.testing.assert_array_equal(outer(np.array([1, 2])), [2 * 1 + 4, 4 + 6])
    assert inner.experimental_get_tracing_count() == 0
    assert outer.experimental_get_tracing_count() == 1
    assert [n.type for n in outer.graph.nodes].count("Mul") == 2
    np.testing.assert_array_equal(inner(np.array([3])), [6])  # and alone it traces


def test_inspection_and_dot(monkeypatch):
    g = replace_minus_one.graph
    nodes = g.nodes
    assert [n.name for n in nodes][:4] == ["x", "Const", "NotEqual", "Cast"]
    stitch = nodes[-1]
    assert stitch.type == "DynamicStitch" and stitch.outputs[0].dtype is ndx.float32
    assert stitch.outputs[0].shape == (None,) and stitch.file.endswith(THIS)
    assert "DynamicPartition_1:0" in stitch.inputs
    assert str(g).startswith("ndx-graph 1\nx = Placeholder() : float32[?]\n")
    dot = g.to_dot()
    assert dot.startswith("digraph ndx {") and '"x" -> "NotEqual" [label="float32[?]"];' in dot
    assert '"x" [label="x\\nPlaceholder\\nfloat32[?]", style=rounded];' in dot
    monkeypatch.setenv("PATH", "")
    assert g._repr_svg_() is None
    monkeypatch.undo()
    if shutil.which("dot"):
        assert "<svg" in g._repr_svg_()


def test_threads_and_max_memory():
    x = np.arange(100000, dtype=np.float32)
    want = replace_minus_one_reference(x)
    np.testing.assert_array_equal(replace_minus_one(x, threads=1), want)
    np.testing.assert_array_equal(replace_minus_one(x, threads=2), want)
    with pytest.raises(ndx.OutOfMemoryError, match="max_memory"):
        replace_minus_one(x, max_memory=1000)
    np.testing.assert_array_equal(replace_minus_one(x), want)  # the failure changed nothing

    @ndx.function(max_memory=1000)
    def small(x):
        return x * 2.0

    with pytest.raises(ndx.OutOfMemoryError):
        small(x)
    np.testing.assert_array_equal(small(x[:10]), x[:10] * 2)


def test_calls_from_many_threads_while_the_input_changes():
    @ndx.function(input_signature=[ndx.TensorSpec([None], ndx.int64),
                                   ndx.TensorSpec([None, 1], ndx.int64)])
    def lookup(table, ids):
        return ndx.gather_nd(table, ids) * 2

    table = np.arange(50000, dtype=np.int64)
    ids = np.zeros((20000, 1), np.int64)
    stop = threading.Event()
    errors = []

    def mutate():
        # every value written is a valid index: each row reads one of the two values
        while not stop.is_set():
            ids[:, 0] = 7
            ids[:, 0] = 11

    def call():
        try:
            for _ in range(30):
                out = lookup(table, ids)
                assert out.shape == (20000,)
                assert np.isin(out, [0, 14, 22]).all()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=mutate)] + [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads[1:]:
        t.join()
    stop.set()
    threads[0].join()
    assert not errors, errors


def test_strings_and_bfloat16_through_a_function():
    @ndx.function
    def pick(words, vals, ids):
        return ndx.gather_nd(words, ids), ndx.gather_nd(vals, ids)

    words = np.array([b"ab", b"cde", b"f"])
    vals = ndx.bfloat16([1.5, -2.0, 3.0])
    w, v = pick(words, vals, [[2], [0]])
    assert w.tolist() == [b"f", b"ab"]
    assert isinstance(v, ndx.BFloat16Array) and v.to_float32().tolist() == [3.0, 1.5]


def test_graph_from_python_builds_nodes_by_type():
    g = ndx.Graph("by_hand")
    from ndx import _trace
    with _trace.tracing(g):
        x = g.placeholder(ndx.int32, [None], name="x")
        (y,) = g.op("Neg", [x], name="y")
        with pytest.raises(ndx.InvalidArgumentError, match="unknown op type 'Nope'"):
            g.op("Nope", [x])
    with pytest.raises(ndx.InvalidArgumentError):
        g.finish()  # the graph keeps its first error
    assert y.output == (2, 0) and y.name == "y:0"


def test_graph_op_attributes_must_be_integers():
    """A None, string, float or list where an int attribute belongs is a TypeError naming it
    (not axis=1 from None, nor int(1.5)); bad_indices=None is the default "error"."""
    g = ndx.Graph("attrs")
    from ndx import _trace
    with _trace.tracing(g):
        x = g.placeholder(ndx.float32, [3], name="x")
        for bad in (None, "0", 1.5, [0]):
            with pytest.raises(TypeError, match="Pack: attribute axis must be an int"):
                g.op("Pack", [x, x], {"axis": bad})
        with pytest.raises(TypeError, match="Squeeze: attribute squeeze_dims must be an int"):
            g.op("Squeeze", [x], {"squeeze_dims": [0]})
        (y,) = g.op("Pack", [x, x], {"axis": np.int64(1)})
        assert y.shape == (3, 2)

    @ndx.function
    def gather(params, indices):
        return params.graph.op("GatherNd", [params, indices], {"bad_indices": None})[0]

    with pytest.raises(ndx.InvalidArgumentError, match="out of range"):
        gather(np.ones(3, np.float32), np.array([[7]]))


DOCUMENTED = [ndx.function, ndx.constant, ndx.cast, ndx.add, ndx.divide, ndx.floordiv,
              ndx.floormod, ndx.not_equal, ndx.fill, ndx.reduce_sum, ndx.range, ndx.shape]


@pytest.mark.parametrize("obj", DOCUMENTED, ids=lambda o: o.__name__)
def test_docstring_examples(obj):
    check_docstring_examples(obj)


def test_out_writes_results_into_given_arrays():
    @ndx.function
    def f(x):
        return {"twice": x * 2.0, "total": ndx.reduce_sum(x), "none": None}

    x = np.arange(5.0)
    twice = np.zeros(5)
    got = f(x, out={"twice": twice})
    assert got["twice"] is twice and got["none"] is None
    np.testing.assert_array_equal(twice, x * 2)
    assert got["total"] == 10
    strided = np.zeros(10)[::2]  # not writable in place: through scratch
    assert f(x, out={"twice": strided})["twice"] is strided
    np.testing.assert_array_equal(strided, x * 2)
    f(x, out={"twice": x})  # out shares memory with the input
    np.testing.assert_array_equal(x, np.arange(5.0) * 2)
    before = twice.copy()
    for bad in (np.zeros(4), np.zeros(5, np.float32)):
        with pytest.raises(ndx.InvalidArgumentError):
            f(np.ones(5), out={"twice": bad})
    with pytest.raises(ndx.OutOfMemoryError):
        f(np.ones(5), out={"twice": twice}, max_memory=1)
    np.testing.assert_array_equal(twice, before)  # failed calls wrote nothing
    with pytest.raises(TypeError):
        f(x, out={"twice": [0.0] * 5})
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(5)
        ro.flags.writeable = False
        f(x, out={"twice": ro})


def test_reference_counts_of_function_calls():
    x = np.array([1., -1., 3.], np.float32)
    out = np.zeros(3, np.float32)
    refs = [sys.getrefcount(o) for o in (x, out)]
    for _ in range(200):
        replace_minus_one(x)
        replace_minus_one(x, out=out)
        with pytest.raises(TypeError):
            replace_minus_one(x.astype(np.float64))
    assert [sys.getrefcount(o) for o in (x, out)] == refs


def test_sparse_arguments_with_a_signature():
    @ndx.function(input_signature=[ndx.SparseTensorSpec([None, 4], ndx.int32),
                                   ndx.SparseTensorSpec([None, 4], ndx.int32)])
    def stack(a, b):
        return ndx.sparse.concat(0, [a, b]), ndx.sparse.to_dense(ndx.sparse.reorder(a))

    a = ndx.SparseTensor([[1, 3], [0, 0]], np.array([5, 6], np.int32), [2, 4])
    b = ndx.SparseTensor([[0, 1]], np.array([7], np.int32), [1, 4])
    cat, dense = stack(a, b)
    assert sparse_parts(cat) == ([[0, 0], [1, 3], [2, 1]], [6, 5, 7], [3, 4])
    np.testing.assert_array_equal(dense, [[6, 0, 0, 0], [0, 0, 0, 5]])
    assert stack.experimental_get_tracing_count() == 1
    names = [t.node.name for t in stack.get_concrete_function().inputs]
    assert names[:3] == ["a_indices", "a_values", "a_dense_shape"]
    with pytest.raises(TypeError, match="SparseTensor"):
        stack(np.zeros(4), b)
    with pytest.raises(ndx.InvalidArgumentError):
        stack(ndx.SparseTensor([[0, 0, 0]], np.array([1], np.int32), [1, 1, 1]), b)


def test_to_dot_is_what_ndx_graph_dot_draws(tmp_path):
    cli = os.path.join(ROOT, "build", "ndx")
    if not os.path.exists(cli):
        pytest.skip("build/ndx is not built (scripts/test.sh builds it before pytest)")

    @ndx.function
    def words(w, i):
        return ndx.gather_nd(w, i), ndx.sparse.from_dense(w)

    words(np.array([b"ab", b"cde"]), np.array([[1]]))
    for f in (replace_minus_one, words):
        path = tmp_path / "g.txt"
        f.save(path)
        drawn = subprocess.run([cli, "graph", "dot", str(path)], check=True, capture_output=True,
                               text=True).stdout
        assert f.graph.to_dot() == drawn


def test_inputs_are_read_in_place():
    @ndx.function(input_signature=[ndx.TensorSpec([None, 4], ndx.float32)])
    def first_row(x):
        return ndx.gather_nd(x, [[0]])

    x = np.ones((1 << 22, 4), np.float32)  # 64 MiB
    first_row(x)  # (the trace and the session's first plan)
    tracemalloc.start()
    try:
        np.testing.assert_array_equal(first_row(x), np.ones((1, 4), np.float32))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"a call allocated {peak} bytes in Python: the input was copied"
    strided = np.ones((1 << 20, 8), np.float32)[:, ::2]  # not C-contiguous: converted once
    tracemalloc.start()
    try:
        first_row(strided)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak >= strided.size * 4


def test_sessions_are_kept_and_their_pools_reused():
    x = np.where(np.arange(10000) % 3 == 0, -1, np.arange(10000)).astype(np.float32)
    replace_minus_one(x)
    session = replace_minus_one.get_concrete_function()._session(None, None)
    held = session.pool_bytes()
    assert held > 0  # the intermediates' blocks stay pooled for the next call
    for _ in range(5):
        np.testing.assert_array_equal(replace_minus_one(x), replace_minus_one_reference(x))
        assert replace_minus_one.get_concrete_function()._session(None, None) is session
        assert session.pool_bytes() == held  # the same blocks again: nothing new
    session.trim()
    assert session.pool_bytes() < held
    np.testing.assert_array_equal(replace_minus_one(x), replace_minus_one_reference(x))
    # an eager glue op keeps no large blocks pooled after its call
    ndx.add(np.ones(1 << 20, np.float32), 1.0)
    assert all(e[0].pool_bytes() <= 1 << 20 for e in ndx._glue._EAGER._cache.values())
