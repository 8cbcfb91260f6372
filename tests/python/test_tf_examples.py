"""TensorFlow's own documented examples of the ops ndx implements, written as TensorFlow's
documents write them with `tf` replaced by `ndx` (`import ndx as tf`), run eagerly and inside
@ndx.function, and compared with the outputs the documents state.

The documents' other references (tf.gather, tf.batch_gather: "see also") are ops ndx does not
have; they have no example code here."""
import numpy as np
import pytest

import ndx


def eager_and_traced(body):
    """body's results run eagerly, then traced by ndx.function (both modes must agree with the
    documents)."""
    return [("eager", body()), ("traced", ndx.function(body)())]


class _Session:
    """TensorFlow 1's tf.Session, for examples written against it: ndx has no session object
    (ndx.function is its graph runner), so run(x) is x itself: a value eagerly, the returned
    tensor inside ndx.function."""

    def run(self, fetches):
        return fetches


def _bytes(nested):
    return np.array(nested, dtype=object).astype(bytes) if nested else np.array([], bytes)


# ---- gather_nd --------------------------------------------------------------------------------

_PARAMS2 = [['a', 'b'], ['c', 'd']]
_PARAMS3 = [[['a0', 'b0'], ['c0', 'd0']],
            [['a1', 'b1'], ['c1', 'd1']]]

# (indices, params, output) as the GatherNd reference page lists them.
_GATHER_ND_DOC = [
    ([[0, 0], [1, 1]], _PARAMS2, ['a', 'd']),
    ([[1], [0]], _PARAMS2, [['c', 'd'], ['a', 'b']]),
    ([[1]], _PARAMS3, [[['a1', 'b1'], ['c1', 'd1']]]),
    ([[0, 1], [1, 0]], _PARAMS3, [['c0', 'd0'], ['a1', 'b1']]),
    ([[0, 0, 1], [1, 0, 1]], _PARAMS3, ['b0', 'b1']),
    ([[[0, 0]], [[0, 1]]], _PARAMS2, [['a'], ['b']]),
    ([[[1]], [[0]]], _PARAMS2, [[['c', 'd']], [['a', 'b']]]),
    ([[[1]], [[0]]], _PARAMS3, [[[['a1', 'b1'], ['c1', 'd1']]],
                                [[['a0', 'b0'], ['c0', 'd0']]]]),
    ([[[0, 1], [1, 0]], [[0, 0], [1, 1]]], _PARAMS3, [[['c0', 'd0'], ['a1', 'b1']],
                                                      [['a0', 'b0'], ['c1', 'd1']]]),
    ([[[0, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 0]]], _PARAMS3, [['b0', 'b1'], ['d0', 'c1']]),
]


@pytest.mark.parametrize("indices, params, output", _GATHER_ND_DOC)
def test_gather_nd_reference_examples_of_strings(indices, params, output):
    def body():
        import ndx as tf
        return tf.gather_nd(params, indices)

    for mode, got in eager_and_traced(body):
        np.testing.assert_array_equal(got, _bytes(output), err_msg=mode)


def test_gather_nd_of_a_rank_2_tensor_in_a_session():
    def body():
        import ndx as tf
        sess = _Session()  # (the document: sess = tf.Session())
        data = np.array([[0, 1, 2, 3, 4, 5],
                         [6, 7, 8, 9, 10, 11],
                         [12, 13, 14, 15, 16, 17],
                         [18, 19, 20, 21, 22, 23],
                         [24, 25, 26, 27, 28, 29]])
        data = np.reshape(np.arange(30), [5, 6])
        x = tf.constant(data)
        print(sess.run(x))
        # Collecting elements from a tensor of rank 2
        result = tf.gather_nd(x, [1, 2])
        print(sess.run(result))
        out = [sess.run(result)]
        result = tf.gather_nd(x, [[1, 2], [2, 3]])
        print(sess.run(result))
        out.append(sess.run(result))
        # Collecting rows from a tensor of rank 2
        result = tf.gather_nd(x, [[1], [2]])
        print(sess.run(result))
        out.append(sess.run(result))
        return out

    for mode, (element, elements, rows) in eager_and_traced(body):
        assert element.shape == () and element == 8, mode
        np.testing.assert_array_equal(elements, [8, 15], err_msg=mode)
        np.testing.assert_array_equal(rows, [[6, 7, 8, 9, 10, 11],
                                             [12, 13, 14, 15, 16, 17]], err_msg=mode)


