"""Hostile use of ndx.function and ndx.load: traces from many threads at once, eager calls
while another thread traces, saved graphs fed wrongly, recursion, bad signatures and
arguments. Every case ends in a result or a clean Python exception, never a crash."""
import os
import threading

import numpy as np
import pytest

import ndx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REPLACE_MINUS_ONE_TXT = os.path.join(ROOT, "examples", "graphs", "replace_minus_one.txt")


def test_many_threads_trace_and_call_at_once():
    gate = threading.Barrier(4)

    @ndx.function
    def f(x):
        return ndx.gather_nd(x, [[0]]) * 3

    results, errors = [], []

    def worker(k):
        try:
            gate.wait()
            for i in range(20):
                x = np.arange(k + 1 + i % 3, dtype=np.int64) + k  # three shapes per thread
                results.append((x[0] * 3, f(x)[0]))
                # eager ops in this thread see no trace, whatever other threads trace
                assert ndx.gather_nd(x, [[0]])[0] == x[0]
                assert ndx.add(x, 1)[0] == x[0] + 1
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert all(want == got for want, got in results) and len(results) == 80
    assert f.experimental_get_tracing_count() <= 6  # shapes 1..6: each traced once


def test_loaded_graph_fed_wrongly():
    g = ndx.load(REPLACE_MINUS_ONE_TXT)
    with pytest.raises(ndx.InvalidArgumentError, match="x"):
        g()  # the placeholder is not fed
    with pytest.raises(ndx.InvalidArgumentError):
        g(x=np.zeros((2, 2), np.float32))
    with pytest.raises(ndx.InvalidArgumentError):
        g(x=np.zeros(3, np.float64))
    with pytest.raises(TypeError):
        g(x=object())
    np.testing.assert_array_equal(g(x=[1.0, -1.0]), [2.0, -1.0])  # still fine after failures
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.load(os.path.join(ROOT, "README.md"))
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.load(os.path.join(ROOT, "no such graph.txt"))


def test_loaded_graph_from_many_threads():
    g = ndx.load(REPLACE_MINUS_ONE_TXT)
    errors = []

    def worker(k):
        try:
            for _ in range(50):
                x = np.full(1000, k, np.float32)
                np.testing.assert_array_equal(g(x=x), x + 1)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_bad_definitions_and_arguments():
    with pytest.raises(TypeError, match="TensorSpec"):
        ndx.function(lambda x: x, input_signature=[np.float32])
    with pytest.raises(TypeError, match="specs for"):
        ndx.function(lambda x: x, input_signature=[ndx.TensorSpec([1]), ndx.TensorSpec([1])])
    with pytest.raises(TypeError, match=r"\*\*kw: an input_signature is for positional"):
        ndx.function(lambda x, **kw: x, input_signature=[ndx.TensorSpec([1])])
    with pytest.raises(TypeError, match="autograph is True or False"):
        ndx.function(lambda x: x, autograph="yes")
    with pytest.raises(ValueError):
        ndx.TensorSpec([-2])
    with pytest.raises(TypeError):
        ndx.TensorSpec([2], "no such dtype")

    @ndx.function
    def f(x):
        return x + 1

    with pytest.raises(TypeError):
        f(np.ones(2), np.ones(2))
    with pytest.raises(TypeError):
        f([[1, 2], object()])  # not an array, not hashable into the trace
    with pytest.raises(TypeError):
        f(np.array([object()]))


def test_recursion_and_errors_inside_the_trace():
    @ndx.function
    def forever(x):
        return forever(x) + 1  # inlined into itself

    with pytest.raises(RecursionError):
        forever(np.ones(2))
    assert forever.experimental_get_tracing_count() == 0

    @ndx.function
    def zero_partitions(x):
        return ndx.dynamic_partition(x, [0, 0], 0)

    with pytest.raises(ndx.InvalidArgumentError, match="num_partitions"):
        zero_partitions(np.ones(2))

    @ndx.function
    def caught(x):
        try:
            ndx.gather_nd(x, [[7]])  # the graph records the error ...
        except ndx.InvalidArgumentError:
            pass
        return x + 1  # ... and keeps it: the trace fails with it

    with pytest.raises(ndx.InvalidArgumentError, match="GatherNd"):
        caught(np.ones(2))


def test_index_errors_at_run_time_change_nothing():
    @ndx.function(input_signature=[ndx.TensorSpec([None], ndx.float64),
                                   ndx.TensorSpec([None, 1], ndx.int32)])
    def scatter(t, i):
        return ndx.tensor_scatter_nd_add(t, i, ndx.ones_like(ndx.cast(i[0], ndx.float64)))

    t = np.zeros(3)
    np.testing.assert_array_equal(scatter(t, np.array([[2]], np.int32)), [0, 0, 1])
    with pytest.raises(ndx.InvalidArgumentError, match="out of range"):
        scatter(t, np.array([[3]], np.int32))
    np.testing.assert_array_equal(t, np.zeros(3))  # the input is never written


def test_parameter_kinds():
    @ndx.function
    def f(a, /, b, *, c=2):
        return a * c + b

    np.testing.assert_array_equal(f(np.array([1]), np.array([10])), [12])
    np.testing.assert_array_equal(f(np.array([1]), b=np.array([10]), c=3), [13])
    with pytest.raises(TypeError):
        f(np.array([1]), np.array([10]), np.array([5]))  # c is keyword-only

    class Model:
        @ndx.function
        def apply(self, x):
            return x + 1

    np.testing.assert_array_equal(Model().apply(np.array([1, 2])), [2, 3])
