"""ndx.GradientTape in eager code (TensorFlow 2's shape): every op case of test_gradients.py run
through an eager tape, each gradient equal to the traced ndx.gradients one and to the central
differences of test_gradients.check; the tape's rules as TensorFlow's (watching, Variables,
persistent, output_gradients, unconnected_gradients, structures, stop_recording, reset,
watched_variables); the training example learned eagerly, bit for bit as traced; hostile use."""
import os
import runpy
import subprocess
import sys
import threading

import numpy as np
import pytest

import ndx
import test_gradients as tg
from test_gradients import check, dense, f64

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "train_embedding.py")


def eager(fn, args, wrt, ws, single):
    """The gradients of sum(w * fn(*args)) for args[i], i in wrt, by an eager tape (NumPy arrays
    watched, then passed through ndx.identity so NumPy's operators on them are recorded too)."""
    sources = [args[i] for i in wrt]
    with ndx.GradientTape() as tape:
        tape.watch(sources)
        xs = list(args)
        for i in wrt:
            xs[i] = ndx.identity(args[i])
            assert isinstance(xs[i], ndx.TapedArray)
        out = fn(*xs)
    return tape.gradient([out] if single else out, sources, output_gradients=ws)


def eager_and_traced(fn, args, wrt, ws, single):
    """eager's gradients, after checking they are those of ndx.gradients in a trace: the same
    kind (None, dense, slices of the same depth) and the same values, bit for bit."""
    got = eager(fn, args, wrt, ws, single)
    want = tg.traced(fn, args, wrt, ws, single)
    for i, g, w in zip(wrt, got, want):
        assert type(g) is type(w), f"argument {i}: {type(g)} eagerly, {type(w)} traced"
        if isinstance(w, ndx.IndexedSlices):
            np.testing.assert_array_equal(g.indices, w.indices)
            np.testing.assert_array_equal(g.dense_shape, w.dense_shape)
            assert g.values.tobytes() == np.asarray(w.values).tobytes()
        elif w is not None:
            assert np.asarray(g).dtype == np.asarray(w).dtype
            assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), f"argument {i}"
    return got


CASES = [tg.test_gather_nd_gives_indexed_slices_depth_1, tg.test_gather_nd_depth_2_and_batch_dims,
         tg.test_scatter_nd_and_tensor_scatter_family, tg.test_dynamic_partition,
         tg.test_sparse_ops, tg.test_dense_to_sparse_gives_slices_of_depth_rank,
         tg.test_unary_and_shape_ops, tg.test_cast_to_float32,
         lambda: tg.test_dynamic_stitch(ndx.dynamic_stitch),
         lambda: tg.test_dynamic_stitch(ndx.parallel_dynamic_stitch)]
