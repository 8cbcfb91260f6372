"""family_compare.py — the index family (embedding_bag, unsorted segment sum and max, gather,
unique, bincount) through ndx's Python module against PyTorch and NumPy, in one run.

    /usr/bin/python3 -m venv --system-site-packages build-py/venv   # once, then install ndx:
    build-py/venv/bin/pip install --quiet --no-build-isolation --no-index ./python
    build-py/venv/bin/python bench/family_compare.py [--threads 1 2] [--repeat 7] [--only gather]

Inputs come from NumPy's generator with a fixed seed. Every contender's result is checked against
ndx's before timing (sums: allclose; everything else exactly); a wrong one is marked ✗ and never
counts. ndx runs as an ndx.function traced once per thread count (threads=T), PyTorch under
torch.set_num_threads(T); NumPy is single-threaded (timed at every T all the same). The time is
the best of R repetitions, the contenders taking turns within each repetition, after one warm-up
each. Outputs are reused where every contender can write into a given array (gather: np.take's and
index_select's out=, ndx's out=; segment sums: zeroed and accumulated into) and allocated by each
call otherwise. `ndx eager` is the plain call (ndx.gather(...)), every core: against the traced
call at the most threads it shows what the eager path's Python costs.

The floor is the traffic the op must move at the measured bandwidths of this machine (bench/
baseline.c, compiled here with cc -O3 -fopenmp as bench/compare does): contiguous bytes (read +
written) at memcpy's rate, plus rows read at random at the rate of a plain loop summing random rows
(`baseline rows`). Ratios: peer/ndx is the fastest correct
peer's time over ndx's (above 1, ndx is faster); ndx/floor how far ndx is from the floor."""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

import ndx

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20261129
TABLE_ROWS, WIDTH = 1_000_000, 64
BAGS = 65536
SEGMENTS = 65536
GATHER_IDS = 1_310_720
UNIQUE_N = 10_000_000
BINCOUNT_N, BINCOUNT_RANGE = 10_000_000, 1_000_000
SLOW_S = 1.0


# ---- the machine's bandwidths -----------------------------------------------------------------

class Bandwidth:
    """Streaming (memcpy) and random-row rates of bench/baseline.c, per thread count, in
    bytes per second."""

    def __init__(self, baseline):
        self.baseline = baseline
        self.cache = {}

    def _median(self, argv):
        out = subprocess.run([self.baseline] + [str(a) for a in argv], check=True,
                             capture_output=True, text=True).stdout
        return float(out.split("median_s=")[1].split()[0])

    def rates(self, threads):
        if threads not in self.cache:
            half = 256 << 20
            stream = 2 * half / self._median(["memcpy", half, threads, 7])
            n, row = GATHER_IDS, WIDTH * 4
            rows = n * row / self._median(["rows", TABLE_ROWS, row, n, threads, 7])
            self.cache[threads] = (stream, rows)
        return self.cache[threads]

    def floor_s(self, threads, stream_bytes, random_bytes):
        stream, rows = self.rates(threads)
        return stream_bytes / stream + random_bytes / rows


def build_baseline(path):
    src = os.path.join(HERE, "baseline.c")
    if not os.path.exists(path) or os.path.getmtime(src) > os.path.getmtime(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        subprocess.run(["cc", "-O3", "-fopenmp", "-std=gnu11", src, "-o", path], check=True)
    return path


# ---- timing -------------------------------------------------------------------------------------

def best_alternating(runs, repeat):
    """{name: best seconds} over `repeat` rounds in which every run takes its turn (the order
    rotating), after one warm-up each; one whose warm-up took over SLOW_S, over two rounds."""
    warm = {}
    for name, run in runs.items():
        t0 = time.perf_counter()
        run()
        warm[name] = time.perf_counter() - t0
    best = {name: float("inf") for name in runs}
    names = list(runs)
    for r in range(repeat):
        for name in names[r % len(names):] + names[:r % len(names)]:
            if r >= 2 and warm[name] > SLOW_S:
                continue  # (a contender taking seconds is timed twice: it is far behind anyway)
            t0 = time.perf_counter()
            runs[name]()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


# ---- workloads ----------------------------------------------------------------------------------
# Each returns dict(ndx=fn(threads) -> (run, result), eager=(run, result), peers={name: (setup(threads)
# -> (run, result))}, check=fn(got, want) -> note or "", stream=bytes, random=bytes, note=str).

def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _close(got, want):
    got = np.asarray(got)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} instead of {list(want.shape)}"
    bad = ~np.isclose(got, want, rtol=1e-4, atol=1e-4)
    return f"{int(bad.sum())} elements differ" if bad.any() else ""


