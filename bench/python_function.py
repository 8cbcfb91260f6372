"""ndx.function against eager calls and NumPy, and what the graph dispatch costs the eager path.

  PYTHONPATH=python /usr/bin/python3 bench/python_function.py   (after building the module in
  place: cd python && python3 setup.py build_ext --inplace; or with an installed ndx)

Prints, per case, the best of several interleaved rounds (microseconds per call) and ratios:
  * the eager dispatch check: ndx.gather_nd on 4 elements against the same wrapper without the
    check, the private C function it wraps (_ndx._gather_nd) and NumPy's fancy indexing;
  * seed 003 as one @ndx.function call against the same ops called eagerly one by one and a
    NumPy version, at 6 and 1,000,000 elements."""
import timeit

import numpy as np

import ndx
from ndx import _ndx


def best(fn, number, rounds=7):
    return min(timeit.repeat(fn, number=number, repeat=rounds)) / number * 1e6


@ndx.function(input_signature=[ndx.TensorSpec([None], ndx.float32)])
def seed003(x):
    mask = ndx.cast(ndx.not_equal(x, -1.0), ndx.int32)
    data = ndx.dynamic_partition(x, mask, 2)
    data[1] = data[1] + 1.0
    where = ndx.dynamic_partition(ndx.range(ndx.shape(x)[0]), mask, 2)
    return ndx.dynamic_stitch(where, data)


def seed003_eager(x):
    mask = (x != -1.0).astype(np.int32)
    data = ndx.dynamic_partition(x, mask, 2)
    data[1] = data[1] + np.float32(1.0)
    where = ndx.dynamic_partition(np.arange(x.size, dtype=np.int32), mask, 2)
    return ndx.dynamic_stitch(where, data)


def gather_nd_without_check(params, indices, batch_dims=0, name=None, *, bad_indices=None,
                            threads=None, max_memory=None):
    """ndx.gather_nd's wrapper as it was before graphs: no trace check."""
    return _ndx._gather_nd(params, indices, batch_dims, bad_indices, threads, max_memory)


def seed003_numpy(x):
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
        assert np.array_equal(seed003(x), seed003_numpy(x))
        number = 2000 if n < 100 else 10
        rows = {}
        for _ in range(3):
            for name, fn in (("ndx.function (one graph call)", lambda: seed003(x)),
                             ("ndx eager, op by op", lambda: seed003_eager(x)),
                             ("numpy np.where", lambda: seed003_numpy(x))):
                rows[name] = min(rows.get(name, 1e9), best(fn, number, 3))
        base = rows["ndx.function (one graph call)"]
        print(f"seed 003 at {n} elements (us per call; ratio to ndx.function)")
        for name, us in rows.items():
            print(f"  {name:32s} {us:10.1f} us  x{us / base:.2f}")


if __name__ == "__main__":
    main()
