"""Optimizers (Keras's tf.keras.optimizers.SGD and Adagrad, without their schedules): each
apply_gradients(zip(grads, variables)) steps the variables, sparse gradients (IndexedSlices of
index depth 1) through the sparse apply ops, so a step touches only the rows a batch used.
Inside a traced function the steps are update nodes every call runs (reads of the variables
after apply_gradients see the stepped values, as in TF2); outside they run now."""
import numpy as np

from . import _trace
from ._apply import sparse_apply_adagrad, sparse_apply_sgd
from ._gradients import IndexedSlices
from ._graph import _convert_to
from ._ref import IdentityDict
from ._variables import Variable

__all__ = ["Optimizer", "SGD", "Adagrad"]


def _depth1(grad):
    """grad as (values, indices of index depth 1), or None for a dense one or depth > 1."""
    if not isinstance(grad, IndexedSlices):
        return None
    shape = grad.indices.shape
    return (grad.values, grad.indices) if shape is not None and len(shape) == 1 else None


def _in_graph():
    return _trace.graph() if _trace.active else None


class Optimizer:
    """The base: learning_rate (a float) and apply_gradients."""

    def __init__(self, learning_rate, name):
        self.learning_rate = float(learning_rate)
        self.name = name

    def apply_gradients(self, grads_and_vars):
        """Steps each variable by its gradient (a Tensor or array, an IndexedSlices, or None:
        skipped); returns None."""
        for grad, var in grads_and_vars:
            if grad is None:
                continue
            if not isinstance(var, Variable):
                raise TypeError(f"{self.name}.apply_gradients: {var!r} is not an ndx.Variable")
            self._apply(grad, var)

    def _dense(self, grad, var):
        g = _in_graph()
        return g.convert(grad, var.dtype) if g is not None else _convert_to(
            grad.numpy() if isinstance(grad, IndexedSlices) else grad, var.dtype)


class SGD(Optimizer):
    """Plain gradient descent, var -= learning_rate * grad (Keras SGD without momentum):
    sparse_apply_sgd for slices of depth 1, scatter_nd_add of -lr * values for deeper slices,
    assign_sub for dense gradients. A repeated index steps its row once per entry, in order,
    as Keras's SGD does (it scatter-adds -lr * grad without summing the entries first)."""

    def __init__(self, learning_rate=0.01, name="SGD"):
        super().__init__(learning_rate, name)

    def _apply(self, grad, var):
        lr = _convert_to(self.learning_rate, var.dtype)
        sparse = _depth1(grad)
        if sparse is not None:
            sparse_apply_sgd(var, lr, sparse[0], sparse[1])
        elif isinstance(grad, IndexedSlices):
            var.scatter_nd_add(grad.indices, grad.values * -lr)
        else:
            var.assign_sub(self._dense(grad, var) * lr)


class Adagrad(Optimizer):
    """Adagrad (Keras's Adagrad: an accumulator per variable starting at
    initial_accumulator_value; epsilon=None gives TensorFlow 1's AdagradOptimizer, Adagrad V1):
    sparse_apply_adagrad on the rows of depth-1 slices, on every row for dense gradients (and
    deeper slices, densified). As Keras does, the rows of a repeated index are summed first and
    the row stepped once with the sum (sum_duplicates=True); the raw kernel, which steps it once
    per entry, is ndx.sparse_apply_adagrad's default. The accumulators are Variables
    (`accumulators[var]`, named accum_<var name>), created on the first step."""

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 name="Adagrad"):
        super().__init__(learning_rate, name)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = epsilon
        self.accumulators = IdentityDict()  # (Variables are keys by identity)

    def _slot(self, var):
        accum = self.accumulators.get(var)
        if accum is None:
            init = np.full(var.shape, self.initial_accumulator_value,
                           var.dtype.as_numpy_dtype or np.float32)
            accum = self.accumulators[var] = Variable(_convert_to(init, var.dtype),
                                                      name=f"accum_{var.name}", trainable=False)
        return accum

    def _apply(self, grad, var):
        if not var.shape:
            raise ValueError(f"{self.name}: {var.name} is a scalar; sparse Adagrad steps take "
                             f"variables of rank >= 1")
        lr = _convert_to(self.learning_rate, var.dtype)
        eps = None if self.epsilon is None else _convert_to(self.epsilon, var.dtype)
        sparse = _depth1(grad)
        if sparse is None:  # every row once: Keras's dense step, no sum to take
            rows = np.arange(var.shape[0], dtype=np.int64)
            sparse_apply_adagrad(var, self._slot(var), lr, self._dense(grad, var), rows, eps)
        else:
            sparse_apply_adagrad(var, self._slot(var), lr, sparse[0], sparse[1], eps,
                                 sum_duplicates=True)
