"""What a GradientTape records, the same eagerly and inside ndx.function (TensorFlow's rule):
the ops run inside its `with` block (outside stop_recording()), from the sources it watches,
wherever those were computed. A target computed before or after the block, or a path through an
op run outside it, carries nothing. Nested tapes give second derivatives; an integer source is
None with one warning. Expected values are worked out here by hand with NumPy."""
import warnings

import numpy as np
import pytest

import ndx


def both(program, *args):
    """program(*args) run eagerly and under ndx.function: (eager answer, traced answer)."""
    return program(*args), ndx.function(program)(*args)


def same(got, want):
    """got (a structure of arrays and None) equals want (None where want is None)."""
    if want is None:
        assert got is None
        return
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    assert got is not None
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


X = np.array([1.0, 2.0])


def ops_before_and_after(x):
    before = ndx.multiply(x, x)            # before the block: not recorded
    with ndx.GradientTape(persistent=True) as tape:
        tape.watch(x)
        inside = ndx.multiply(before, x)   # recorded; `before` is a constant to the tape
    after = ndx.multiply(inside, x)        # after the block: not recorded
    return (tape.gradient(before, x), tape.gradient(after, x), tape.gradient(inside, x),
            tape.gradient([inside, after], [x, x]))


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_only_the_ops_inside_the_block_count(mode):
    got = both(ops_before_and_after, X)[mode == "traced"]
    same(got, (None, None, X * X, [X * X, X * X]))


def test_the_issue_program_eager_and_traced_agree():
    def program(x):
        y = ndx.multiply(x, x)
        with ndx.GradientTape() as tape:
            tape.watch(x)
        z = ndx.multiply(y, x)
        return tape.gradient([y, z], [x, y])
    eager, traced = both(program, X)
    same(eager, (None, None))
    same(traced, (None, None))


def watched_before_the_block(x):
    y = ndx.multiply(x, 3.0)               # y computed before the block, then watched
    with ndx.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = ndx.multiply(y, y)
    return tape.gradient(z, y), tape.gradient(z, x)


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_a_watched_tensor_is_a_source_wherever_it_was_computed(mode):
    got = both(watched_before_the_block, X)[mode == "traced"]
    # dz/dy = 2y; dz/dx: the path x -> y runs through an op outside the block: None.
    same(got, (2 * 3 * X, None))


def stop_and_reset(x):
    with ndx.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            s = ndx.multiply(x, x)         # not recorded: a constant to the tape
        t = ndx.multiply(s, x)
    first = tape.gradient(t, x)
    with ndx.GradientTape() as tape2:
        tape2.watch(x)
        u = ndx.multiply(x, x)
        tape2.reset()                      # forgets u's op (and the watch)
        tape2.watch(x)
        v = ndx.multiply(u, x)
    return first, tape2.gradient(v, x)


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_stop_recording_and_reset_cut_the_record(mode):
    got = both(stop_and_reset, X)[mode == "traced"]
    same(got, (X * X, X * X))


def test_variables_read_inside_the_block_through_ops_outside_it():
    v = ndx.Variable(np.array([0.5, -1.5]), name="v_record")

    def program(x):
        pre = ndx.multiply(v, 2.0)         # read before the block: not recorded
        with ndx.GradientTape() as tape:
            y = ndx.multiply(pre, v)       # v read inside: watched by itself
        return tape.gradient(y, v)
    eager, traced = both(program, X)
    same(eager, 2 * v.numpy())
    same(traced, 2 * v.numpy())


def reentered(x):
    tape = ndx.GradientTape(persistent=True)
    with tape:
        tape.watch(x)
        a = ndx.multiply(x, x)
    b = ndx.multiply(a, x)                 # between the blocks: not recorded
    with tape:
        c = ndx.multiply(b, x)             # recorded again
    return tape.gradient(c, x), tape.gradient(a, x)


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_a_tape_entered_again_records_both_blocks_only(mode):
    got = both(reentered, X)[mode == "traced"]
    same(got, (X ** 3, 2 * X))


# ---- nested tapes ---------------------------------------------------------------------------

def second_order(x):
    with ndx.GradientTape() as tape2:
        tape2.watch(x)
        with ndx.GradientTape() as tape1:
            tape1.watch(x)
            y = ndx.multiply(x, x)
        dy = tape1.gradient(y, x)
    return dy, tape2.gradient(dy, x)


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_nested_tapes_give_the_second_derivative(mode):
    got = both(second_order, X)[mode == "traced"]
    same(got, (2 * X, 2 * np.ones(2)))


def third_order(x):
    with ndx.GradientTape() as t3:
        t3.watch(x)
        with ndx.GradientTape() as t2:
            t2.watch(x)
            with ndx.GradientTape() as t1:
                t1.watch(x)
                y = ndx.reduce_sum(ndx.multiply(ndx.multiply(x, x), ndx.divide(x, 3.0)))
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    return d1, d2, t3.gradient(d2, x)


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_three_nested_tapes(mode):
    got = both(third_order, X)[mode == "traced"]
    same(got, (X * X, 2 * X, 2 * np.ones(2)))


