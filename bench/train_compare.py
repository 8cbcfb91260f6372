"""train_compare.py — training steps, ndx's ways against PyTorch's and the memory floor.

The step is examples/train_embedding.c's model at the bench size: user and item tables of
[1,000,000, 64] float32, batches of 65,536 (user, item, rating) triples with uniform ids (4
batches used in turn), pred = sum(U[u] * V[i], 1), loss = sum((pred - r)^2), the gradients as
slices of 65,536 rows per table, then sparse SGD (T1, lr 0.01) or sparse Adagrad (T2, lr 0.1,
accumulators from 0.1) on both tables. The contenders, at each thread count T:

  ndx C        `ndx bench T1 T2 T3 --threads T` (one ndx_session_run_targets per step; it also
               reports the allocations of every step after the first, which must be 0)
  ndx traced   the step written the TensorFlow way in Python: ndx.Variable tables, an
               @ndx.function(threads=T) with a GradientTape and ndx.optimizers.SGD / Adagrad
               (bench/python_function.py's train_step; T3: bag_train_step)
  ndx eager    the same Python code without ndx.function (an eager GradientTape); eager ops use
               every core of the process's affinity mask, so below the machine's core count its
               worker process is pinned to T cores
  PyTorch      bench/train_torch.py: nn.Embedding(sparse=True) twice (T3: nn.EmbeddingBag for U)
               and torch.optim.SGD / Adagrad, torch.set_num_threads(T) (skipped when torch is
               not installed)

Timing: ROUNDS rounds per thread count; in each, every contender in turn times STEPS steps (after
one untimed step) and gives their median. The table shows, per contender, the median over the
rounds with the spread (min-max), and the ratios taken round by round (so a contender is compared
with the PyTorch run next to it: PyTorch's rate alone moves 2x between runs on a shared machine).

T3 is the bag step: U's row is replaced by the mean of a bag of U's rows (ndx: the EmbeddingBag
kind with offsets, ndx.nn.embedding_bag(U, ids, offsets, combiner="mean") from Python; PyTorch:
nn.EmbeddingBag(mode="mean", sparse=True)), 262,144 uniform ids in 65,536 bags of at least one
id (4 on average: the other 196,608 fall at uniform cut points), sparse SGD (lr 0.01) on both
tables.

The floor: the traffic the step cannot avoid, at this machine's rates measured in the same run
by bench/baseline.c (random rows summed, and memcpy), each probe shaped as the traffic it
prices. With D the distinct ids a batch gathers from the tables (the expectation for uniform
ids: 2 x 63,508 for T1 and T2; 230,5xx of U plus 63,508 of V for T3), per step:
  rows first read     the D rows of the forward's gathers (T2: and the accumulators' D rows,
                      first read by the update), 256 bytes each, at the random-row rate of a
                      [1,000,000, 64] table;
  rows read again     the update reads the D rows the forward gathered: at the random-row rate
                      of a table of D rows (where the last-level cache holds them, as it does
                      here, that is the cache's rate, not memory's; priced as first reads, T1's
                      32.5 MB of them were 3.7 ms of a 15.0 ms floor at 2 threads, and the step
                      ran under that floor);
  written back        the updated rows (T2: and the accumulators'), at the rate of memcpy of
                      256 MB (dirty lines go back to memory, no latency to wait on);
  streamed blocks     [B, 64] float32 intermediates: the two gathered blocks (T3: the bags'
                      means and the item rows) written once and read twice (the forward's row
                      sums and the updates): 6 passes of B x 256 bytes, at the rate of memcpy
                      between two buffers of two blocks each (the session's pool hands the same
                      blocks out every step, so they stay in the cache where it is large enough,
                      and 256 MB's memcpy, which does not fit, overprices them). Not counted:
                      the forward's [B, 64] product (a multiply fused into the row sum needs
                      none), the two gradient blocks (an update can make each gradient row,
                      dy times the other table's gathered row, as it applies it: ndx's session
                      does), the [B] vectors (under 1% of the bytes) and, for T3, the per-id
                      gradient rows (an id's row is its bag's gradient row scaled by 1 / the
                      bag's length, so an update could read the bag's row).
Each step time is printed beside step/floor. At --scale below 1 the tables shrink but the rates
stay those of the full-size probes, so the floor there is only indicative.

    build-py/venv/bin/python bench/train_compare.py [--ndx build/ndx] [--threads 1 2]
        [--rounds 5] [--steps 20] [--scale 1] [--workloads T1 T2 T3]

Needs the ndx command (for the C step) and, for the Python contenders, the ndx module (else they
are skipped). Never fails for being slow; exits 1 if the C step allocates after its first step.
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peer_compare import PROBE_ROWS_READ, Bandwidth, build_baseline  # noqa: E402

ROWS, BATCH, WIDTH, BATCHES = 1_000_000, 65_536, 64, 4
WORKLOADS = (("T1", "sparse SGD"), ("T2", "sparse Adagrad"), ("T3", "bags, sparse SGD"))
BAG_IDS = 4  # T3: ids per bag, on average (bench_train.c's BAG_IDS, python_function.py's)


def scaled(n, scale):
    """bench_scaled() of bench/ndx_bench: the sizes `ndx bench --scale` uses."""
    return max(1, int(math.floor(n * scale)))


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return {line.split()[0]: fields(line) for line in out.stdout.splitlines() if line.strip()}


# ---- the floor --------------------------------------------------------------------------------

def distinct(rows, draws):
    """The expected count of distinct ids among `draws` uniform ids below `rows`."""
    return rows * (1 - (1 - 1 / rows) ** draws)


def traffic(workload, scale):
    """The step's unavoidable bytes by how they move: (rows first read, rows read again, rows
    written back, the rows' count read again, block passes' bytes)."""
    rows, batch = scaled(ROWS, scale), scaled(BATCH, scale)
    row = WIDTH * 4
    left = distinct(rows, BAG_IDS * batch if workload == "T3" else batch)  # U's rows
    right = distinct(rows, batch)  # V's rows
    gathered = left + right
    slots = gathered if workload == "T2" else 0  # Adagrad's accumulator rows
    first = (gathered + slots) * row  # the forward's gathers; the accumulators, by the update
    again = gathered * row  # the update reads the rows the forward gathered
    written = (gathered + slots) * row
    return first, again, written, gathered, 6 * batch * row


class StepRates:
    """The rates the floor prices the step's traffic at, per thread count, measured by
    bench/baseline.c in this run: random 256-byte rows of a [1,000,000, 64] table and memcpy of
    256 MB (Bandwidth's, for rows first read and rows written back), memcpy between two buffers
    of two [B, 64] blocks each (the intermediates, which the session's pool hands out again
    every step) and random rows of a table of the rows the forward gathered (read again by the
    update)."""

    def __init__(self, bw, scale):
        self.bw, self.scale, self.cache = bw, scale, {}

    def block_stream(self, threads):
        key = ("block", threads)
        if key not in self.cache:
            half = 2 * scaled(BATCH, self.scale) * WIDTH * 4
            self.cache[key] = 2 * half / self.bw._median(["memcpy", half, threads, 7])
        return self.cache[key]

    def rows_again(self, threads, table_rows):
        key = ("again", threads, table_rows)
        if key not in self.cache:
            n, row = PROBE_ROWS_READ, WIDTH * 4
            self.cache[key] = n * row / self.bw._median(["rows", table_rows, row, n, threads, 7])
        return self.cache[key]

    def floor_s(self, threads, workload):
        first, again, written, gathered, blocks = traffic(workload, self.scale)
        stream, random_rows = self.bw.rates(threads)
        return (first / random_rows + again / self.rows_again(threads, max(1, round(gathered)))
                + written / stream + blocks / self.block_stream(threads))


# ---- the Python contenders: a worker process per (way, thread count) ---------------------------

def worker(way, threads, scale, workloads):
    """Reads "T1 N" / "T2 N" / "T3 N" lines on stdin, answers each with the median of N steps
    (seconds). Prints "ready" once every step has run its first (untimed) step."""
    import numpy as np
    try:
        import ndx
    except ImportError:
        print("no ndx module", flush=True)
        return 0
    from python_function import (TRAIN_OPTIMIZERS, bag_batches, bag_train_step, train_batches,
                                 train_step)
    rows, batch = scaled(ROWS, scale), scaled(BATCH, scale)
    users, items, ratings = train_batches(rows, batch, BATCHES)
    bag_ids, offsets, bag_items, bag_ratings = bag_batches(rows, batch, BATCHES)
    steps, feeds = {}, {}

    def tables():
        return (ndx.Variable(np.full((rows, WIDTH), 0.01, np.float32), name="U"),
                ndx.Variable(np.full((rows, WIDTH), 0.01, np.float32), name="V"))
    for name, _, make in TRAIN_OPTIMIZERS:
        if name in workloads:
            steps[name] = train_step(*tables(), make(), threads, traced=(way == "traced"))
            feeds[name] = lambda b: (users[b], items[b], ratings[b])
    if "T3" in workloads:
        steps["T3"] = bag_train_step(*tables(), ndx.optimizers.SGD(0.01), threads,
                                     traced=(way == "traced"))
        feeds["T3"] = lambda b: (bag_ids[b], offsets[b], bag_items[b], bag_ratings[b])
    for name in steps:
        steps[name](*feeds[name](0))
    print("ready", flush=True)
    k = 0
    for line in sys.stdin:
        name, n = line.split()
        times = []
        for _ in range(int(n)):
            k += 1
            b = k % BATCHES
            t0 = time.perf_counter()
            steps[name](*feeds[name](b))
            times.append(time.perf_counter() - t0)
        print(f"{statistics.median(times)!r}", flush=True)
    return 0


class Worker:
    def __init__(self, way, threads, scale, workloads):
        pin = []
        if way == "eager" and threads < len(os.sched_getaffinity(0)):
            pin = ["taskset", "-c", ",".join(map(str, sorted(os.sched_getaffinity(0))[:threads]))]
        self.proc = subprocess.Popen(
            pin + [sys.executable, os.path.abspath(__file__), "--worker", way, "--threads",
                   str(threads), "--scale", str(scale), "--workloads"] + list(workloads),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ok = self.proc.stdout.readline().strip() == "ready"
        if not self.ok:
            self.close()

    def median(self, name, steps):
        self.proc.stdin.write(f"{name} {steps}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


# ---- the run ----------------------------------------------------------------------------------

def spread(values):
    return statistics.median(values), min(values), max(values)


def ms(values):
    m, lo, hi = spread(values)
    return f"{1e3 * m:.1f} ({1e3 * lo:.1f}–{1e3 * hi:.1f})"


def ratio(values):
    m, lo, hi = spread(values)
    return f"{m:.2f} ({lo:.2f}–{hi:.2f})"


def measure(args, threads, bw):
    """{workload: {contender: [median step seconds per round]}}, {workload: allocs per step}."""
    repeat = max(5, math.ceil(args.steps / 4))  # ndx bench's --repeat R times 4R steps
    steps = 4 * repeat
    times = {w: {} for w, _ in WORKLOADS}
    allocs = {}
    workers = {}
    for way in ("traced", "eager"):
        w = Worker(way, threads, args.scale, [w for w, _ in WORKLOADS])
        if w.ok:
            workers[way] = w
        else:
            print(f"ndx {way}: skipped (the ndx module did not load in {sys.executable})",
                  file=sys.stderr)
    torch_note = ""
    try:
        for r in range(args.rounds):
            c = run([args.ndx, "bench"] + [w for w, _ in WORKLOADS]
                    + ["--threads", str(threads), "--repeat", str(repeat), "--scale",
                       str(args.scale), "--quiet"])
            for w, _ in WORKLOADS:
                times[w].setdefault("ndx C", []).append(float(c[w]["step_s"]))
                allocs[w] = max(allocs.get(w, 0),
                                int(c[w]["allocs_after_first"]) / int(c[w]["steps"]))
            for way, wk in workers.items():
                for w, _ in WORKLOADS:
                    times[w].setdefault(f"ndx {way}", []).append(wk.median(w, steps))
            out = subprocess.run([sys.executable, os.path.join(HERE, "train_torch.py")]
                                 + [w for w, _ in WORKLOADS]
                                 + ["--threads", str(threads), "--steps", str(steps),
                                    "--scale", str(args.scale)],
                                 check=True, capture_output=True, text=True)
            torch = {line.split()[0]: fields(line) for line in out.stdout.splitlines()
                     if line.strip()}
            torch_note = out.stderr.strip()
            for w, _ in WORKLOADS:
                if "torch-" + w in torch:
                    times[w].setdefault("PyTorch", []).append(
                        float(torch["torch-" + w]["step_s"]))
            print(f"T={threads} round {r + 1}/{args.rounds}: " + "; ".join(
                f"{w} " + ", ".join(f"{k} {1e3 * v[-1]:.1f} ms" for k, v in times[w].items())
                for w, _ in WORKLOADS), flush=True)
    finally:
        for wk in workers.values():
            wk.close()
    if torch_note:
        print(torch_note, file=sys.stderr)
    floors = {w: bw.floor_s(threads, w) for w, _ in WORKLOADS}
    return times, allocs, floors


def table(results):
    head = ["workload", "T", "contender", "ms per step: median (min–max)", "steps/s",
            "step / floor", "PyTorch step / this step: median (min–max)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for w, what in WORKLOADS:
        for threads, (times, _, floors) in results.items():
            t, fl = times[w], floors[w]
            torch = t.get("PyTorch")
            lines.append(f"| {w} {what} | {threads} | floor | {1e3 * fl:.1f} | | 1 | |")
            for name, v in t.items():
                vs = "" if not torch or name == "PyTorch" else ratio(
                    [p / s for p, s in zip(torch, v)])
                lines.append(f"| | | {name} | {ms(v)} | {1 / statistics.median(v):.1f} | "
                             f"{statistics.median(v) / fl:.2f} | {vs} |")
    return "\n".join(lines)


def main():
    global WORKLOADS  # --workloads narrows it
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ndx", default=os.path.join(HERE, "..", "build", "ndx"))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20,
                    help="timed steps per contender per round (rounded up to a multiple of 4, "
                         "at least 20: ndx bench's minimum)")
    ap.add_argument("--scale", type=float, default=1.0, help="table rows and batch size times this")
    ap.add_argument("--baseline", default=os.path.join(HERE, "..", "build-family",
                                                       "ndx-baseline"))
    ap.add_argument("--workloads", nargs="+", choices=[w for w, _ in WORKLOADS],
                    default=[w for w, _ in WORKLOADS], help="the steps to time (all by default)")
    ap.add_argument("--worker", choices=["traced", "eager"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    WORKLOADS = tuple((w, what) for w, what in WORKLOADS if w in args.workloads)
    if args.worker:
        return worker(args.worker, args.threads[0], args.scale, args.workloads)
    bw = StepRates(Bandwidth(build_baseline(args.baseline)), args.scale)
    load_before = os.getloadavg()
    results = {t: measure(args, t, bw) for t in args.threads}
    load_after = os.getloadavg()
    print()
    print(table(results))
    print()
    for w, what in WORKLOADS:
        for threads, (times, allocs, _) in results.items():
            notes = [f"ndx C allocations per step after the first: {allocs[w]:g}"
                     + (" (OK)" if allocs[w] == 0 else " (NOT 0)")]
            if "ndx traced" in times[w]:
                notes.append("traced / C: " + ratio(
                    [p / c for p, c in zip(times[w]["ndx traced"], times[w]["ndx C"])]))
            if "ndx eager" in times[w]:
                notes.append("eager / C: " + ratio(
                    [p / c for p, c in zip(times[w]["ndx eager"], times[w]["ndx C"])]))
            print(f"- {w} {what}, T={threads}: " + "; ".join(notes))
    for t in args.threads:
        s, rr = bw.bw.rates(t)
        again = ", ".join(
            f"{w} {bw.rows_again(t, max(1, round(traffic(w, args.scale)[3]))) / 1e9:.2f}"
            for w, _ in WORKLOADS)
        print(f"- bandwidth at {t} thread(s): memcpy {s / 1e9:.1f} GB/s (read + written), "
              f"random {WIDTH * 4}-byte rows {rr / 1e9:.2f} GB/s; memcpy of the [B, 64] blocks "
              f"{bw.block_stream(t) / 1e9:.1f} GB/s, rows read again ({again}) GB/s")
    print(f"- load average (1, 5 min): {load_before[0]:.2f}, {load_before[1]:.2f} before; "
          f"{load_after[0]:.2f}, {load_after[1]:.2f} after")
    bad = any(a != 0 for _, allocs, _ in results.values() for a in allocs.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
