"""The sparse optimizer steps (TensorFlow's ResourceSparseApplyGradientDescent-like step and
ResourceSparseApplyAdagrad / V2; ndx.h section 5e), one function per step for both modes:
eagerly on a NumPy array (updated in place) or a Variable's value, and inside a traced function
as an update node on a Variable (run by every call, all or nothing). Either way every index is
checked before anything is written: a refused step changes nothing."""
from . import _ndx, _trace

__all__ = ["sparse_apply_sgd", "sparse_apply_adagrad"]


def _is_variable(x):
    return getattr(x, "_ndx_variable", False)


def _eager(variables, step):
    """Runs step(arrays) on the host values of the Variables among `variables` (arrays as they
    are), each Variable's version bumped when it succeeds."""
    held = [v for v in variables if _is_variable(v)]
    for v in sorted(held, key=id):
        v._lock.acquire()
    try:
        for v in held:
            v._fresh()
            v._own()  # (a read an eager tape holds keeps its values)
        step([v._value if _is_variable(v) else v for v in variables])
        for v in held:
            v._set(v._value)
    finally:
        for v in held:
            v._lock.release()


def sparse_apply_sgd(var, lr, grad, indices, *, bad_indices=None, threads=None, max_memory=None):
    """var[indices[i]] -= lr * grad[i] for each i in order (plain gradient descent on the rows
    a sparse gradient names; TensorFlow applies it as ResourceScatterAdd(var, indices,
    -grad * lr), which gives the same values). var: a NumPy array, updated in place and
    returned, or an ndx.Variable (inside a traced function: an update node that every call
    runs). lr a scalar of var's dtype; grad [len(indices)] + var.shape[1:]; indices int32 or
    int64, a vector. Every index is checked before any row is written (bad_indices="ignore"
    or "skip" skips those out of range instead)."""
    g = _trace.graph() if _trace.active else None
    if g is not None:
        if threads is not None or max_memory is not None:
            raise TypeError("sparse_apply_sgd: threads= and max_memory= are given to the traced "
                            "function, not to ops inside it")
        return _node(g, "ResourceSparseApplyGradientDescent", [var], [lr, grad, indices],
                     bad_indices)
    _eager([var], lambda a: _ndx._sparse_apply_sgd(a[0], lr, grad, indices, bad_indices,
                                                   threads, max_memory))
    return var


def sparse_apply_adagrad(var, accum, lr, grad, indices, epsilon=None, update_slots=True, *,
                         sum_duplicates=False, bad_indices=None, threads=None, max_memory=None):
    """TensorFlow's ResourceSparseApplyAdagrad (epsilon None) or ...V2: for each i in order,
    with r = indices[i]: accum[r] += grad[i] * grad[i] (when update_slots), then
    var[r] -= lr * grad[i] * (1 / sqrt(accum[r])) (V1) or lr * grad[i] / (sqrt(accum[r]) +
    epsilon) (V2). sum_duplicates=True is Keras's step instead (ndx.optimizers.Adagrad uses
    it): the grad rows of a repeated index are summed first (from zero, in order, as
    tf.math.unsorted_segment_sum) and its row stepped once with the sum. var and accum: NumPy
    arrays of one dtype and shape, updated in place (var is returned), or ndx.Variables (inside
    a traced function: an update node). All or nothing, as sparse_apply_sgd."""
    g = _trace.graph() if _trace.active else None
    if g is not None:
        if threads is not None or max_memory is not None:
            raise TypeError("sparse_apply_adagrad: threads= and max_memory= are given to the "
                            "traced function, not to ops inside it")
        type_ = "ResourceSparseApplyAdagrad" if epsilon is None else "ResourceSparseApplyAdagradV2"
        rest = [lr, grad, indices] if epsilon is None else [lr, epsilon, grad, indices]
        return _node(g, type_, [var, accum], rest, bad_indices,
                     {"update_slots": bool(update_slots),
                      "sum_duplicates": bool(sum_duplicates)})
    _eager([var, accum], lambda a: _ndx._sparse_apply_adagrad(
        a[0], a[1], lr, epsilon, grad, indices, update_slots, bad_indices, threads, max_memory,
        sum_duplicates))
    return var


def _node(g, type_, variables, rest, bad_indices, attrs=None):
    from ._variables import _update
    for v in variables:
        if not _is_variable(v):
            raise TypeError(f"{type_}: inside a traced function the table must be an "
                            f"ndx.Variable, not {type(v).__name__}")
    if bad_indices not in (None, "error"):
        raise TypeError(f"{type_}: inside a traced function every index must be in range "
                        f"(bad_indices= is for eager calls)")
    dtype = variables[0].dtype
    ins = [g.convert(x, dtype) for x in rest[:-1]] + [g.convert(rest[-1])]
    _update(g, variables, type_, [v._ndx_handle(g) for v in variables] + ins, attrs)
    return None