def inner_sees_only_its_block(x):
    with ndx.GradientTape() as outer:
        outer.watch(x)
        y = ndx.multiply(x, x)             # outer only
        with ndx.GradientTape() as inner:
            inner.watch(x)
            z = ndx.multiply(y, x)         # both: to inner, y is a constant
        dz = inner.gradient(z, x)          # = y = x^2, recorded by outer
    return dz, outer.gradient(dz, x)       # d(x^2)/dx = 2x


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_a_nested_gradient_through_an_op_the_inner_tape_did_not_record(mode):
    got = both(inner_sees_only_its_block, X)[mode == "traced"]
    same(got, (X * X, 2 * X))


def test_second_order_with_a_variable_and_output_structure():
    v = ndx.Variable(np.array([1.5, -0.5]), name="v_second")

    def program():
        with ndx.GradientTape() as outer:
            with ndx.GradientTape() as inner:
                y = ndx.reduce_sum(ndx.multiply(ndx.multiply(v, v), v))
            (g,) = inner.gradient(y, [v])
            h = ndx.reduce_sum(g)
        return g, outer.gradient(h, v)
    want = (3 * v.numpy() ** 2, 6 * v.numpy())
    same(program(), want)
    same(ndx.function(program)(), want)


# ---- integer sources ------------------------------------------------------------------------

def integer_source(x, i):
    with ndx.GradientTape() as tape:
        tape.watch(x)
        y = ndx.multiply(x, ndx.cast(i, ndx.float64))
    return tape.gradient(y, [x, i])


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_an_integer_source_is_none_with_a_warning(mode):
    i = np.array([3, 4], np.int32)
    f = integer_source if mode == "eager" else ndx.function(integer_source)
    with pytest.warns(UserWarning, match="GradientTape.gradient: a int32 source has no "
                                         "gradient") as record:
        dx, di = f(X, i)
    assert [str(w.message) for w in record].count(str(record[0].message)) == 1
    same(dx, i.astype(np.float64))
    assert di is None


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_watching_an_integer_warns_the_same_in_both_modes(mode):
    def program(i):
        with ndx.GradientTape() as tape:
            tape.watch(i)
            y = ndx.multiply(i, 2)
        return ndx.identity(y)
    f = program if mode == "eager" else ndx.function(program)
    with pytest.warns(UserWarning, match="GradientTape.watch: a int32 value is not watched"):
        f(np.array([1, 2], np.int32))


def test_no_warning_for_float_sources():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        both(second_order, X)


def test_second_order_through_indexed_slices_eager_and_traced():
    p = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]])
    i = np.array([[2], [0], [2]], np.int32)

    def program(p, i):
        with ndx.GradientTape(persistent=True) as outer:
            outer.watch(p)
            with ndx.GradientTape() as inner:
                inner.watch(p)
                rows = ndx.gather_nd(p, i)
                y = ndx.reduce_sum(ndx.multiply(ndx.multiply(rows, rows), rows))
            g = inner.gradient(y, p)                       # slices: 3 * rows^2
            h = ndx.reduce_sum(ndx.multiply(g.values, g.values))
        return g.values, outer.gradient(h, p), outer.gradient(g, p)
    rows = p[i[:, 0]]
    # h = sum over gathered rows r of 9 r^4: dh/dp adds 36 r^3 at each row's index.
    want = np.zeros_like(p)
    np.add.at(want, i[:, 0], 36 * rows ** 3)
    # the slices as a target: the sum of their dense value, 3 sum(r^2): 6 r at each index.
    want_g = np.zeros_like(p)
    np.add.at(want_g, i[:, 0], 6 * rows)
    for f in (program, ndx.function(program)):
        values, d, d_g = f(p, i)
        np.testing.assert_allclose(values, 3 * rows ** 2)
        from test_gradients import dense
        np.testing.assert_allclose(dense(d, p.shape), want)
        np.testing.assert_allclose(dense(d_g, p.shape), want_g)


def test_second_order_of_a_variable_read_twice_gives_the_sum_of_both_reads():
    v = ndx.Variable(np.array([1.0, 2.0, 3.0]), name="v_twice")
    i = np.array([[1], [2]], np.int32)

    def program():
        with ndx.GradientTape() as outer:
            with ndx.GradientTape() as inner:
                a = ndx.reduce_sum(ndx.multiply(ndx.gather_nd(v, i), ndx.gather_nd(v, i)))
                v.assign_add(np.array([1.0, 1.0, 1.0]))
                b = ndx.reduce_sum(ndx.gather_nd(v, i))
                y = ndx.add(a, b)
            g = inner.gradient(y, v)
            h = ndx.reduce_sum(ndx.multiply(g.values, g.values))
        return g, outer.gradient(h, v)
    base = v.numpy().copy()
    g, d = program()
    from test_gradients import dense
    np.testing.assert_allclose(dense(g, (3,)), [0, 2 * base[1] + 1, 2 * base[2] + 1])
    # g's slices hold a row r per gather of the first read (two: r and r) and a 1 per row of
    # the second: h = 2 sum(r^2) + 2, so dh/dv = 4 r at those rows (the second read's ones are
    # constants).
    np.testing.assert_allclose(dense(d, (3,)), [0, 4 * base[1], 4 * base[2]])


