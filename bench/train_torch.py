"""train_torch.py — PyTorch's side of `ndx bench T1 T2 T3`: the same models and steps on the CPU.
Two nn.Embedding(1,000,000, 64, sparse=True) tables (users, items), batches of 65,536 (user,
item, rating) triples with uniform ids (4 batches used in turn), pred = (U[u] * V[i]).sum(1),
loss = ((pred - r) ** 2).sum(), loss.backward() (sparse gradients), then torch.optim.SGD (T1,
lr 0.01) or torch.optim.Adagrad (T2, lr 0.1, initial accumulator 0.1). T3, the bag step: U is
an nn.EmbeddingBag(1,000,000, 64, mode="mean", sparse=True) fed 262,144 uniform ids in 65,536
bags by offsets (every bag at least one id, 4 on average), pred = (U(ids, offsets) *
V[i]).sum(1), the same loss, torch.optim.SGD (lr 0.01). One untimed step, then STEPS timed ones;
prints one line per workload:

    torch-T1 steps_per_s=N step_s=S threads=T steps=R loss_first=L0 loss_last=L1

    /usr/bin/python3 bench/train_torch.py [--threads T] [--steps R] [--scale S] [T1] [T2] [T3]

Exits 0 with "skipped: ..." on stderr when torch is not installed (tests never need it).
"""
import argparse
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="*", default=["T1", "T2", "T3"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--scale", type=float, default=1.0)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("train_torch.py: skipped: torch is not installed (Debian: python3-torch)",
              file=sys.stderr)
        return 0
    torch.set_num_threads(args.threads)
    rows = max(1, int(1_000_000 * args.scale))
    batch = max(1, int(65536 * args.scale))
    gen = torch.Generator().manual_seed(42)
    users = torch.randint(0, rows, (4, batch), generator=gen)
    items = torch.randint(0, rows, (4, batch), generator=gen)
    ratings = torch.rand((4, batch), generator=gen) * 2 - 1
    # T3's bags: 4 ids per bag on average, at least 1 (cut points of the other 3 * batch)
    bag_ids = torch.randint(0, rows, (4, 4 * batch), generator=gen)
    cuts = torch.randint(0, 3 * batch + 1, (4, batch - 1), generator=gen).sort(dim=1).values
    offsets = torch.zeros((4, batch), dtype=torch.int64)
    offsets[:, 1:] = cuts + torch.arange(1, batch)

    for name in args.workloads:
        if name == "T3":
            U = torch.nn.EmbeddingBag(rows, 64, mode="mean", sparse=True)
        else:
            U = torch.nn.Embedding(rows, 64, sparse=True)
        V = torch.nn.Embedding(rows, 64, sparse=True)
        with torch.no_grad():
            U.weight.fill_(0.01)
            V.weight.fill_(0.01)
        params = list(U.parameters()) + list(V.parameters())
        if name in ("T1", "T3"):
            opt = torch.optim.SGD(params, lr=0.01)
        else:
            opt = torch.optim.Adagrad(params, lr=0.1, initial_accumulator_value=0.1)
        times, losses = [], []
        for k in range(args.steps + 1):  # step 0: untimed
            b = k % 4
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            left = U(bag_ids[b], offsets[b]) if name == "T3" else U(users[b])
            pred = (left * V(items[b])).sum(1)
            loss = ((pred - ratings[b]) ** 2).sum()
            loss.backward()
            opt.step()
            t = time.perf_counter() - t0
            losses.append(loss.item())
            if k:
                times.append(t)
        step = statistics.median(times)
        print(f"torch-{name} steps_per_s={1 / step:.3f} step_s={step:.6f} threads={args.threads} "
              f"steps={args.steps} loss_first={losses[0]:.6g} loss_last={losses[-1]:.6g}",
              flush=True)
        del U, V, opt, params
    return 0


if __name__ == "__main__":
    sys.exit(main())