CASES += [lambda name=name, fn=fn: tg.test_binary_ops_with_broadcasting(name, fn) for name, fn in [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b), ("maximum", ndx.maximum), ("minimum", ndx.minimum),
    ("floormod", ndx.floormod), ("-a * b", lambda a, b: -a * b), ("a // b", lambda a, b: a // b)]]


@pytest.mark.parametrize("case", CASES, ids=lambda c: getattr(c, "__name__", "case"))
def test_every_op_case_of_test_gradients_eagerly(case, monkeypatch):
    """test_gradients' cases, their check run with the eager tape (and the traced comparison)."""
    monkeypatch.setattr(tg, "check", lambda fn, args, wrt, h=1e-6, tol=1e-6: check(
        fn, args, wrt, h, tol, gradients=eager_and_traced))
    case()


def test_the_readme_example_gives_the_rows_as_indexed_slices():
    p = np.random.default_rng(1).random((10, 4)).astype(np.float32)
    params = ndx.Variable(p)
    with ndx.GradientTape() as tape:
        rows = ndx.gather_nd(params, [[1], [3], [1]])
        loss = ndx.reduce_sum(rows * rows)
    g = tape.gradient(loss, params)
    assert isinstance(g, ndx.IndexedSlices)
    assert g.indices.tolist() == [1, 3, 1] and g.dense_shape.tolist() == [10, 4]
    np.testing.assert_array_equal(g.values, 2 * p[[1, 3, 1]])
    assert float(loss) == pytest.approx(float(np.sum(p[[1, 3, 1]].astype(np.float64) ** 2)),
                                        rel=1e-6)


def test_outside_a_tape_nothing_changes():
    x = np.arange(6.0).reshape(3, 2)
    for out in (ndx.gather_nd(x, [[1]]), ndx.add(x, 1.0), ndx.reduce_sum(x)):
        assert type(out) is np.ndarray
    with ndx.GradientTape():
        unrelated = ndx.gather_nd(x, [[1]])  # no input the tape follows: not recorded
    assert type(unrelated) is np.ndarray
    from ndx import _trace
    assert _trace.active == 0 and _trace.tapes() is None


def test_variables_watched_by_themselves_unless_frozen_or_told_not_to():
    v = ndx.Variable(np.array([1.0, 2.0, 3.0]), name="v")
    frozen = ndx.Variable(np.array([2.0]), trainable=False)
    x = np.array([1.0, -1.0, 2.0])
    with ndx.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = ndx.reduce_sum(v * x * x) + ndx.reduce_sum(frozen * 1.0)
    dv, dx, dfrozen = tape.gradient(y, [v, x, frozen])
    np.testing.assert_allclose(dv, x * x)
    np.testing.assert_allclose(dx, 2 * np.array([1.0, 2.0, 3.0]) * x)
    assert dfrozen is None
    assert tape.watched_variables() == (v,)
    with ndx.GradientTape(watch_accessed_variables=False) as tape:
        y = ndx.reduce_sum(v * v)
    assert tape.gradient(y, v) is None and tape.watched_variables() == ()
    with ndx.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(frozen)
        y = ndx.reduce_sum(v * frozen)
    np.testing.assert_array_equal(tape.gradient(y, [frozen, v])[0], [6.0])


def test_a_variable_changed_between_reads_sums_both_reads():
    v = ndx.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]))
    with ndx.GradientTape() as tape:
        a = ndx.gather_nd(v, [[0]])          # reads [1, 2]
        v.assign_add(np.ones((2, 2)))
        b = ndx.gather_nd(v, [[0], [1]])     # reads [[2, 3], [4, 5]]
        loss = ndx.reduce_sum(a * a) + ndx.reduce_sum(b)
    g = tape.gradient(loss, v)
    np.testing.assert_array_equal(dense(g, (2, 2)), [[2 * 1 + 1, 2 * 2 + 1], [1, 1]])


def test_persistent_structures_output_gradients_and_zero_unconnected():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    with ndx.GradientTape(persistent=True) as tape:
        tape.watch({"x": x, "y": [y]})
        z = ndx.multiply(x, 3.0)
        w = ndx.multiply(x, y)
    got = tape.gradient(z, {"a": [x, (y,)]}, output_gradients=np.array([1.0, 2.0]),
                        unconnected_gradients="zero")
    np.testing.assert_array_equal(got["a"][0], [3.0, 6.0])
    np.testing.assert_array_equal(got["a"][1][0], [0.0, 0.0])
    assert isinstance(got["a"][1], tuple)
    gx, gy = tape.gradient([z, w], [x, y])  # two targets: the gradient of their sum
    np.testing.assert_array_equal(gx, 3.0 + y)
    np.testing.assert_array_equal(gy, x)
    assert tape.gradient(w, y, unconnected_gradients="none") is not None
    assert tape.gradient(z, y) is None
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tape.gradient(z, x, unconnected_gradients="maybe")


def test_a_tape_that_is_not_persistent_answers_once():
    x = np.array([2.0])
    with ndx.GradientTape() as tape:
        tape.watch(x)
        y = ndx.multiply(x, x)
    np.testing.assert_array_equal(tape.gradient(y, x), [4.0])
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(y, x)


