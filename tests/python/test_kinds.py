"""The registry of node kinds as the Python module reads it (_ndx.kinds(), ndx_kind_info) and
the generic traced-node builder over it (ndx/_graph_ops.node): attributes by the registry's
names, its defaults and its policy words, outputs shaped as the kind says; a kind with no
hand-written wrapper is built the same way."""
import numpy as np
import pytest

import ndx
from ndx import _graph_ops, _kinds, _ndx, _trace


def test_registry_describes_every_kind_once():
    kinds = _ndx.kinds()
    types = [k["type"] for k in kinds]
    assert len(types) == len(set(types)) > 60
    for t in ["GatherNd", "ScatterNd", "DynamicPartition", "SparseConcat", "AddV2", "Squeeze",
              "Const", "Placeholder", "Variable", "ResourceScatterNdAdd"]:
        assert t in types
    for k in kinds:
        for a in k["attrs"]:
            assert a["type"] in {"int", "bool", "policy", "dtype", "axes", "value"}
            assert (a["alias"] is not None) == (a["type"] == "policy")
            assert a["lo"] <= a["hi"]
        if k["group"] == 0:
            assert 0 <= k["min_inputs"] <= k["max_inputs"] == len(k["inputs"]) or not k["inputs"]
        else:
            assert k["max_inputs"] == -1
            assert len(k["inputs"]) == k["group"] + k["trailing"]


def test_registry_states_tensorflows_facts():
    gather = _kinds.KINDS["GatherNd"]
    assert gather["inputs"] == ("params", "indices")
    assert [a["name"] for a in gather["attrs"]] == ["batch_dims", "bad_indices"]
    assert _kinds.policy_alias("GatherNd") == "zero"
    for t in ["ScatterNd", "TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub",
              "TensorScatterMin", "TensorScatterMax"]:
        assert _kinds.policy_alias(t) == "skip"
    assert _kinds.policy_alias("AddV2") is None
    part = _kinds.KINDS["DynamicPartition"]
    assert part["num_outputs"] == -1 and part["outputs_attr"] == "num_partitions"
    assert _kinds.attrs_of("DynamicPartition")["num_partitions"]["required"]
    concat = _kinds.KINDS["SparseConcat"]
    assert concat["sparse_output"] and concat["group"] == 3 and concat["grouped_parts"]
    assert _kinds.KINDS["Variable"]["own_builder"] and _kinds.KINDS["Variable"]["stateful"]
    scatter_var = _kinds.KINDS["ResourceScatterNdAdd"]
    assert scatter_var["mutates"] and scatter_var["num_variables"] == 1
    assert _kinds.attrs_of("Size")["out_type"]["always_written"]


def _graph(name):
    return ndx.Graph(name)


def test_node_applies_defaults_and_the_kinds_policy_word():
    g = _graph("node")
    with _trace.tracing(g):
        p = g.placeholder(ndx.float32, [4, 2], name="p")
        i = g.placeholder(ndx.int32, [3, 1], name="i")
        y = _graph_ops.node(g, "GatherNd", [p, i], "y", bad_indices="zero")
        assert isinstance(y, ndx.Tensor) and y.shape == (3, 2)
        z = _graph_ops.node(g, "GatherNd", [p, i], "z")  # every attribute its default
        with pytest.raises(ndx.InvalidArgumentError, match='"error", "ignore" or "zero"'):
            _graph_ops.node(g, "GatherNd", [p, i], bad_indices="skip")
        u = g.placeholder(ndx.float32, [3, 2], name="u")
        s = g.placeholder(ndx.int32, [2], name="s")
        w = _graph_ops.node(g, "ScatterNd", [i, u, s], "w", bad_indices="skip")
        with pytest.raises(ndx.InvalidArgumentError, match='"error", "ignore" or "skip"'):
            _graph_ops.node(g, "ScatterNd", [i, u, s], bad_indices="zero")
    text = g.to_text()
    assert "y = GatherNd(p, i) bad_indices=ignore" in text
    assert "z = GatherNd(p, i) :" in text
    assert "w = ScatterNd(i, u, s) bad_indices=ignore" in text


def test_node_gives_outputs_as_the_kind_has_them():
    g = _graph("outputs")
    with _trace.tracing(g):
        x = g.placeholder(ndx.float32, [5], name="x")
        ids = g.placeholder(ndx.int32, [5], name="ids")
        parts = _graph_ops.node(g, "DynamicPartition", [x, ids], num_partitions=3)
        assert isinstance(parts, list) and len(parts) == 3
        assert all(isinstance(t, ndx.Tensor) for t in parts)
        sp = _graph_ops.node(g, "DenseToSparse", [x])
        assert isinstance(sp, ndx.SparseTensor)
        with pytest.raises(ndx.InvalidArgumentError, match="needs the attribute num_partitions"):
            _graph_ops.node(g, "DynamicPartition", [x, ids])


def test_kind_without_a_wrapper_runs_traced():
    """Squeeze, Cast and Shape have no function of _graph_ops: node() builds them from the
    registry alone (attributes by keyword, dtype attributes as DTypes, the defaults), and the
    traced function computes what NumPy does."""

    @ndx.function
    def f(x):
        g = x.graph
        squeezed = _graph_ops.node(g, "Squeeze", [x], squeeze_dims=1)  # the set {0}
        cast = _graph_ops.node(g, "Cast", [squeezed], to=ndx.int64)
        shape = _graph_ops.node(g, "Shape", [x])  # out_type: int32, the default
        return cast, shape

    x = np.array([[[1.5], [-2.5], [3.0]]], np.float32)
    cast, shape = f(x)
    np.testing.assert_array_equal(cast, x.reshape(3, 1).astype(np.int64))
    assert cast.dtype == np.int64
    np.testing.assert_array_equal(shape, np.array([1, 3, 1], np.int32))
    assert shape.dtype == np.int32


def test_node_refusals_are_the_librarys():
    g = _graph("refusals")
    with _trace.tracing(g):
        x = g.placeholder(ndx.float32, [3], name="x")
        with pytest.raises(ndx.InvalidArgumentError, match="AddV2 takes no attribute 'axis'"):
            _graph_ops.node(g, "AddV2", [x, x], axis=1)


def test_graph_op_reads_policy_attributes_from_the_registry():
    g = _graph("policy")
    with _trace.tracing(g):
        t = g.placeholder(ndx.float32, [4], name="t")
        i = g.placeholder(ndx.int32, [2, 1], name="i")
        u = g.placeholder(ndx.float32, [2], name="u")
        (y,) = g.op("TensorScatterMax", [t, i, u], {"bad_indices": "ignore"}, name="y")
        with pytest.raises(ndx.InvalidArgumentError,
                           match='TensorScatterMax: bad_indices must be "error" or "ignore"'):
            g.op("TensorScatterMax", [t, i, u], {"bad_indices": "never"})
    assert "y = TensorScatterMax(t, i, u) bad_indices=ignore" in g.to_text()
