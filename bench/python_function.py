"""ndx.function against eager calls and NumPy, and what the graph dispatch costs the eager path.

  PYTHONPATH=python /usr/bin/python3 bench/python_function.py   (after building the module in
  place: cd python && python3 setup.py build_ext --inplace; or with an installed ndx)

Prints, per case, the best of several interleaved rounds (microseconds per call) and ratios:
  * the eager dispatch check: ndx.gather_nd on 4 elements against the same wrapper without the
    check, the private C function it wraps (_ndx._gather_nd) and NumPy's fancy indexing;
  * the replace -1 entries program as one @ndx.function call against the same ops called
    eagerly one by one and a NumPy version, at 6 and 1,000,000 elements."""
import timeit

import numpy as np

import ndx
from ndx import _ndx


def best(fn, number, rounds=7):
    return min(timeit.repeat(fn, number=number, repeat=rounds)) / number * 1e6


@ndx.function(input_signature=[ndx.TensorSpec([None], ndx.float32)])
def replace_minus_one(x):
    mask = ndx.cast(ndx.not_equal(x, -1.0), ndx.int32)
    data = ndx.dynamic_partition(x, mask, 2)
    data[1] = data[1] + 1.0
    where = ndx.dynamic_partition(ndx.range(ndx.shape(x)[0]), mask, 2)
    return ndx.dynamic_stitch(where, data)


def replace_minus_one_eager(x):
    mask = (x != -1.0).astype(np.int32)
    data = ndx.dynamic_partition(x, mask, 2)
    data[1] = data[1] + np.float32(1.0)
    where = ndx.dynamic_partition(np.arange(x.size, dtype=np.int32), mask, 2)
    return ndx.dynamic_stitch(where, data)


def gather_nd_without_check(params, indices, batch_dims=0, name=None, *, bad_indices=None,
                            threads=None, max_memory=None):
    """ndx.gather_nd's wrapper as it was before graphs: no trace check."""
    return _ndx._gather_nd(params, indices, batch_dims, bad_indices, threads, max_memory)


def replace_minus_one_numpy(x):
    return np.where(x != -1.0, x + np.float32(1.0), x)


def main():
    params = np.arange(4, dtype=np.float32)
    indices = np.array([[3], [0], [2], [1]], np.int64)
    flat = indices[:, 0]
    rows = {}
    for _ in range(3):  # interleaved rounds: the machine is shared
        for name, fn in (("ndx.gather_nd (4 elements)", lambda: ndx.gather_nd(params, indices)),
                         ("the wrapper without the check",
                          lambda: gather_nd_without_check(params, indices)),
                         ("_ndx._gather_nd (no wrapper)",
                          lambda: _ndx._gather_nd(params, indices, 0, None, None, None)),
                         ("numpy params[idx]", lambda: params[flat])):
            rows[name] = min(rows.get(name, 1e9), best(fn, 20000))
    base = rows["_ndx._gather_nd (no wrapper)"]
    print("eager dispatch (us per call; ratio to the bare C function)")
    for name, us in rows.items():
        print(f"  {name:32s} {us:8.3f} us  x{us / base:.2f}")
    for n in (6, 1_000_000):
        rng = np.random.default_rng(0)
        x = np.where(rng.random(n) < 0.3, -1, rng.normal(size=n)).astype(np.float32)
        assert np.array_equal(replace_minus_one(x), replace_minus_one_numpy(x))
        number = 2000 if n < 100 else 10
        rows = {}
        for _ in range(3):
            for name, fn in (("ndx.function (one graph call)", lambda: replace_minus_one(x)),
                             ("ndx eager, op by op", lambda: replace_minus_one_eager(x)),
                             ("numpy np.where", lambda: replace_minus_one_numpy(x))):
                rows[name] = min(rows.get(name, 1e9), best(fn, number, 3))
        base = rows["ndx.function (one graph call)"]
        print(f"the replace -1 entries program at {n} elements "
              "(us per call; ratio to ndx.function)")
        for name, us in rows.items():
            print(f"  {name:32s} {us:10.1f} us  x{us / base:.2f}")