def test_gradient_with_respect_to_an_intermediate_result():
    x = np.array([1.0, 2.0, 3.0])
    with ndx.GradientTape() as tape:
        tape.watch(x)
        h = ndx.identity(x) * 2.0
        y = ndx.reduce_sum(h * h)
    np.testing.assert_array_equal(tape.gradient(y, h), 2 * (2.0 * x))


def test_stop_recording_and_reset():
    x = np.array([1.0, 2.0])
    with ndx.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            hidden = ndx.multiply(x, 5.0)
        assert type(hidden) is np.ndarray
        y = ndx.reduce_sum(ndx.multiply(x, x)) + ndx.reduce_sum(hidden)
    np.testing.assert_array_equal(tape.gradient(y, x), 2 * x)  # not 2x + 5
    with pytest.raises(ValueError, match="not recording"):
        with tape.stop_recording():
            pass
    with ndx.GradientTape() as tape:
        tape.watch(x)
        before = ndx.multiply(x, x)
        tape.reset()
        tape.watch(x)
        after = ndx.multiply(x, 3.0)
        y = ndx.reduce_sum(before) + ndx.reduce_sum(after)
    np.testing.assert_array_equal(tape.gradient(y, x), [3.0, 3.0])


def test_numpy_functions_the_tape_does_not_know_give_none():
    x = np.array([0.5, 1.0])
    with ndx.GradientTape(persistent=True) as tape:
        tape.watch(x)
        t = ndx.identity(x)
        e = np.exp(t)           # not an ndx op: a plain result
        s = t[0]                # indexing: a view the tape does not follow
        y = ndx.reduce_sum(ndx.multiply(e, 2.0))
    assert type(e) is np.ndarray
    assert tape.gradient(y, x) is None
    assert tape.gradient(ndx.multiply(s, 1.0), x) is None


def test_taped_arrays_are_read_only_and_in_place_operators_make_new_ones():
    x = np.array([1.0, 2.0])
    with ndx.GradientTape() as tape:
        tape.watch(x)
        t = ndx.identity(x)
        first = t
        with pytest.raises(ValueError, match="read-only"):
            t[0] = 5.0
        t *= 3.0
        t += 1.0
    assert first is not t and first.tolist() == [1.0, 2.0]
    np.testing.assert_array_equal(t, [4.0, 7.0])
    np.testing.assert_array_equal(tape.gradient(t, x), [3.0, 3.0])


def test_integer_values_are_not_watched_and_have_no_gradient():
    i = np.array([1, 2], np.int32)
    with ndx.GradientTape() as tape:
        with pytest.warns(UserWarning, match="int32 value is not watched"):
            tape.watch(i)
        y = ndx.multiply(i, 2)
    with pytest.warns(UserWarning, match="int32 source has no gradient"):
        assert tape.gradient(y, i) is None
    with pytest.raises(TypeError, match="watch takes NumPy arrays"):
        ndx.GradientTape().watch("x")


def test_dtype_rules_of_the_glue_apply_to_recorded_operators():
    x = np.array([1.0, 2.0], np.float32)
    with ndx.GradientTape() as tape:
        tape.watch(x)
        t = ndx.identity(x)
        with pytest.raises((TypeError, ndx.InvalidArgumentError)):
            t * np.array([1.0, 2.0])  # float32 * float64: TensorFlow refuses, so does the glue
        y = t * 2  # a Python number takes the array's dtype
    assert y.dtype == np.float32
    np.testing.assert_array_equal(tape.gradient(y, x), [2.0, 2.0])


