"""peer_compare.py — what bench/family_compare.py and bench/sparse_compare.py share: the
machine's bandwidths (bench/baseline.c), alternating best-of-R timing, result checks, the run
over thread counts and the Markdown table.

A workload is a dict: ndx=fn(threads) -> (run, result); eager=(run, result), the plain call;
peers={name: setup(threads) -> (run, result)}; check=fn(got, want) -> "" or what differs (a
peer's result against ndx's); eager_check (default: exact); stream and random, the bytes the op
must move contiguously and as random rows (the floor); note, a line under the table."""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# The random-row probe: 1,310,720 reads of 256-byte rows of a [1,000,000, 64] float32 table.
PROBE_TABLE_ROWS, PROBE_WIDTH, PROBE_ROWS_READ = 1_000_000, 64, 1_310_720
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
            n, row = PROBE_ROWS_READ, PROBE_WIDTH * 4
            rows = n * row / self._median(["rows", PROBE_TABLE_ROWS, row, n, threads, 7])
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


# ---- timing and checks -------------------------------------------------------------------------------------

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


def torch_or_none():
    try:
        import torch
        return torch
    except ImportError:
        return None


def close(got, want):
    got = np.asarray(got)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} instead of {list(want.shape)}"
    bad = ~np.isclose(got, want, rtol=1e-4, atol=1e-4)
    return f"{int(bad.sum())} elements differ" if bad.any() else ""


def exact(got, want):
    got = np.asarray(got)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} instead of {list(want.shape)}"
    return f"{int(np.sum(got != want))} elements differ" if not np.array_equal(got, want) else ""


def call(fn, *args, out=None):
    """(run, result) of a callable on fixed arguments, keeping its last result."""
    last = {}

    def run():
        last["r"] = fn(*args) if out is None else fn(*args, out=out)
    return run, (lambda: last["r"] if out is None else out)


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
            note = spec.get("eager_check", exact_parts)(eresult(), want)
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


def exact_parts(got, want):
    if isinstance(want, tuple):
        return next((n for n in (exact(g, w) for g, w in zip(got, want)) if n), "")
    return exact(got, want)


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


def main(doc, workloads, skip=lambda name: None):
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--only", default="", help="run the workloads whose name contains this")
    ap.add_argument("--baseline", default=os.path.join(HERE, "..", "build-family",
                                                       "ndx-baseline"))
    args = ap.parse_args()
    bw = Bandwidth(build_baseline(args.baseline))
    torch = torch_or_none()
    if torch is None:
        print("PyTorch is not installed: its columns are skipped", file=sys.stderr)
    rows, notes = [], {}
    load_before = os.getloadavg()[0]
    for name, make in workloads().items():
        if args.only and args.only not in name:
            continue
        why = skip(name)
        if why:
            print(f"{name}: skipped ({why})", flush=True)
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
                                               f"random {PROBE_WIDTH * 4}-byte rows {rr / 1e9:.1f} GB/s")
    notes["load average (1 min)"] = f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    print()
    print(report(rows, notes))
    return 0
