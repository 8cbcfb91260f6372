"""bench/python_compare.py — what calling ndx from Python costs on tiny inputs: per call, the
module (`import ndx`) against the same call from C (bench/tiny_calls.c), NumPy's fastest
equivalent and PyTorch's, on a 4-element gather_nd, a 4-row scatter-add and the
replace -1 entries program's stitch.

    python3 bench/python_compare.py --tiny-calls PATH [--iterations N]

bench/compare runs it (after installing the module into build-bench/venv) and prints its table
before the workloads'. Medians of 15 rounds of the mean time per call, in microseconds.

    python3 bench/python_compare.py --elementwise [--elements N] [--rounds R] [--batch K]

times the eager elementwise glue ops against NumPy's same call on N float32 elements (default
1,000,000): ndx.add, subtract, multiply, divide of two arrays, not_equal against a scalar, cast
to int32, and `x * b` and `x * b + c` on a TapedArray x under an ndx.GradientTape (a tape per
call) against NumPy's `a * b` and `a * b + c` (where NumPy adds c in place into its temporary
a * b; the tape keeps x * b, as TensorFlow's does). Each round times K calls of ndx and K of
NumPy, alternating which goes first; it prints the median ms per call of each, the median and
quartiles of the rounds' ratios ndx / NumPy (1 or less: ndx no slower), the best round of each
(what a quiet core gives), and the load average before and after."""
import argparse
import os
import subprocess
import time

import numpy as np

import ndx


def per_call_us(fn, iterations):
    fn()
    rounds = []
    for _ in range(15):
        t0 = time.perf_counter_ns()
        for _ in range(iterations):
            fn()
        rounds.append((time.perf_counter_ns() - t0) / iterations / 1e3)
    return sorted(rounds)[7]


def cases():
    """name -> (ndx call, [(recipe, NumPy call)], [(recipe, PyTorch call)], check)"""
    params = np.arange(8, dtype=np.float32)
    gather_rows = np.array([[1], [3], [5], [7]], np.int64)
    tensor = np.zeros((8, 4), np.float32)
    scatter_rows = np.array([[4], [3], [1], [7]], np.int64)
    updates = np.arange(1, 17, dtype=np.float32).reshape(4, 4)
    flat_scatter = scatter_rows.reshape(-1)
    i0, i1 = np.array([1, 4], np.int32), np.array([0, 2, 3, 5], np.int32)
    d0 = np.array([-1, -1], np.float32)
    d1 = np.array([1.1, 6.2, 5.3, 8.4], np.float32)

    def np_scatter_add():
        out = tensor.copy()
        np.add.at(out, flat_scatter, updates)
        return out

    def np_stitch():
        out = np.empty(6, np.float32)
        out[i0] = d0
        out[i1] = d1
        return out

    out = dict(
        gather4=(lambda: ndx.gather_nd(params, gather_rows),
                 [("np.take", lambda: np.take(params, gather_rows[:, 0])),
                  ("fancy indexing", lambda: params[gather_rows[:, 0]]),
                  ("tuple indexing", lambda: params[tuple(gather_rows.T)])], []),
        scatter_add4=(lambda: ndx.tensor_scatter_nd_add(tensor, scatter_rows, updates),
                      [("copy + np.add.at", np_scatter_add)], []),
        stitch_replace_minus_one=(lambda: ndx.dynamic_stitch([i0, i1], [d0, d1]),
                                  [("empty + fancy assignment", np_stitch)], []),
    )
    try:
        import torch
        torch.set_num_threads(1)
        tp, tr = torch.from_numpy(params), torch.from_numpy(gather_rows)
        tt, ts, tu = torch.from_numpy(tensor), torch.from_numpy(flat_scatter), torch.from_numpy(updates)
        ti0, ti1 = torch.from_numpy(i0.astype(np.int64)), torch.from_numpy(i1.astype(np.int64))
        td0, td1 = torch.from_numpy(d0), torch.from_numpy(d1)

        def torch_stitch():
            o = torch.empty(6)
            o[ti0] = td0
            o[ti1] = td1
            return o
        out["gather4"][2].append(("index_select", lambda: torch.index_select(tp, 0, tr[:, 0])))
        out["scatter_add4"][2].append(("index_add", lambda: tt.index_add(0, ts, tu)))
        out["stitch_replace_minus_one"][2].append(("empty + index_put_", torch_stitch))
    except ImportError:
        pass
    for name, (call, np_recipes, torch_recipes) in out.items():  # all agree before timing
        want = np.asarray(np_recipes[0][1]())
        assert np.array_equal(call().reshape(want.shape), want), name
        for _, r in torch_recipes:
            assert np.array_equal(np.asarray(r()).reshape(want.shape), want), name
    return out