def test_an_op_that_fails_records_nothing():
    p = f64(4, 2)
    with ndx.GradientTape() as tape:
        tape.watch(p)
        rows = ndx.gather_nd(p, [[1]])
        recorded = len(tape._eager._entries)
        with pytest.raises(ndx.InvalidArgumentError):
            ndx.gather_nd(p, [[9]])
        with pytest.raises((TypeError, ndx.InvalidArgumentError)):
            ndx.add(rows, np.ones(3, np.int32))
        assert len(tape._eager._entries) == recorded
        y = ndx.reduce_sum(rows)
    want = np.zeros((4, 2))
    want[1] = 1
    np.testing.assert_array_equal(dense(tape.gradient(y, p), (4, 2)), want)


def test_other_threads_are_not_recorded_and_may_ask_for_gradients():
    x = np.array([1.0, 2.0])
    results = {}
    with ndx.GradientTape(persistent=True) as tape:
        tape.watch(x)
        t = ndx.identity(x)

        def other():
            results["other"] = ndx.multiply(t, 10.0)  # (runs, correctly, but not recorded)
            results["watch"] = tape.watch(np.ones(1))
        th = threading.Thread(target=other)
        th.start()
        th.join()
        y = ndx.reduce_sum(t * t)
    assert type(results["other"]) is np.ndarray
    np.testing.assert_array_equal(results["other"], [10.0, 20.0])
    assert tape.gradient(results["other"], x) is None

    def ask():
        results["grad"] = tape.gradient(y, x)
    th = threading.Thread(target=ask)
    th.start()
    th.join()
    np.testing.assert_array_equal(results["grad"], 2 * x)


def test_a_tape_ends_in_its_own_thread_and_is_not_entered_twice():
    tape = ndx.GradientTape()
    tape.__enter__()
    errors = []

    def end():
        try:
            tape.__exit__(None, None, None)
        except RuntimeError as e:
            errors.append(str(e))
    th = threading.Thread(target=end)
    th.start()
    th.join()
    assert errors and "thread" in errors[0]
    with pytest.raises(RuntimeError, match="already recording"):
        tape.__enter__()
    tape.__exit__(None, None, None)
    from ndx import _trace
    assert _trace.active == 0


def test_nested_tapes_each_record_what_concerns_them():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    with ndx.GradientTape() as outer:
        outer.watch(x)
        with ndx.GradientTape() as inner:
            inner.watch(y)
            z = ndx.multiply(x, y)
        w = ndx.reduce_sum(z)
    assert inner.gradient(z, [x, y])[0] is None
    np.testing.assert_array_equal(outer.gradient(w, x), y)


def test_a_gradient_inside_a_trace_still_works():
    @ndx.function
    def f(x):
        with ndx.GradientTape() as tape:
            tape.watch(x)
            y = ndx.reduce_sum(x * x)
        return tape.gradient(y, x)
    np.testing.assert_array_equal(f(np.array([1.0, 3.0])), [2.0, 6.0])


def _train_eagerly(mod):
    """examples/train_embedding.py's training, with the tape in eager code instead of
    ndx.function: returns the printed lines and the tables."""
    users, items, ratings, u_init, v_init = mod["make_data"]()
    U, V = ndx.Variable(u_init, name="U"), ndx.Variable(v_init, name="V")
    adagrad = ndx.optimizers.Adagrad(0.1, initial_accumulator_value=0.1, epsilon=None)

    def batch_loss(user, item, rating):
        pred = ndx.reduce_sum(ndx.gather_nd(U, user) * ndx.gather_nd(V, item), 1)
        diff = pred - rating
        return ndx.reduce_sum(diff * diff, 0)

    batch, batches, epochs = mod["BATCH"], mod["BATCHES"], mod["EPOCHS"]
    ratings_count = mod["RATINGS"]
    lines = [f"{mod['USERS']} users, {mod['ITEMS']} items, rank {mod['RANK']}, {ratings_count} "
             f"ratings, batches of {batch}, sparse Adagrad"]
    for epoch in range(epochs + 1):
        train = epoch < epochs
        epoch_loss = 0.0
        for b in range(batches):
            at = slice(b * batch, (b + 1) * batch)
            if train:
                with ndx.GradientTape() as tape:
                    loss = batch_loss(users[at], items[at], ratings[at])
                grads = tape.gradient(loss, [U, V])
                assert all(isinstance(g, ndx.IndexedSlices) for g in grads)
                adagrad.apply_gradients(zip(grads, [U, V]))
            else:
                loss = batch_loss(users[at], items[at], ratings[at])
            epoch_loss += float(loss / np.float32(ratings_count))
        if epoch % 5 == 0 or not train:
            lines.append(f"{'epoch' if train else 'after'} {epoch:2d}: loss {epoch_loss:.6f}")
    return lines, U.numpy(), V.numpy()