def test_gather_nd_of_a_rank_3_tensor_in_a_session():
    def body():
        import ndx as tf
        sess = _Session()  # (the document: sess = tf.Session())
        data = np.array([[[0, 1],
                          [2, 3],
                          [4, 5]],
                         [[6, 7],
                          [8, 9],
                          [10, 11]]])
        data = np.reshape(np.arange(12), [2, 3, 2])
        x = tf.constant(data)
        print(sess.run(x))
        # Collecting elements from a tensor of rank 3
        result = tf.gather_nd(x, [[0, 0, 0], [1, 2, 1]])
        print(sess.run(result))
        out = [sess.run(result)]
        # Collecting batched rows from a tensor of rank 3
        result = tf.gather_nd(x, [[[0, 0], [0, 1]], [[1, 0], [1, 1]]])
        print(sess.run(result))
        out.append(sess.run(result))
        result = tf.gather_nd(x, [[0, 0], [0, 1], [1, 0], [1, 1]])
        print(sess.run(result))
        out.append(sess.run(result))
        return out

    for mode, (elements, batched, rows) in eager_and_traced(body):
        np.testing.assert_array_equal(elements, [0, 11], err_msg=mode)
        np.testing.assert_array_equal(batched, [[[0, 1], [2, 3]], [[6, 7], [8, 9]]],
                                      err_msg=mode)
        np.testing.assert_array_equal(rows, [[0, 1], [2, 3], [6, 7], [8, 9]], err_msg=mode)


# ---- tensor_scatter_nd_add --------------------------------------------------------------------

def test_tensor_scatter_nd_add_of_single_elements_to_ones():
    def body():
        import ndx as tf
        indices = tf.constant([[4], [3], [1], [7]])
        updates = tf.constant([9, 10, 11, 12])
        tensor = tf.ones([8], dtype=tf.int32)
        updated = tf.tensor_scatter_nd_add(tensor, indices, updates)
        print(updated)
        return updated

    for mode, updated in eager_and_traced(body):
        assert updated.dtype == np.int32, mode
        np.testing.assert_array_equal(updated, [1, 12, 1, 11, 10, 1, 1, 13], err_msg=mode)


def test_tensor_scatter_nd_add_of_slices_of_a_rank_3_tensor_of_ones():
    def body():
        import ndx as tf
        indices = tf.constant([[0], [2]])
        updates = tf.constant([[[5, 5, 5, 5], [6, 6, 6, 6],
                                [7, 7, 7, 7], [8, 8, 8, 8]],
                               [[5, 5, 5, 5], [6, 6, 6, 6],
                                [7, 7, 7, 7], [8, 8, 8, 8]]])
        tensor = tf.ones([4, 4, 4], dtype=tf.int32)
        updated = tf.tensor_scatter_nd_add(tensor, indices, updates)
        print(updated)
        return updated

    stated = [[[6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8], [9, 9, 9, 9]],
              [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]],
              [[6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8], [9, 9, 9, 9]],
              [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]]
    for mode, updated in eager_and_traced(body):
        np.testing.assert_array_equal(updated, stated, err_msg=mode)


# ---- dynamic_stitch and dynamic_partition -----------------------------------------------------

