"""graph_compare.py — the graph layer's per-run cost, in one run: `ndx bench N3 N20` (a warm
session against the same ops called directly from C) beside the same two programs written with
NumPy, the way a Python user would (the replace -1 entries program on 6 elements; a chain of 20
row gathers on an [8, 4] array). NumPy's results are checked against the program's documented
answer and a plain loop. Then saved graphs: `ndx bench L10K` (reading a 10,000-node graph) and
the wall time of a whole `ndx run` of examples/graphs/replace_minus_one.txt (process start, load,
run, write).

    /usr/bin/python3 bench/graph_compare.py [--ndx build/ndx] [--repeat 7]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

N3_X = np.array([0.1, -1.0, 5.2, 4.3, -1.0, 7.4], dtype=np.float32)
CHAIN_INDEX = np.arange(7, -1, -1)


def replace_minus_one_numpy(x):
    """tf.dynamic_partition / tf.dynamic_stitch written with NumPy."""
    mask = (x != np.float32(-1.0)).astype(np.int32)
    parts = [x[mask == p] for p in range(2)]
    parts[1] = parts[1] + np.float32(1.0)
    where = np.arange(x.size, dtype=np.int32)
    positions = [where[mask == p] for p in range(2)]
    rows = max((int(p.max()) + 1 for p in positions if p.size), default=0)
    out = np.zeros(rows, dtype=x.dtype)
    for p in range(2):
        out[positions[p]] = parts[p]
    return out


def chain_numpy(params):
    y = params
    for _ in range(20):
        y = y[CHAIN_INDEX]
    return y


def per_call_us(fn, arg, repeat, calls=2000):
    samples = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(arg)
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples[1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ndx", default="build/ndx")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    want = np.array([1.1, -1.0, 6.2, 5.3, -1.0, 8.4], dtype=np.float32)
    if not np.allclose(replace_minus_one_numpy(N3_X), want):
        sys.exit("graph_compare: NumPy's replace -1 entries program gives the wrong answer")
    params = np.arange(32, dtype=np.float32).reshape(8, 4)
    if not np.array_equal(chain_numpy(params), params):  # 20 reversals are the identity
        sys.exit("graph_compare: NumPy's chain gives the wrong answer")

    proc = subprocess.run([args.ndx, "bench", "N3", "N20", "--threads", "1", "--repeat",
                           str(max(5, args.repeat))], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    ndx = {}
    for line in proc.stdout.splitlines():
        fields = dict(f.split("=") for f in line.split()[1:])
        ndx[line.split()[0]] = fields
    numpy_us = {"N3": per_call_us(replace_minus_one_numpy, N3_X, args.repeat),
                "N20": per_call_us(chain_numpy, params, args.repeat)}

    print("| program | nodes | ndx graph, warm session (us) | ndx direct calls (us) | "
          "overhead per node (us) | NumPy (us) | NumPy / ndx graph |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    names = {"N3": "replace -1 entries on 6 elements", "N20": "chain of 20 gather_nd, [8, 4]"}
    for key in ("N3", "N20"):
        f = ndx[key]
        g = float(f["graph_us"])
        print(f"| {names[key]} | {f['nodes']} | {g:.2f} | {float(f['direct_us']):.2f} | "
              f"{float(f['overhead_per_node_us']):.3f} | {numpy_us[key]:.2f} | "
              f"{numpy_us[key] / g:.1f}x |")
    saved_graphs(args.ndx, args.repeat)


def saved_graphs(ndx, repeat):
    proc = subprocess.run([ndx, "bench", "L10K", "--repeat", str(max(5, repeat))],
                          capture_output=True, text=True, check=True)
    load = dict(f.split("=") for f in proc.stdout.split()[1:])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    graph = os.path.join(root, "examples", "graphs", "replace_minus_one.txt")
    with tempfile.TemporaryDirectory() as d:
        x, y = os.path.join(d, "x.npy"), os.path.join(d, "y.npy")
        np.save(x, N3_X)
        cmd = [ndx, "run", graph, "--feed", "x=" + x, "--fetch", "y=" + y, "--threads", "1"]
        info = [ndx, "info", x]
        run_ms, info_ms = [], []
        for _ in range(max(15, repeat)):
            for cmdline, out in ((cmd, run_ms), (info, info_ms)):
                t0 = time.perf_counter()
                subprocess.run(cmdline, check=True, capture_output=True)
                out.append((time.perf_counter() - t0) * 1e3)
        if not np.allclose(np.load(y), [1.1, -1.0, 6.2, 5.3, -1.0, 8.4]):
            sys.exit("graph_compare: ndx run gave the wrong answer")
    print()
    print("| saved graphs | median |")
    print("|---|---:|")
    print(f"| read a 10,000-node graph (`ndx bench L10K`, {int(load['text_bytes']) // 1024} KiB "
          f"of text) | {float(load['load_s']) * 1e3:.1f} ms ({float(load['us_per_node']):.2f} "
          f"us per node) |")
    print(f"| `ndx run` of replace_minus_one.txt, whole process (start, load, run, write y.npy) | "
          f"{statistics.median(run_ms):.2f} ms |")
    print(f"| `ndx info` of one .npy, whole process, for scale | "
          f"{statistics.median(info_ms):.2f} ms |")


if __name__ == "__main__":
    main()
