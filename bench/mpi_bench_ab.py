#!/usr/bin/python3
"""mpi_bench_ab.py — two builds of mpi_bench alternated, round by round, at one rank count.

    /usr/bin/python3 bench/mpi_bench_ab.py NP ROUNDS LABEL=MPI_BENCH LABEL=MPI_BENCH ...
        [--raw=FILE] [--calls=N]
    e.g. bench/mpi_bench_ab.py 4 6 main=/work/main/build/mpi_bench new=build/mpi_bench

Each round runs every build once (`mpirun --oversubscribe --allow-run-as-root --mca
mpi_yield_when_idle 1 -n NP BIN 1000000 64 65536 N`, N = 60 calls unless --calls says), so figures
of the same round come from the same moments of a shared machine; which build runs first
alternates from round to round. Prints, per build and id distribution: the ratio lookup / (floor
+ 2 gathers) of every round (median calls and fastest calls, mpi_bench's RATIO lines; and the
median of the per-call ratios, its PAIRED line, the steadiest of the three on an oversubscribed
machine), their median and minimum; and against the first build, each round's lookup and update
time ratios (median calls) and their median, and the same for the PAIRED ratio (the lookup
against the floor and gathers of its own calls: the least disturbed by other work). The
machine's load average before each run is kept with the raw output (--raw).
"""
import re
import statistics as st
import subprocess
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
raw_path = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--raw=")), None)
calls_n = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--calls=")), "60")
np_, rounds, builds = int(args[0]), int(args[1]), [a.split("=", 1) for a in args[2:]]
ratio_re = re.compile(r"RATIO\s+P=\d+ (\S+)\s+(median|fastest)\s+.*lookup/\(floor \+ 2 gathers\)=([\d.]+)")
paired_re = re.compile(r"PAIRED\s+P=\d+ (\S+)\s+per call: lookup/\(floor \+ 2 gathers\) median=([\d.]+)")
calls_re = re.compile(r"CALLS\s+P=\d+ (\S+)\s+lookup=([\d.]+) ms\s+update=([\d.]+) ms")
ratios, calls, raw = {}, {}, []
for k in range(rounds):
    for label, binary in (builds if k % 2 == 0 else builds[::-1]):
        load = open("/proc/loadavg").read().split()[0]
        out = subprocess.run(["mpirun", "--oversubscribe", "--allow-run-as-root", "--mca",
                              "mpi_yield_when_idle", "1", "-n", str(np_), binary, "1000000", "64",
                              "65536", calls_n], capture_output=True, text=True).stdout
        raw.append(f"# round {k + 1} {label} {binary} load {load}\n{out}")
        for dist, kind, r in ratio_re.findall(out):
            ratios.setdefault((label, dist, kind), []).append(float(r))
        for dist, r in paired_re.findall(out):
            ratios.setdefault((label, dist, "paired"), []).append(float(r))
        for dist, lookup, update in calls_re.findall(out):
            calls.setdefault((label, dist), []).append((float(lookup), float(update)))
if raw_path:
    open(raw_path, "w").write("".join(raw))
base = builds[0][0]
for dist in ("uniform", "zipf"):
    for label, _ in builds:
        for kind in ("median", "fastest", "paired"):
            v = ratios.get((label, dist, kind), [])
            if v:
                print(f"{np_} ranks {dist:7} {label:8} {kind:7} lookup/(floor + 2 gathers): runs "
                      f"{' '.join(f'{x:.2f}' for x in v)}  median {st.median(v):.2f}  min {min(v):.2f}")
        if label != base and calls.get((label, dist)):
            pairs = list(zip(calls[(label, dist)], calls[(base, dist)]))
            lk = [a[0] / b[0] for a, b in pairs]
            up = [a[1] / b[1] for a, b in pairs]
            print(f"{np_} ranks {dist:7} {label}/{base} per round: lookup "
                  f"{' '.join(f'{x:.2f}' for x in lk)} (median {st.median(lk):.2f}), update median "
                  f"{st.median(up):.2f}")
            pr = [a / b for a, b in zip(ratios.get((label, dist, "paired"), []),
                                        ratios.get((base, dist, "paired"), []))]
            if pr:
                print(f"{np_} ranks {dist:7} {label}/{base} per round: paired target ratio "
                      f"{' '.join(f'{x:.2f}' for x in pr)} (median {st.median(pr):.2f})")