def test_dynamic_stitch_merges_scalar_vector_and_matrix_indices():
    def body():
        import ndx as tf
        indices, data = [None] * 3, [None] * 3
        indices[0] = 6
        indices[1] = [4, 1]
        indices[2] = [[5, 2], [0, 3]]
        data[0] = [61, 62]
        data[1] = [[41, 42], [11, 12]]
        data[2] = [[[51, 52], [21, 22]], [[1, 2], [31, 32]]]
        merged = tf.dynamic_stitch(indices, data)
        return merged

    for mode, merged in eager_and_traced(body):
        np.testing.assert_array_equal(merged, [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42],
                                               [51, 52], [61, 62]], err_msg=mode)


def test_the_replace_minus_one_entries_round_trip():
    def body():
        import ndx as tf
        # Apply function (increments x_i) on elements for which a certain condition
        # apply (x_i != -1 in this example).
        x = tf.constant([0.1, -1., 5.2, 4.3, -1., 7.4])
        condition_mask = tf.not_equal(x, tf.constant(-1.))
        partitioned_data = tf.dynamic_partition(
            x, tf.cast(condition_mask, tf.int32), 2)
        partitioned_data[1] = partitioned_data[1] + 1.0
        condition_indices = tf.dynamic_partition(
            tf.range(tf.shape(x)[0]), tf.cast(condition_mask, tf.int32), 2)
        x = tf.dynamic_stitch(condition_indices, partitioned_data)
        # Here x=[1.1, -1., 6.2, 5.3, -1, 8.4], the -1. values remain
        # unchanged.
        return x

    for mode, x in eager_and_traced(body):
        assert x.dtype == np.float32, mode
        np.testing.assert_allclose(x, [1.1, -1., 6.2, 5.3, -1, 8.4], rtol=1e-6, err_msg=mode)


# ---- sparse_concat ----------------------------------------------------------------------------

def _sparse_inputs(tf, first_rows):
    """The document's two inputs: [first_rows, 3] holding a, b, c and [2, 4] holding d, e."""
    first = ([[0, 2], [1, 0], [1, 1]] if first_rows == 2 else [[0, 2], [1, 0], [2, 1]])
    return [tf.SparseTensor(indices=first, values=["a", "b", "c"], dense_shape=[first_rows, 3]),
            tf.SparseTensor(indices=[[0, 1], [0, 2]], values=["d", "e"], dense_shape=[2, 4])]


def test_sparse_concat_along_axis_1():
    def body():
        import ndx as tf
        sp = tf.sparse_concat(1, _sparse_inputs(tf, 2))
        return sp.indices, sp.values, sp.dense_shape

    for mode, (indices, values, shape) in eager_and_traced(body):
        np.testing.assert_array_equal(shape, [2, 7], err_msg=mode)
        np.testing.assert_array_equal(indices, [[0, 2], [0, 4], [0, 5], [1, 0], [1, 1]],
                                      err_msg=mode)
        np.testing.assert_array_equal(values, [b"a", b"d", b"e", b"b", b"c"], err_msg=mode)


def test_sparse_concat_expanding_the_other_dims():
    def body():
        import ndx as tf
        sp = tf.sparse_concat(1, _sparse_inputs(tf, 3), expand_nonconcat_dim=True)
        return sp.indices, sp.values, sp.dense_shape

    for mode, (indices, values, shape) in eager_and_traced(body):
        np.testing.assert_array_equal(shape, [3, 7], err_msg=mode)
        np.testing.assert_array_equal(indices, [[0, 2], [0, 4], [0, 5], [1, 0], [2, 1]],
                                      err_msg=mode)
        np.testing.assert_array_equal(values, [b"a", b"d", b"e", b"b", b"c"], err_msg=mode)


def test_sparse_concat_of_other_dims_that_differ_is_an_error():
    def body():
        import ndx as tf
        sp = tf.sparse_concat(1, _sparse_inputs(tf, 3))
        return sp.indices, sp.values, sp.dense_shape

    with pytest.raises(ndx.InvalidArgumentError):
        body()
    with pytest.raises(ndx.InvalidArgumentError):
        ndx.function(body)()