def test_the_training_example_learns_the_same_tables_eagerly_bit_for_bit(tmp_path):
    save = str(tmp_path / "traced.npz")
    done = subprocess.run([sys.executable, EXAMPLE, "--save", save], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines, u, v = _train_eagerly(runpy.run_path(EXAMPLE))
    assert done.stdout.splitlines()[:len(lines)] == lines
    with open(os.path.join(ROOT, "examples", "train_embedding.expected")) as f:
        assert f.read().splitlines()[:len(lines)] == lines  # (the C program's curve)
    traced = np.load(save)
    assert traced["U"].tobytes() == u.tobytes()
    assert traced["V"].tobytes() == v.tobytes()


def test_variable_updates_inside_a_tape_are_not_recorded_and_stay_writable():
    v = ndx.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]))
    x = np.array([1.0, 1.0])
    with ndx.GradientTape() as tape:
        tape.watch(x)
        t = ndx.identity(x)
        v.assign_add(np.stack([t, t]))     # a taped value into a variable: the update is
        v.scatter_nd_add([[0]], [t])       # not recorded, the value stays a plain array
        y = ndx.reduce_sum(ndx.gather_nd(v, [[1]]))
    assert type(v._value) is np.ndarray and v._value.flags.writeable
    np.testing.assert_array_equal(v.numpy(), [[3.0, 4.0], [4.0, 5.0]])
    gv, gx = tape.gradient(y, [v, x])
    np.testing.assert_array_equal(dense(gv, (2, 2)), [[0, 0], [1, 1]])
    assert gx is None
    ndx.optimizers.SGD(0.5).apply_gradients([(gv, v)])
    np.testing.assert_array_equal(v.numpy(), [[3.0, 4.0], [3.5, 4.5]])


def test_a_source_that_is_not_an_array_or_variable_is_a_type_error():
    x = np.array([1.0])
    with ndx.GradientTape() as tape:
        tape.watch(x)
        y = ndx.multiply(x, 2.0)
    with pytest.raises(TypeError, match="a source must be"):
        tape.gradient(y, [x, "x"])
    np.testing.assert_array_equal(tape.gradient(y, x), [2.0])  # (the failed call used nothing)


def test_the_python_page_eager_tape_block_runs_and_says_what_numpy_says():
    import textwrap
    with open(os.path.join(ROOT, "docs", "python.md")) as f:
        text = f.read()
    start = text.index("```python\n", text.index("- **Eager tapes**")) + len("```python\n")
    code = textwrap.dedent(text[start:text.index("```", start)])
    scope = {}
    exec(compile(code, "docs/python.md", "exec"), scope)
    p = np.arange(40, dtype=np.float32).reshape(10, 4) / 10
    g = scope["g"]
    assert g.indices.tolist() == [1, 3, 1]
    np.testing.assert_array_equal(g.values, 2 * p[[1, 3, 1]])
    assert float(scope["loss"]) == pytest.approx(float(np.sum(p[[1, 3, 1]] ** 2)), rel=1e-6)
    np.testing.assert_array_equal(scope["params"].numpy()[1],
                                  p[1] - np.float32(0.1) * 2 * p[1] - np.float32(0.1) * 2 * p[1])
    tape, x = scope["tape"], scope["x"]
    np.testing.assert_array_equal(tape.gradient(scope["y"], x), 3 * x * x)


