#!/usr/bin/python3
"""The alpha-beta model of bench/results/mpi-scaling-log.md: fitted to bench/mpi_bench.c's output, projected to
8-64 ranks for a 100 M x 64 float32 table and Zipf-skewed batches. Writes bench/results/scaling.png (when
matplotlib is there) and prints the tables SCALING.md shows.

    /usr/bin/python3 bench/results/scaling_model.py [bench/results/mpi_bench_results.txt]
"""
import math
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "mpi_bench_results.txt")
text = open(results).read()

# ---- 1. alpha and beta on this machine: MPI_Alltoall at 2 ranks, t = alpha + bytes / beta ----
pts = [(int(b), float(t)) for b, t in
       re.findall(r"EXCHANGE P=2 bytes_per_peer=(\d+) seconds=([\d.e+-]+)", text)]
x = np.array([b for b, _ in pts], float)
y = np.array([t for _, t in pts], float)
# Least squares on relative error (the sizes span six decades).
A = np.stack([np.ones_like(x), x], axis=1) / y[:, None]
alpha_lo, inv_beta_lo = np.linalg.lstsq(A, np.ones_like(y), rcond=None)[0]
beta_lo = 1.0 / inv_beta_lo

# ---- 2. local work per id and per row -------------------------------------------------------
def result(kind, p, dist):
    m = re.search(rf"RESULT {kind}\s+P={p} {dist}\s+(.*)", text)
    return {k: float(v) for k, v in re.findall(r"([a-z_/]+)=([\d.e+-]+)", m.group(1))}


def fastest_single(p, dist):
    """The fastest single-process ndx_gather_nd of one rank's batch, seconds."""
    m = re.search(rf"SINGLE P={p} {dist}\s+.*fastest ([\d.]+), ([\d.]+) ms", text)
    return float(m.group(1)) * 1e-3


batch = int(re.search(r"batch (\d+) ids per rank", text).group(1))
r2 = result("lookup", 2, "zipf")
# Routing (checks, the hash dedupe, grouping by owner): per id, from the 2-rank Zipf lookup.
# The fastest call's partition when the bench prints it (local work: least time-sliced).
c_partition = r2.get("partition_fastest", r2["partition"]) * 1e-3 / batch
# Copying rows is what a single-process gather does: per distinct row copied out of a shard
# (random rows of a large shard: the uniform batch's rate), and per id for the stitch, which
# gathers every output row once from the distinct rows (the Zipf batch's rate: repeated rows hit
# the cache as in a lookup's batch). Fastest runs at one rank, which has the machine.
c_gather = fastest_single(1, "uniform") / batch
c_stitch = fastest_single(1, "zipf") / batch


# ---- 3. the projection ----------------------------------------------------------------------
def distinct(n_rows, s, batch):
    """Expected distinct ids in `batch` Zipf(s) draws over n_rows (summed in chunks)."""
    h, total = 0.0, 0.0
    chunk = 1 << 22
    for lo in range(1, n_rows + 1, chunk):
        k = np.arange(lo, min(lo + chunk, n_rows + 1), dtype=np.float64)
        h += np.sum(k ** -s)
    for lo in range(1, n_rows + 1, chunk):
        k = np.arange(lo, min(lo + chunk, n_rows + 1), dtype=np.float64)
        p = k ** -s / h
        total += np.sum(-np.expm1(batch * np.log1p(-p)))
    return total


def lookup_time(P, per_rank, unique, alpha, beta, row_bytes=256):
    """Seconds per collective lookup on one rank (every rank alike)."""
    remote = unique * (P - 1) / P                      # distinct ids to other ranks
    bytes_out = remote * (8 + row_bytes)               # ids out + rows back (full duplex)
    # counts, ids, rows (pairwise: P-1 messages each); two agreements (recursive doubling)
    messages = 3 * (P - 1) + 2 * math.ceil(math.log2(P)) if P > 1 else 0
    exchange = alpha * messages + bytes_out / beta
    if P == 1:  # no routing, no exchange: one gather of the batch from the shard
        return c_stitch * per_rank, c_stitch * per_rank, 0.0
    # an owner serves what the others ask of it (by symmetry, `remote` rows) and copies its own
    # distinct rows beside the ones that come back: `unique` rows from its shard in all; then the
    # output is one gather from those distinct rows
    compute = c_partition * per_rank + c_gather * unique + c_stitch * per_rank
    return compute + exchange, compute, exchange