def _exact(got, want):
    got = np.asarray(got)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} instead of {list(want.shape)}"
    return f"{int(np.sum(got != want))} elements differ" if not np.array_equal(got, want) else ""


def _call(fn, *args, out=None):
    """(run, result) of a callable on fixed arguments, keeping its last result."""
    last = {}

    def run():
        last["r"] = fn(*args) if out is None else fn(*args, out=out)
    return run, (lambda: last["r"] if out is None else out)


def table(rng):
    return rng.standard_normal((TABLE_ROWS, WIDTH), dtype=np.float32)


def embedding_bag(rng, combiner, params):
    lengths = rng.integers(10, 31, BAGS)  # about 20 ids a bag
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    ids = rng.integers(0, TABLE_ROWS, int(lengths.sum()), dtype=np.int64)
    torch = _torch()
    out_bytes = BAGS * WIDTH * 4

    def mine(threads):
        f = ndx.function(lambda p, i, o: ndx.nn.embedding_bag(p, i, o, combiner=combiner),
                         threads=threads)
        return _call(f, params, ids, offsets)

    peers = {}
    if torch:
        tp, ti, to = (torch.from_numpy(a) for a in (params, ids, offsets))
        peers["torch embedding_bag"] = lambda threads: _call(
            lambda: torch.nn.functional.embedding_bag(ti, tp, to, mode=combiner).numpy())
    return dict(ndx=mine, peers=peers, check=_close,
                eager=_call(lambda: ndx.nn.embedding_bag(params, ids, offsets, combiner=combiner)),
                stream=ids.nbytes + offsets.nbytes + out_bytes, random=ids.size * WIDTH * 4,
                note=f"{ids.size} ids in {BAGS} bags")


def segment(rng, reduce, rows, width):
    data = rng.standard_normal((rows, width), dtype=np.float32)
    ids = rng.integers(0, SEGMENTS, rows, dtype=np.int64)
    torch = _torch()
    out = np.empty((SEGMENTS, width), np.float32)
    lowest = np.finfo(np.float32).min  # TensorFlow's empty max segment
    op = ndx.math.unsorted_segment_sum if reduce == "sum" else ndx.math.unsorted_segment_max

    def mine(threads):
        f = ndx.function(lambda d, i: op(d, i, SEGMENTS), threads=threads)
        return _call(f, data, ids, out=out)

    def np_peer(threads):
        o = np.empty_like(out)

        def run():
            o.fill(0 if reduce == "sum" else lowest)
            (np.add if reduce == "sum" else np.maximum).at(o, ids, data)
        return run, (lambda: o)

    peers = {"np.add.at" if reduce == "sum" else "np.maximum.at": np_peer}
    if torch:
        td, ti = torch.from_numpy(data), torch.from_numpy(ids)
        to = torch.empty(out.shape)
        wide = ti[:, None].expand(rows, width) if width > 1 else ti.reshape(rows, 1)

        def torch_peer(threads):
            def run():
                if reduce == "sum":
                    to.zero_()
                    to.index_add_(0, ti, td)
                else:
                    to.fill_(float(lowest))
                    to.scatter_reduce_(0, wide, td, reduce="amax", include_self=False)
            return run, (lambda: to.numpy())
        peers["torch index_add_" if reduce == "sum" else "torch scatter_reduce amax"] = torch_peer
    return dict(ndx=mine, peers=peers, check=_close if reduce == "sum" else _exact,
                eager=_call(lambda: op(data, ids, SEGMENTS)),
                stream=data.nbytes + ids.nbytes + 2 * out.nbytes, random=0,
                note=f"[{rows}, {width}] into {SEGMENTS}")