def test_a_result_kept_after_its_tape_keeps_nothing_else_alive():
    import gc
    import weakref
    x = np.ones(1000)
    kept, probes = [], []
    for _ in range(3):
        with ndx.GradientTape() as tape:
            tape.watch(x)
            h = ndx.multiply(x, 2.0)
            probes.append(weakref.ref(h))
            loss = ndx.reduce_sum(h * h)
        tape.gradient(loss, x)
        kept.append(loss)       # as a training loop keeps its losses
        del tape, h
    gc.collect()
    assert all(p() is None for p in probes)  # the intermediate arrays went with their tapes
    assert [float(v) for v in kept] == [4000.0] * 3


def test_convert_to_tensor_of_a_variable_is_a_read_the_tape_follows():
    v = ndx.Variable(np.array([1.0, 2.0]))
    with ndx.GradientTape() as tape:
        r = ndx.convert_to_tensor(v)
        assert isinstance(r, ndx.TapedArray)
        y = ndx.reduce_sum(r * r)
    np.testing.assert_array_equal(tape.gradient(y, v), [2.0, 4.0])
    assert type(ndx.convert_to_tensor(v)) is np.ndarray  # (outside a tape: a plain copy)


def test_tapes_in_several_threads_at_once_keep_to_their_own_thread():
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(40):
                p = rng.standard_normal((6, 3))
                idx = rng.integers(0, 6, (4, 1)).astype(np.int32)
                with ndx.GradientTape() as tape:
                    tape.watch(p)
                    rows = ndx.gather_nd(p, idx)
                    loss = ndx.reduce_sum(rows * rows)
                g = tape.gradient(loss, p)
                want = np.zeros_like(p)
                np.add.at(want, idx[:, 0], 2 * p[idx[:, 0]])
                np.testing.assert_allclose(dense(g, p.shape), want)
                assert type(ndx.gather_nd(p, idx)) is np.ndarray  # (no tape here now)
        except Exception as e:  # (reported by the main thread)
            errors.append(e)
    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    from ndx import _trace
    assert _trace.active == 0


def test_the_new_tape_methods_inside_a_trace():
    v = ndx.Variable(np.array([1.0, 2.0]))

    @ndx.function
    def f(x):
        with ndx.GradientTape(persistent=True) as tape:
            tape.watch([x, v])
            with tape.stop_recording():  # (not recorded: no gradient through it)
                unrecorded = ndx.reduce_sum(x * v)
            y = ndx.reduce_sum(x * v)
        assert tape.watched_variables() == (v,)
        g = tape.gradient(y, x)
        assert tape.gradient(unrecorded, x) is None
        tape.reset()
        assert tape.watched_variables() == ()
        return g, tape.gradient(y, x, unconnected_gradients="zero")
    g, after_reset = f(np.array([3.0, 4.0]))
    np.testing.assert_array_equal(g, [1.0, 2.0])
    np.testing.assert_array_equal(after_reset, [0.0, 0.0])  # (nothing watched after reset)


def test_two_threads_asking_a_non_persistent_tape_at_once_get_one_answer():
    x = f64(50)
    with ndx.GradientTape() as tape:
        tape.watch(x)
        y = ndx.reduce_sum(ndx.multiply(x, x))
    outcomes, start = [], threading.Barrier(4)

    def ask():
        start.wait()
        try:
            outcomes.append(tape.gradient(y, x))
        except RuntimeError as e:
            outcomes.append(e)
    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    answers = [o for o in outcomes if isinstance(o, np.ndarray)]
    assert len(answers) == 1 and len(outcomes) == 4
    np.testing.assert_array_equal(answers[0], 2 * x)


