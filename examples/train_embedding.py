"""A program that learns, in Python: examples/train_embedding.c written with ndx.function,
ndx.Variable, ndx.GradientTape and ndx.optimizers.Adagrad. The same generator (the C program's
LCG and float conversion), the same data, the same graph and the same sparse Adagrad steps, so
it learns the same tables as the C program, bit for bit. Matrix factorisation of a ratings table
with a known answer: hidden factors U* and V* make the ratings r = sum(U*[u] * V*[i]) of random
(user, item) pairs; the model's tables start small and random and learn them from the squared
error's gradients (rows of U and V: IndexedSlices, never a dense table). Exit 0 only if the loss
over all ratings falls below THRESHOLD.

    python examples/train_embedding.py [--threads N] [--save tables.npz]
"""
import argparse
import sys

import numpy as np

import ndx

USERS, ITEMS, RANK, BATCH, BATCHES, EPOCHS = 500, 400, 16, 1024, 32, 30
RATINGS = BATCH * BATCHES
THRESHOLD = 0.0001  # a thousandth of where it starts


class Generator:
    """The C program's generator: a 64-bit LCG, its top 24 bits scaled in float32."""

    def __init__(self, seed=42):
        self.state = seed

    def uniform(self, lo, hi, count):
        bits = np.empty(count, np.float32)
        s = self.state
        for n in range(count):
            s = (s * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
            bits[n] = s >> 40  # (24 bits: exact in float32)
        self.state = s
        lo, hi = np.float32(lo), np.float32(hi)
        return lo + (hi - lo) * bits / np.float32(1 << 24)  # float32 throughout, as in C


def make_data():
    rng = Generator()
    u_true = rng.uniform(-0.5, 0.5, USERS * RANK).reshape(USERS, RANK)
    v_true = rng.uniform(-0.5, 0.5, ITEMS * RANK).reshape(ITEMS, RANK)
    # users[n] and items[n] alternate in the generator's sequence
    pairs = rng.uniform(0, np.tile(np.float32([USERS, ITEMS]), RATINGS), 2 * RATINGS)
    users, items = pairs[0::2].astype(np.int32), pairs[1::2].astype(np.int32)
    ratings = np.zeros(RATINGS, np.float32)
    for k in range(RANK):  # summed over the rank in order, in float32
        ratings += u_true[users, k] * v_true[items, k]
    u_init = rng.uniform(-0.1, 0.1, USERS * RANK).reshape(USERS, RANK)
    v_init = rng.uniform(-0.1, 0.1, ITEMS * RANK).reshape(ITEMS, RANK)
    return users.reshape(-1, 1), items.reshape(-1, 1), ratings, u_init, v_init


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--save", help="write the learned tables U and V to this .npz")
    args = parser.parse_args(argv)
    users, items, ratings, u_init, v_init = make_data()
    U, V = ndx.Variable(u_init, name="U"), ndx.Variable(v_init, name="V")
    adagrad = ndx.optimizers.Adagrad(0.1, initial_accumulator_value=0.1, epsilon=None)

    def batch_loss(user, item, rating):
        # pred = sum(U[u] * V[i]) over the rank; loss = sum((pred - r)^2) over the batch
        pred = ndx.reduce_sum(ndx.gather_nd(U, user) * ndx.gather_nd(V, item), 1)
        diff = pred - rating
        return ndx.reduce_sum(diff * diff, 0)

    @ndx.function(threads=args.threads)
    def train_step(user, item, rating):
        with ndx.GradientTape() as tape:
            loss = batch_loss(user, item, rating)
        grads = tape.gradient(loss, [U, V])  # IndexedSlices: the rows the batch gathered
        adagrad.apply_gradients(zip(grads, [U, V]))
        return loss

    measure = ndx.function(batch_loss, threads=args.threads)

    print(f"{USERS} users, {ITEMS} items, rank {RANK}, {RATINGS} ratings, batches of {BATCH}, "
          f"sparse Adagrad")
    for epoch in range(EPOCHS + 1):
        train = epoch < EPOCHS  # the last pass only measures: the loss over all ratings
        epoch_loss = 0.0
        for b in range(BATCHES):
            at = slice(b * BATCH, (b + 1) * BATCH)
            step = train_step if train else measure
            loss = step(users[at], items[at], ratings[at])
            epoch_loss += float(loss / np.float32(RATINGS))  # (float32 / int in C: float)
        if epoch % 5 == 0 or not train:
            print(f"{'epoch' if train else 'after'} {epoch:2d}: loss {epoch_loss:.6f}")
    learned = epoch_loss < THRESHOLD
    print(f"loss {'below' if learned else 'NOT below'} {THRESHOLD:g}")
    if args.save:
        np.savez(args.save, U=U.numpy(), V=V.numpy())
    return 0 if learned else 1


if __name__ == "__main__":
    sys.exit(main())