def gather(rng, params):
    ids = rng.integers(0, TABLE_ROWS, GATHER_IDS, dtype=np.int64)
    torch = _torch()
    out = np.empty((GATHER_IDS, WIDTH), np.float32)

    def mine(threads):
        f = ndx.function(lambda p, i: ndx.gather(p, i), threads=threads)
        return _call(f, params, ids, out=out)

    def np_peer(threads):
        o = np.empty_like(out)
        return _call(lambda: np.take(params, ids, axis=0, out=o))[0], (lambda: o)

    peers = {"np.take": np_peer}
    if torch:
        tp, ti, to = torch.from_numpy(params), torch.from_numpy(ids), torch.empty(out.shape)
        peers["torch index_select"] = lambda threads: (
            lambda: torch.index_select(tp, 0, ti, out=to), lambda: to.numpy())
    return dict(ndx=mine, peers=peers, check=_exact, eager=_call(lambda: ndx.gather(params, ids)),
                stream=ids.nbytes + out.nbytes, random=out.nbytes,
                note=f"{GATHER_IDS} rows of [{TABLE_ROWS}, {WIDTH}]")


def unique(rng, distinct):
    x = rng.integers(0, distinct, UNIQUE_N, dtype=np.int64)
    torch = _torch()

    def mine(threads):
        f = ndx.function(lambda v: tuple(ndx.unique(v, out_idx="int64")), threads=threads)
        return _call(f, x)

    def check(got, want):
        """Peers are sorted, ndx in first-occurrence order: the same set, and y[idx] == x."""
        y, idx = (np.asarray(a) for a in got)
        if not np.array_equal(np.sort(y), np.sort(np.asarray(want[0]))):
            return "other distinct values"
        return _exact(y[idx], x)

    peers = {"np.unique": lambda threads: _call(lambda: np.unique(x, return_inverse=True))}
    if torch:
        tx = torch.from_numpy(x)
        peers["torch unique"] = lambda threads: _call(lambda: tuple(
            a.numpy() for a in torch.unique(tx, sorted=False, return_inverse=True)))
    return dict(ndx=mine, peers=peers, check=check,
                eager=_call(lambda: tuple(ndx.unique(x, out_idx="int64"))),
                stream=x.nbytes + UNIQUE_N * 8, random=0,
                note=f"{UNIQUE_N} int64, {distinct} possible values; ndx's y in first-occurrence "
                     f"order (TensorFlow's), the peers' sorted")


def bincount(rng, weighted):
    x = rng.integers(0, BINCOUNT_RANGE, BINCOUNT_N, dtype=np.int32)
    w = rng.random(BINCOUNT_N, dtype=np.float32) if weighted else None
    torch = _torch()
    size = BINCOUNT_RANGE * 4

    def mine(threads):
        f = ndx.function((lambda v, u: ndx.math.bincount(v, weights=u)) if weighted else
                         (lambda v: ndx.math.bincount(v)), threads=threads)
        return _call(f, *((x, w) if weighted else (x,)))

    peers = {"np.bincount": lambda threads: _call(lambda: np.bincount(x, weights=w))}
    if torch:
        tx = torch.from_numpy(x.astype(np.int64))  # (torch.bincount takes int64)
        tw = torch.from_numpy(w) if weighted else None
        peers["torch bincount"] = lambda threads: _call(
            lambda: torch.bincount(tx, weights=tw).numpy())
    return dict(ndx=mine, peers=peers, check=_close if weighted else _exact,
                eager=_call(lambda: ndx.math.bincount(x, weights=w)),
                stream=x.nbytes + (w.nbytes if weighted else 0) + 2 * size, random=0,
                note=f"{BINCOUNT_N} int32 in [0, {BINCOUNT_RANGE})" +
                (", float32 weights" if weighted else ""))


def workloads():
    """name -> builder of the workload (inputs drawn when it is run)."""
    rng = np.random.default_rng(SEED)
    shared = {}

    def params():
        if "t" not in shared:
            shared["t"] = table(np.random.default_rng(SEED - 1))
        return shared["t"]
    w = {
        "embedding_bag sum": lambda: embedding_bag(rng, "sum", params()),
        "embedding_bag mean": lambda: embedding_bag(rng, "mean", params()),
        "unsorted_segment_sum [1310720,64]": lambda: segment(rng, "sum", 1_310_720, 64),
        "unsorted_segment_max [1310720,64]": lambda: segment(rng, "max", 1_310_720, 64),
        "unsorted_segment_sum [10M,1]": lambda: segment(rng, "sum", 10_000_000, 1),
        "unsorted_segment_max [10M,1]": lambda: segment(rng, "max", 10_000_000, 1),
        "gather axis 0": lambda: gather(rng, params()),
        "unique ~100 distinct": lambda: unique(rng, 100),
        "unique ~1M distinct": lambda: unique(rng, 1_000_000),
        "bincount": lambda: bincount(rng, False),
        "bincount weighted": lambda: bincount(rng, True),
    }
    return w