def test_an_ndx_function_called_in_a_tape_on_followed_values_warns_and_gives_none():
    f = ndx.function(lambda a: ndx.reduce_sum(a * 2.0))
    x = np.arange(3.0)
    with ndx.GradientTape() as tape:
        tape.watch(x)
        with pytest.warns(UserWarning, match="not recorded by an eager GradientTape"):
            y = f(ndx.identity(x))
        np.testing.assert_array_equal(f(np.ones(2)), 4.0)  # (nothing followed: no warning)
    assert float(y) == 6.0 and tape.gradient(y, x) is None


def test_a_tape_reads_a_variable_without_copying_it_and_the_read_keeps_its_values():
    # The read shares the variable's buffer (a [1,000,000, 64] table is not copied per read);
    # every in-place write after it (the optimizers' sparse steps, the row scatters) moves the
    # variable to a copy first, so the read and the gradient built from it stay the values read.
    start = np.arange(12, dtype=np.float32).reshape(4, 3)
    v = ndx.Variable(start)
    ids = np.array([[2], [0], [2]], np.int32)
    with ndx.GradientTape() as tape:
        rows = ndx.gather_nd(v, ids)
        loss = ndx.reduce_sum(rows * rows)
        read = v.read_value()
    assert np.shares_memory(read, v._value)
    g = tape.gradient(loss, v)
    ndx.optimizers.SGD(0.5).apply_gradients([(g, v)])
    expect = start.copy()
    for r, k in zip((2, 0, 2), range(3)):  # each id steps its row once per entry, in order
        expect[r] -= 0.5 * 2 * start[ids[k, 0]]
    np.testing.assert_array_equal(v.numpy(), expect)
    np.testing.assert_array_equal(read, start)
    np.testing.assert_array_equal(rows, start[[2, 0, 2]])
    assert not read.flags.writeable and not np.shares_memory(read, v._value)
    v.scatter_add(ndx.IndexedSlices(np.ones((1, 3), np.float32), [1]))
    expect[1] += 1
    np.testing.assert_array_equal(v.numpy(), expect)
    np.testing.assert_array_equal(read, start)


def test_a_view_of_a_read_keeps_the_read_values_and_a_dropped_read_costs_no_copy():
    v = ndx.Variable(np.ones((3, 2), np.float32))
    with ndx.GradientTape():
        view = v.read_value()[1:].view(ndx.TapedArray)[0]  # (views of views: all lead back)
    accum_opt = ndx.optimizers.Adagrad(1.0, 1.0, epsilon=None)
    grad = ndx.IndexedSlices(np.full((1, 2), 2.0, np.float32), np.array([1], np.int64))
    accum_opt.apply_gradients([(grad, v)])
    np.testing.assert_array_equal(view, [1.0, 1.0])
    np.testing.assert_allclose(v.numpy()[1], 1.0 - 2.0 / np.sqrt(5.0), rtol=1e-6)
    del view
    with ndx.GradientTape():
        v.read_value()
    buffer = v._value
    accum_opt.apply_gradients([(grad, v)])
    assert v._value is buffer  # (no read alive: the step writes in place, no copy)


def test_a_read_taken_between_traced_updates_keeps_its_values():
    v = ndx.Variable(np.zeros((2, 2), np.float32))

    @ndx.function
    def bump():
        v.assign_add(np.ones((2, 2), np.float32))

    bump()
    with ndx.GradientTape():
        read = v.read_value()  # (the session's copy, read into the host value)
    bump()
    np.testing.assert_array_equal(v.numpy(), np.full((2, 2), 2.0))
    np.testing.assert_array_equal(read, np.ones((2, 2)))


# ---- the replay's session cache: a repeated gradient() reuses its planned session ----------

def _cache():
    from ndx import _tape
    return _tape._sessions


def _grad_of_weighted_square(x, c, axis=None):
    """d/dx of sum(c * x * x) (over axis, then all) by an eager tape; the NumPy answer is 2cx."""
    with ndx.GradientTape() as tape:
        tape.watch(x)
        y = ndx.identity(x)
        loss = ndx.reduce_sum(ndx.reduce_sum(y * y * c, axis) if axis is not None else y * y * c)
    return tape.gradient(loss, x)