# ---- against the C session, NumPy at 1,000 elements, and the training step (part 2) ----------
# Two more reports, each timed in the same run as the C figure it is compared with (the ndx
# command's `ndx bench N3` and `ndx bench T1 T2`, run as subprocesses: NDX_BIN, else build/ndx):
#   * the replace -1 entries program traced (one ndx.function call) at 6 and 1,000 elements
#     against eager calls, NumPy and, at 6 elements, the C session's run of the same graph
#     (N3's graph_us): the goal is a per-call overhead under 1 us above the C session, and
#     faster than NumPy at 1,000;
#   * examples/train_embedding.c's step at the bench size ([1,000,000, 64] float32 tables,
#     batches of 65,536; T1 sparse SGD, T2 sparse Adagrad) as an @ndx.function with
#     ndx.Variable, GradientTape and ndx.optimizers, against the C session's step (median of
#     20 steps each, the best and the median of 5 interleaved rounds): the goal is within 10%.
# Run only these: bench/python_function.py --vs-c [--threads T] [--steps N]
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402


def _ndx_bin():
    path = os.environ.get("NDX_BIN") or os.path.join(os.path.dirname(__file__), "..", "build",
                                                     "ndx")
    if not os.access(path, os.X_OK):
        sys.exit(f"python_function.py: no ndx command at {path} (build it, or set NDX_BIN)")
    return path


def _c_bench(workloads, threads, repeat=None):
    """{name: {key: value}} from `ndx bench` lines ("NAME key=value ...")."""
    args = [_ndx_bin(), "bench"] + workloads + (["--threads", str(threads)] if threads else [])
    args += ["--repeat", str(repeat)] if repeat else []
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        name, *pairs = line.split()
        rows[name] = {k: float(v) for k, v in (p.split("=") for p in pairs)}
    return rows


def median_us(fn, number, batches=200):
    """The median over `batches` batches of `number` calls (us per call): the statistic of
    `ndx bench N3 --repeat 200` (the median of 200 batches of 2,000 runs), like for like."""
    return float(np.median(timeit.repeat(fn, number=number, repeat=batches))) / number * 1e6


def replace_minus_one_vs_c(threads):
    rows = {}
    x6 = np.array([0.1, -1.0, 5.2, 4.3, -1.0, 7.4], np.float32)  # (N3's input)
    rng = np.random.default_rng(0)
    x1k = np.where(rng.random(1000) < 0.3, -1, rng.normal(size=1000)).astype(np.float32)
    f = ndx.function(replace_minus_one.python_function, threads=threads,
                     input_signature=[ndx.TensorSpec([None], ndx.float32)])
    for _ in range(5):  # interleaved rounds: the machine is shared
        c = _c_bench(["N3"], threads, 200)["N3"]["graph_us"]
        rows["C session run (ndx bench N3), 6"] = min(rows.get("C session run (ndx bench N3), 6",
                                                                1e9), c)
        for n, x in ((6, x6), (1000, x1k)):
            for name, fn in (("ndx.function", lambda: f(x)),
                             ("ndx eager, op by op", lambda: replace_minus_one_eager(x)),
                             ("numpy np.where", lambda: replace_minus_one_numpy(x))):
                key = f"{name}, {n}"
                rows[key] = min(rows.get(key, 1e9), median_us(fn, 2000 if n < 100 else 200))
    c = rows["C session run (ndx bench N3), 6"]
    print(f"the replace -1 entries program traced against the C session and NumPy (us per call: "
          f"the best of 5 interleaved rounds of the median of 200 batches; "
          f"threads={threads or 'all'})")
    for n in (6, 1000):
        base = rows[f"ndx.function, {n}"]
        for key, us in rows.items():
            if key.endswith(f", {n}"):
                print(f"  {key:40s} {us:9.3f} us  x{us / base:.2f} of ndx.function")
    print(f"  ndx.function overhead above the C session at 6 elements: "
          f"{rows['ndx.function, 6'] - c:.3f} us (goal < 1 us)")
    print(f"  ndx.function against numpy at 1,000 elements: numpy is "
          f"x{rows['numpy np.where, 1000'] / rows['ndx.function, 1000']:.2f} its time "
          f"(goal > 1)")