def elementwise_cases(n):
    """name -> (ndx call, NumPy call): the eager elementwise ops on n float32 elements; each
    pair is checked to give the same values before timing."""
    rng = np.random.default_rng(7)
    a, b, c = (rng.uniform(-2, 2, n).astype(np.float32) for _ in range(3))
    b[b == 0] = 1
    a[::3] = -1
    minus_one = np.float32(-1)
    v = ndx.Variable(a)

    def taped(expression):
        def call():
            with ndx.GradientTape():
                x = v.read_value()  # a TapedArray the tape follows
                return expression(x)
        return call
    out = dict(
        add=(lambda: ndx.add(a, b), lambda: np.add(a, b)),
        subtract=(lambda: ndx.subtract(a, b), lambda: np.subtract(a, b)),
        multiply=(lambda: ndx.multiply(a, b), lambda: np.multiply(a, b)),
        divide=(lambda: ndx.divide(a, b), lambda: np.divide(a, b)),
        not_equal=(lambda: ndx.not_equal(a, -1.0), lambda: np.not_equal(a, minus_one)),
        cast_int32=(lambda: ndx.cast(a, ndx.int32), lambda: a.astype(np.int32)),
        taped_mul=(taped(lambda x: x * b), lambda: a * b),
        taped_mul_add=(taped(lambda x: x * b + c), lambda: a * b + c),
    )
    for name, (mine, theirs) in out.items():
        assert np.array_equal(np.asarray(mine()), theirs()), name
    return out


def elementwise(args):
    """The --elementwise table (see the top of this file)."""
    load = os.getloadavg()
    print(f"{args.elements:,} float32 elements; {args.rounds} rounds of {args.batch} calls each; "
          f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    head = ["op", "ndx ms", "NumPy ms", "ndx/NumPy (median)", "quartiles", "best ndx ms",
            "best NumPy ms"]
    rows = []
    for name, calls in elementwise_cases(args.elements).items():
        times = ([], [])
        for r in range(args.rounds):
            for k in ((0, 1) if r % 2 == 0 else (1, 0)):
                t0 = time.perf_counter_ns()
                for _ in range(args.batch):
                    calls[k]()
                times[k].append((time.perf_counter_ns() - t0) / args.batch / 1e6)
        ratios = sorted(x / y for x, y in zip(*times))
        mid = [sorted(t)[len(t) // 2] for t in times]
        q = len(ratios) // 4
        rows.append([name, f"{mid[0]:.3f}", f"{mid[1]:.3f}", f"{ratios[len(ratios) // 2]:.2f}",
                     f"{ratios[q]:.2f}-{ratios[-1 - q]:.2f}", f"{min(times[0]):.3f}",
                     f"{min(times[1]):.3f}"])
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    load = os.getloadavg()
    print(f"load after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny-calls", help="bench/tiny_calls.c built (the per-call table)")
    ap.add_argument("--iterations", type=int, default=100000)
    ap.add_argument("--elementwise", action="store_true",
                    help="the eager elementwise ops against NumPy instead")
    ap.add_argument("--elements", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--batch", type=int, default=5)
    args = ap.parse_args()
    if args.elementwise:
        return elementwise(args)
    if not args.tiny_calls:
        ap.error("--tiny-calls is required without --elementwise")
    c_lines = subprocess.run([args.tiny_calls, str(args.iterations)], capture_output=True,
                             text=True, check=True).stdout.split("\n")
    c_us = {ln.split()[0]: float(ln.split()[1]) / 1e3 for ln in c_lines if ln.strip()}
    head = ["case", "ndx from Python us", "ndx from C us", "overhead us", "NumPy us (recipe)",
            "PyTorch us (recipe)", "NumPy/ndx-Python"]
    rows = []
    for name, (call, np_recipes, torch_recipes) in cases().items():
        py = per_call_us(call, args.iterations)
        best_np = min((per_call_us(r, args.iterations), n) for n, r in np_recipes)
        best_t = min(((per_call_us(r, args.iterations), n) for n, r in torch_recipes),
                     default=None)
        rows.append([name, f"{py:.2f}", f"{c_us[name]:.2f}", f"{py - c_us[name]:.2f}",
                     f"{best_np[0]:.2f} ({best_np[1]})",
                     f"{best_t[0]:.2f} ({best_t[1]})" if best_t else "not installed",
                     f"{best_np[0] / py:.2f}"])
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    print("Targets (issues 12, 21): overhead under 1 us; NumPy/ndx-Python at least 1 (no slower "
          "than NumPy's fastest equivalent); the C call of gather4 under 0.1 us.")


if __name__ == "__main__":
    main()
