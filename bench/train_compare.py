"""train_compare.py — training steps per second, ndx against PyTorch, in one run: `ndx bench T1
T2` (examples/train_embedding.c's model: two [1,000,000, 64] float32 tables, batches of 65,536
pairs, gradients as slices, sparse SGD / Adagrad) and bench/train_torch.py (the same model with
nn.Embedding(sparse=True) and torch.optim.SGD / Adagrad), at each thread count given. Prints
both lines and the ratio; the goal is ndx >= 2x PyTorch's steps/s, with 0 allocations per step
after the first. Never fails for being slow; PyTorch absent: its side is skipped.

    /usr/bin/python3 bench/train_compare.py [--ndx build/ndx] [--threads 1 2] [--steps 20]
"""
import argparse
import os
import subprocess
import sys


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    if out.stderr.strip():
        print(out.stderr.strip(), file=sys.stderr)
    return [line for line in out.stdout.splitlines() if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ndx", default="build/ndx")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--steps", type=int, default=20, help="timed steps (a multiple of 4)")
    ap.add_argument("--scale", default="1")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    repeat = max(5, args.steps // 4)
    for t in args.threads:
        ndx = {line.split()[0]: line for line in run(
            [args.ndx, "bench", "T1", "T2", "--threads", str(t), "--repeat", str(repeat),
             "--scale", args.scale, "--quiet"])}
        torch = {line.split()[0]: line for line in run(
            [sys.executable, os.path.join(here, "train_torch.py"), "--threads", str(t),
             "--steps", str(4 * repeat), "--scale", args.scale])}
        for name, optim in (("T1", "SGD"), ("T2", "Adagrad")):
            n = fields(ndx[name])
            line = (f"{name} ({optim}) threads={t}: ndx {float(n['steps_per_s']):.2f} steps/s "
                    f"(allocations per step after the first: "
                    f"{int(n['allocs_after_first']) / int(n['steps']):g})")
            p = torch.get("torch-" + name)
            if p:
                pt = float(fields(p)["steps_per_s"])
                ratio = float(n["steps_per_s"]) / pt
                line += f", PyTorch {pt:.2f} steps/s, ndx/PyTorch = {ratio:.2f}x"
            else:
                line += ", PyTorch skipped"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