# examples/train_embedding.c's step written the TensorFlow way (bench/train_compare.py runs it
# too, traced and eager): the optimizers of T1 and T2, the batches, and the step itself.
TRAIN_OPTIMIZERS = (("T1", "sparse SGD", lambda: ndx.optimizers.SGD(0.01)),
                    ("T2", "sparse Adagrad", lambda: ndx.optimizers.Adagrad(0.1, 0.1, epsilon=None)))


def train_batches(rows_n, batch, batches=4, seed=20):
    """`batches` batches of (user ids [batch, 1], item ids [batch, 1], ratings [batch]), uniform
    int32 ids below rows_n and float32 ratings in [-1, 1)."""
    rng = np.random.default_rng(seed)
    users = rng.integers(0, rows_n, (batches, batch, 1), dtype=np.int32)
    items = rng.integers(0, rows_n, (batches, batch, 1), dtype=np.int32)
    ratings = rng.uniform(-1, 1, (batches, batch)).astype(np.float32)
    return users, items, ratings


def train_step(U, V, opt, threads=None, traced=True):
    """One step on Variables U and V: pred = sum(U[u] * V[i], 1), loss = sum((pred - r)^2), the
    tape's gradients (slices) applied by `opt`. traced: an @ndx.function (threads= for its
    session); else the same code run eagerly (every op on the process's cores)."""
    def step(user, item, rating):
        with ndx.GradientTape() as tape:
            pred = ndx.reduce_sum(ndx.gather_nd(U, user) * ndx.gather_nd(V, item), 1)
            diff = pred - rating
            loss = ndx.reduce_sum(diff * diff, 0)
        opt.apply_gradients(zip(tape.gradient(loss, [U, V]), [U, V]))
        return loss
    return ndx.function(step, threads=threads) if traced else step


BAG_IDS = 4  # T3: ids per bag, on average