def test_a_repeated_gradient_reuses_its_session_and_gives_the_same_bits():
    _cache().clear()
    rng = np.random.default_rng(3)
    x = rng.normal(size=(40, 3)).astype(np.float32)
    c = np.float32([1.5, -2.0, 0.25])
    first = _grad_of_weighted_square(x, c)
    sessions = dict(_cache()._sessions)
    again = _grad_of_weighted_square(x, c)
    assert len(_cache()) == 1 and dict(_cache()._sessions) == sessions
    np.testing.assert_array_equal(again, first)
    np.testing.assert_allclose(first, 2 * x.astype(np.float64) * c, rtol=1e-6)
    x2 = rng.normal(size=(40, 3)).astype(np.float32)  # new values, same shapes: reused, right
    np.testing.assert_allclose(_grad_of_weighted_square(x2, c), 2 * x2.astype(np.float64) * c,
                               rtol=1e-6)
    assert len(_cache()) == 1


@pytest.mark.parametrize("change", ["shape", "dtype", "constant", "attribute", "ops"])
def test_a_changed_graph_never_reuses_a_stale_session(change):
    _cache().clear()
    rng = np.random.default_rng(4)
    x = rng.normal(size=(8, 3)).astype(np.float32)
    c = np.float32([1.5, -2.0, 0.25])
    _grad_of_weighted_square(x, c)
    if change == "shape":
        x = rng.normal(size=(5, 3)).astype(np.float32)
    elif change == "dtype":
        x, c = x.astype(np.float64), c.astype(np.float64)
    elif change == "constant":  # (a small array becomes a Const: its value is in the graph)
        c = np.float32([0.5, 3.0, -1.0])
    if change == "attribute":  # reduce_sum over axis 1 first: Sum's axes differ
        got = _grad_of_weighted_square(x, c, axis=1)
    elif change == "ops":
        with ndx.GradientTape() as tape:
            tape.watch(x)
            y = ndx.identity(x)
            loss = ndx.reduce_sum(y * c)
        got = tape.gradient(loss, x)
        np.testing.assert_array_equal(got, np.broadcast_to(c, x.shape))
        assert len(_cache()) == 2
        return
    else:
        got = _grad_of_weighted_square(x, c)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_allclose(got, 2 * x.astype(np.float64) * c, rtol=1e-6)
    assert len(_cache()) == 2


def test_another_watched_variable_gets_its_own_gradient_and_the_cache_is_bounded():
    _cache().clear()
    u = ndx.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
    v = ndx.Variable(np.arange(6, 12, dtype=np.float32).reshape(3, 2))
    for var, other in ((u, v), (v, u)):
        with ndx.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(var)
            loss = ndx.reduce_sum(ndx.gather_nd(var, [[2], [0]]) * ndx.gather_nd(other, [[1], [1]]))
        g = tape.gradient(loss, [var, other])
        assert g[1] is None
        want = np.zeros((3, 2), np.float32)
        want[[2, 0]] += other.numpy()[[1, 1]]
        np.testing.assert_array_equal(dense(g[0], (3, 2)), want)
    for n in range(1, 12):  # many shapes: only the most recent sessions stay
        x = np.ones((n, 3), np.float32)
        np.testing.assert_array_equal(_grad_of_weighted_square(x, np.float32(1)), 2 * x)
    assert len(_cache()) == type(_cache()).KEPT


def test_threads_sharing_a_cached_session_each_get_their_own_gradient():
    _cache().clear()
    xs = [np.full((64, 4), k + 1, np.float32) for k in range(4)]
    c = np.float32([1.0, 2.0, 3.0, 4.0])
    got, errors = {}, []

    def work(k):
        try:
            for _ in range(20):
                got[k] = _grad_of_weighted_square(xs[k], c)
                np.testing.assert_array_equal(got[k], 2 * xs[k] * c)
        except BaseException as e:  # (reported by the main thread)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(_cache()) == 1
