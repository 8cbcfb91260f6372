"""bench/scaling_ab.py — two builds of `ndx` compared on thread scaling, round by round, on a
quiet machine or beside one busy process (what a shared machine gives a program).

    /usr/bin/python3 bench/scaling_ab.py A=path/to/ndx B=path/to/ndx [--workloads G1 ...]
                                         [--rounds 4] [--threads 2] [--busy]

Each round runs `ndx bench W --threads T --scaling --repeat 9` for every workload with each
build, the builds in alternating order, so both see the same moments of the machine. Prints,
per workload and build, the medians over the rounds of the T-thread time, the 1-thread time and
the paired ratio (1-thread time / T-thread time, see `ndx bench --help`). With --busy a shell
loop keeps one core busy for the whole run.
"""
import argparse
import os
import re
import statistics
import subprocess
import time

LINE = re.compile(r"median_s=([\d.]+).* one_thread_median_s=([\d.]+) scaling=([\d.]+)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builds", nargs=2, metavar="NAME=NDX")
    ap.add_argument("--workloads", nargs="+", default="G1 G2 G3 S1 S2 D1 P1 C0 C1".split())
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--busy", action="store_true", help="keep one core busy meanwhile")
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.builds]
    results = {}
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"]) if args.busy else None
    start, load = time.time(), os.getloadavg()[0]
    try:
        for r in range(args.rounds):
            for w in args.workloads:
                for name, ndx in builds if r % 2 == 0 else builds[::-1]:
                    out = subprocess.run([ndx, "bench", w, "--threads", str(args.threads),
                                          "--scaling", "--repeat", "9", "--quiet"],
                                         capture_output=True, text=True, check=True).stdout
                    m = LINE.search(out)
                    results.setdefault((w, name), []).append([float(x) for x in m.groups()])
    finally:
        if busy:
            busy.kill()
    print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after; {args.rounds} rounds "
          f"in {time.time() - start:.0f} s; {'beside a busy loop' if busy else 'no other load'}")
    t = args.threads
    head = ["workload"] + [f"{n} {t} T ms" for n, _ in builds] + [f"{n} 1 T ms" for n, _ in builds] \
        + [f"{n} 1T/{t}T" for n, _ in builds]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for w in args.workloads:
        row = [w]
        for k, fmt in ((0, "{:.2f}"), (1, "{:.2f}"), (2, "{:.2f}")):
            for name, _ in builds:
                v = statistics.median(x[k] for x in results[(w, name)])
                row.append(fmt.format(v * 1e3 if k < 2 else v))
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
