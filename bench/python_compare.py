"""bench/python_compare.py — what calling ndx from Python costs on tiny inputs: per call, the
module (`import ndx`) against the same call from C (bench/tiny_calls.c), NumPy's fastest
equivalent and PyTorch's, on a 4-element gather_nd, a 4-row scatter-add and the
replace -1 entries program's stitch.

    python3 bench/python_compare.py --tiny-calls PATH [--iterations N]

bench/compare runs it (after installing the module into build-bench/venv) and prints its table
before the workloads'. Medians of 15 rounds of the mean time per call, in microseconds."""
import argparse
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny-calls", required=True, help="bench/tiny_calls.c built")
    ap.add_argument("--iterations", type=int, default=100000)
    args = ap.parse_args()
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