N, S, B = 100_000_000, 1.1, 65536
ranks = [1, 2, 4, 8, 16, 32, 64]
u_batch = distinct(N, S, B)
net = {"alpha 2 us": 2e-6, "alpha 3.5 us": 3.5e-6, "alpha 5 us": 5e-6}
beta_net = 12.5e9

print(f"fit (loopback, 2 ranks): alpha = {alpha_lo * 1e6:.2f} us, beta = {beta_lo / 1e9:.2f} GB/s")
print(f"local work: partition {c_partition * 1e9:.1f} ns/id, gather {c_gather * 1e9:.1f} ns/row "
      f"served, stitch {c_stitch * 1e9:.1f} ns/id")
print(f"Zipf s={S} over {N:,} rows: a batch of {B:,} ids holds {u_batch:,.0f} distinct "
      f"({100 * (1 - u_batch / B):.1f}% fewer rows to move)")
print()
print("| ranks | distinct/rank | bytes out/rank (MB) | compute ms | exchange ms (3.5 us) | "
      "lookup ms | rows/s (all ranks) | rows/s without dedupe |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
curves = {k: [] for k in net}
curves["no dedupe, alpha 3.5 us"] = []
strong = []
for P in ranks:
    for name, a in net.items():
        t, _, _ = lookup_time(P, B, u_batch, a, beta_net)
        curves[name].append(P * B / t)
    t, comp, ex = lookup_time(P, B, u_batch, 3.5e-6, beta_net)
    tn, _, _ = lookup_time(P, B, B, 3.5e-6, beta_net)
    curves["no dedupe, alpha 3.5 us"].append(P * B / tn)
    mb = u_batch * (P - 1) / P * 264 / 1e6
    print(f"| {P} | {u_batch:,.0f} | {mb:.2f} | {comp * 1e3:.2f} | {ex * 1e3:.3f} | {t * 1e3:.2f} | "
          f"{P * B / t:.3g} | {P * B / tn:.3g} |")
    # Strong scaling: one global batch of 64K ids split over the ranks.
    per = B / P
    u = distinct(N, S, int(per)) if P > 1 else u_batch
    ts, _, exs = lookup_time(P, per, u, 3.5e-6, beta_net)
    strong.append((P, per, u, ts, exs))
print()
print("| ranks | ids/rank | distinct/rank | lookup ms | of which exchange ms | rows/s |")
print("|---:|---:|---:|---:|---:|---:|")
for P, per, u, ts, exs in strong:
    print(f"| {P} | {per:,.0f} | {u:,.0f} | {ts * 1e3:.3f} | {exs * 1e3:.3f} | {B / ts:.3g} |")

measured = [(p, result("lookup", p, "zipf")["rows/s"]) for p in (1, 2, 3, 4)
            if re.search(rf"RESULT lookup\s+P={p} zipf", text)]
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("\n(matplotlib missing: no plot)")
    sys.exit(0)
fig, ax = plt.subplots(figsize=(7.5, 4.8))
for name, ys in curves.items():
    style = "--" if "no dedupe" in name else "-"
    ax.plot(ranks, ys, style, marker="o", label=f"model, 100 Gb/s, {name}")
ax.plot([p for p, _ in measured], [v for _, v in measured], "k^",
        label="measured, 1 M rows, one 2-core machine (3-4 ranks oversubscribed)")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xticks(ranks)
ax.set_xticklabels([str(p) for p in ranks])
ax.set_xlabel("ranks (64K Zipf s=1.1 ids per rank, 100 M x 64 float32 table)")
ax.set_ylabel("lookup rows/s, all ranks")
ax.set_title("ndx_mpi_lookup: alpha-beta projection")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=7.5)
fig.tight_layout()
fig.savefig(os.path.join(HERE, "scaling.png"), dpi=110)
print("\nwrote bench/results/scaling.png")