def bag_batches(rows_n, batch, batches=4, seed=21):
    """T3's `batches` batches of (bag ids [BAG_IDS * batch], offsets [batch], item ids
    [batch, 1], ratings [batch]): uniform int32 ids below rows_n; every bag holds at least one id and the
    other (BAG_IDS - 1) * batch fall at uniform cut points (PyTorch's EmbeddingBag offsets)."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, rows_n, (batches, BAG_IDS * batch), dtype=np.int32)
    cuts = np.sort(rng.integers(0, (BAG_IDS - 1) * batch + 1, (batches, batch - 1)), axis=1)
    offsets = np.zeros((batches, batch), np.int32)
    offsets[:, 1:] = cuts + np.arange(1, batch)
    items = rng.integers(0, rows_n, (batches, batch, 1), dtype=np.int32)
    ratings = rng.uniform(-1, 1, (batches, batch)).astype(np.float32)
    return ids, offsets, items, ratings


def bag_train_step(U, V, opt, threads=None, traced=True):
    """T3's step on Variables U and V: each example's left side is the mean of its bag's rows
    of U (ndx.nn.embedding_bag with offsets, as PyTorch's nn.EmbeddingBag(mode="mean")), pred =
    sum(bag * V[i], 1), loss = sum((pred - r)^2), the tape's gradients (slices) applied by
    `opt`; traced and threads as train_step's."""
    def step(bag_ids, offsets, item, rating):
        with ndx.GradientTape() as tape:
            bag = ndx.nn.embedding_bag(U, bag_ids, offsets, combiner="mean")
            pred = ndx.reduce_sum(bag * ndx.gather_nd(V, item), 1)
            diff = pred - rating
            loss = ndx.reduce_sum(diff * diff, 0)
        opt.apply_gradients(zip(tape.gradient(loss, [U, V]), [U, V]))
        return loss
    return ndx.function(step, threads=threads) if traced else step


def train_step_vs_c(threads, steps, rounds=5):
    rows_n, batch, rank, batches = 1_000_000, 65_536, 64, 4
    users, items, ratings = train_batches(rows_n, batch, batches)
    makers = TRAIN_OPTIMIZERS
    steps_fns = {}
    for name, _, make in makers:
        U = ndx.Variable(np.full((rows_n, rank), 0.01, np.float32), name="U")
        V = ndx.Variable(np.full((rows_n, rank), 0.01, np.float32), name="V")
        step = train_step(U, V, make(), threads)
        step(users[0], items[0], ratings[0])  # the first step: trace, plan, pool, tables
        steps_fns[name] = step
    c_rounds, py_rounds = {}, {}  # per workload, the median step of each round
    for _ in range(rounds):  # interleaved: the C process, then the Python steps
        c = _c_bench(["T1", "T2"], threads)
        for name, _, _ in makers:
            c_rounds.setdefault(name, []).append(c[name]["step_s"])
            times = []
            for k in range(1, steps + 1):
                b = k % batches
                t0 = timeit.default_timer()
                steps_fns[name](users[b], items[b], ratings[b])
                times.append(timeit.default_timer() - t0)
            py_rounds.setdefault(name, []).append(float(np.median(times)))
    print(f"training step at [{rows_n}, {rank}] tables, batches of {batch} ({rounds} interleaved "
          f"rounds of the median of {steps} steps: their best and their median; "
          f"threads={threads or 'all'})")
    for name, what, _ in makers:
        for stat, pick in (("best", min), ("median", lambda v: float(np.median(v)))):
            py, c_s = pick(py_rounds[name]), pick(c_rounds[name])
            print(f"  {name} {what:15s} {stat:6s} python {py * 1e3:8.2f} ms   C session (ndx "
                  f"bench {name}) {c_s * 1e3:8.2f} ms   python/C x{py / c_s:.3f} (goal <= 1.10)")
    # The Python layer alone, in one process: each call against the same session's bare run
    # (_Session.run with the same feeds, fetches and targets), alternating call by call.
    print("  the Python layer: the call against its session's bare run, alternating (medians)")
    for name, what, _ in makers:
        step = steps_fns[name]
        cf = next(iter(step._cache.values()))
        session = cf._session(threads, None)
        call, bare = [], []
        for k in range(1, 2 * steps + 1):
            b = k % batches
            feeds = [(t.op, 0, a, None) for t, a in zip(cf.inputs, (users[b], items[b],
                                                                     ratings[b]))]
            t0 = timeit.default_timer()
            step(users[b], items[b], ratings[b])
            t1 = timeit.default_timer()
            session.run(feeds, cf._fetches, cf._targets)
            t2 = timeit.default_timer()
            call.append(t1 - t0)
            bare.append(t2 - t1)
        c_med, b_med = float(np.median(call)), float(np.median(bare))
        print(f"  {name} {what:15s} call {c_med * 1e3:8.2f} ms   bare run {b_med * 1e3:8.2f} ms   "
              f"x{c_med / b_med:.3f}")


def vs_c(argv):
    threads = int(argv[argv.index("--threads") + 1]) if "--threads" in argv else None
    steps = int(argv[argv.index("--steps") + 1]) if "--steps" in argv else 20
    replace_minus_one_vs_c(threads)
    train_step_vs_c(threads, steps)


if __name__ == "__main__":
    if "--vs-c" not in sys.argv:
        main()
    vs_c(sys.argv)