def intermediate_sources(x, u):
    with ndx.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = ndx.multiply(x, x)             # on the tape: from the watched x
        b = ndx.multiply(u, 2.0)           # not: u is not watched
        y = ndx.add(ndx.multiply(a, 3.0), ndx.multiply(b, a))
    return tape.gradient(y, a), tape.gradient(y, b), tape.gradient(y, x)


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_an_intermediate_result_on_the_tape_is_a_source(mode):
    u = np.array([0.5, -1.0])
    got = both(intermediate_sources, X, u)[mode == "traced"]
    # dy/da = 3 + b; b was computed from nothing watched: None (as TensorFlow's tape);
    # dy/dx = (3 + b) * 2x.
    same(got, (3 + 2 * u, None, (3 + 2 * u) * 2 * X))


# ---- second derivatives against central differences of the first ---------------------------

I1 = np.array([[2], [0], [2]], np.int32)
SECOND = {
    "cube": lambda x: ndx.multiply(ndx.multiply(x, x), x),
    "quotient": lambda x: ndx.divide(x, ndx.add(ndx.multiply(x, x), 1.0)),
    "maximum": lambda x: ndx.maximum(ndx.multiply(x, x), ndx.multiply(x, 1.5)),
    "sum_times": lambda x: ndx.multiply(ndx.reduce_sum(ndx.multiply(x, x)), x),
    "gather": lambda x: ndx.multiply(ndx.gather_nd(x, I1), ndx.gather_nd(x, I1)),
    "scatter": lambda x: ndx.tensor_scatter_nd_add(
        ndx.multiply(x, x), I1[:2], ndx.multiply(ndx.gather_nd(x, I1[:2]),
                                                 ndx.gather_nd(x, np.array([1], np.int32)))),
    "stitch": lambda x: ndx.dynamic_stitch([np.array([1, 0, 2], np.int32)],
                                           [ndx.multiply(ndx.multiply(x, x), x)]),
    "reshape_cast": lambda x: ndx.reshape(
        ndx.multiply(ndx.cast(ndx.cast(x, ndx.complex128), ndx.float64), x),
        np.array([3, 1], np.int64)),
}
W = np.array([0.7, -1.3, 2.1])


def first(fn, x):
    """d/dx sum(w * fn(x)) by one eager tape."""
    with ndx.GradientTape() as tape:
        tape.watch(x)
        y = ndx.reduce_sum(ndx.multiply(ndx.reshape(fn(x), np.array([-1], np.int64)), W))
    return np.asarray(tape.gradient(y, x), np.float64)


def hessian_vector(fn, x, v):
    """d/dx sum(v * d/dx sum(w * fn(x))) by two nested tapes."""
    with ndx.GradientTape() as outer:
        outer.watch(x)
        with ndx.GradientTape() as inner:
            inner.watch(x)
            y = ndx.reduce_sum(ndx.multiply(ndx.reshape(fn(x), np.array([-1], np.int64)), W))
        g = ndx.convert_to_tensor(inner.gradient(y, x))
        h = ndx.reduce_sum(ndx.multiply(g, v))
    return ndx.convert_to_tensor(outer.gradient(h, x))


@pytest.mark.parametrize("name", sorted(SECOND))
@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_second_derivatives_match_central_differences_of_the_first(name, mode):
    fn = SECOND[name]
    x = np.array([0.9, -0.4, 1.7])
    v = np.array([0.3, 1.1, -0.6])
    if mode == "eager":
        got = hessian_vector(fn, x, v)
    else:
        got = ndx.function(lambda x, v: hessian_vector(fn, x, v))(x, v)
    h = 1e-6
    want = np.zeros(3)
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        want[k] = np.dot(v, (first(fn, x + e) - first(fn, x - e)) / (2 * h))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_watched_variables_are_those_read_while_recording_in_both_modes():
    a = ndx.Variable(np.array([1.0]), name="wa")
    b = ndx.Variable(np.array([2.0]), name="wb")
    frozen = ndx.Variable(np.array([3.0]), name="wf", trainable=False)

    def program(x):
        before = ndx.multiply(b, 1.0)          # read before the block: not watched by it
        with ndx.GradientTape() as tape:
            y = ndx.multiply(ndx.multiply(a, x), frozen)
        with ndx.GradientTape(watch_accessed_variables=False) as quiet:
            quiet.watch(b)
            z = ndx.multiply(a, x)
        names = [v.name for v in tape.watched_variables()], [v.name for v in
                                                              quiet.watched_variables()]
        assert names == (["wa"], ["wb"]), names
        return ndx.add(ndx.add(y, z), before)
    program(X)
    ndx.function(program)(X)