# ---- the run ------------------------------------------------------------------------------------

def measure(name, spec, threads_list, repeat, bw, torch):
    rows = []
    for threads in threads_list:
        if torch:
            torch.set_num_threads(threads)
        run, result = spec["ndx"](threads)
        run()
        want = result()
        runs, results, notes = {"ndx": run}, {}, {}
        for peer, setup in spec["peers"].items():
            prun, presult = setup(threads)
            prun()
            note = spec["check"](presult(), want)
            notes[peer] = note
            runs[peer] = prun
        if threads == max(threads_list):
            erun, eresult = spec["eager"]
            erun()
            note = spec["check"](eresult(), want) if name.startswith("unique") else _exact_tuple(
                eresult(), want)
            notes["ndx eager"] = note
            runs["ndx eager"] = erun
        best = best_alternating(runs, repeat)
        correct = {p: t for p, t in best.items() if p in spec["peers"] and not notes[p]}
        fastest = min(correct, key=correct.get) if correct else None
        floor = bw.floor_s(threads, spec["stream"], spec["random"])
        rows.append(dict(name=name, threads=threads, best=best, notes=notes, fastest=fastest,
                         floor=floor))
        del runs, results
    return rows


def _exact_tuple(got, want):
    if isinstance(want, tuple):
        return next((n for n in (_exact(g, w) for g, w in zip(got, want)) if n), "")
    return _exact(got, want)


def report(rows, spec_notes):
    head = ["workload", "T", "ndx ms", "ndx eager ms", "peers ms", "fastest correct peer",
            "peer/ndx", "floor ms", "ndx/floor"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        b = r["best"]
        peers = ", ".join(f"{p} {1e3 * t:.1f}" + (f" ✗ ({r['notes'][p]})" if r["notes"][p] else "")
                          for p, t in b.items() if p not in ("ndx", "ndx eager"))
        eager = b.get("ndx eager")
        eager_txt = "" if eager is None else (f"{1e3 * eager:.1f}" +
                                              (" ✗" if r["notes"]["ndx eager"] else ""))
        f = r["fastest"]
        lines.append("| " + " | ".join([
            r["name"], str(r["threads"]), f"{1e3 * b['ndx']:.1f}", eager_txt, peers,
            f or "none", f"{b[f] / b['ndx']:.2f}" if f else "", f"{1e3 * r['floor']:.1f}",
            f"{b['ndx'] / r['floor']:.2f}"]) + " |")
    lines.append("")
    lines += [f"- {n}: {t}" for n, t in spec_notes.items()]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--only", default="", help="run the workloads whose name contains this")
    ap.add_argument("--baseline", default=os.path.join(HERE, "..", "build-family",
                                                       "ndx-baseline"))
    args = ap.parse_args()
    bw = Bandwidth(build_baseline(args.baseline))
    torch = _torch()
    if torch is None:
        print("PyTorch is not installed: its columns are skipped", file=sys.stderr)
    rows, notes = [], {}
    load_before = os.getloadavg()[0]
    for name, make in workloads().items():
        if args.only and args.only not in name:
            continue
        if name.startswith("bincount") and not hasattr(ndx.math, "bincount"):
            print(f"{name}: skipped (this ndx has no ndx.math.bincount)", flush=True)
            continue
        spec = make()
        notes[name] = spec["note"]
        new = measure(name, spec, args.threads, args.repeat, bw, torch)
        for r in new:
            print(f"{name} T={r['threads']}: " + ", ".join(
                f"{p} {1e3 * t:.1f} ms" + (" ✗" if r["notes"].get(p) else "")
                for p, t in r["best"].items()) + f", floor {1e3 * r['floor']:.1f} ms",
                flush=True)
        rows += new
        del spec
    for t in args.threads:
        s, rr = bw.rates(t)
        notes[f"bandwidth at {t} thread(s)"] = (f"memcpy {s / 1e9:.1f} GB/s (read + written), "
                                               f"random {WIDTH * 4}-byte rows {rr / 1e9:.1f} GB/s")
    notes["load average (1 min)"] = f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    print()
    print(report(rows, notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
