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
import sys

import numpy as np

import ndx
import peer_compare
from peer_compare import call, close, exact, torch_or_none

SEED = 20261129
TABLE_ROWS, WIDTH = 1_000_000, 64
BAGS = 65536
SEGMENTS = 65536
GATHER_IDS = 1_310_720
UNIQUE_N = 10_000_000
BINCOUNT_N, BINCOUNT_RANGE = 10_000_000, 1_000_000


# ---- workloads (bench/peer_compare.py describes a workload's dict) ----------------------------

def table(rng):
    return rng.standard_normal((TABLE_ROWS, WIDTH), dtype=np.float32)


def embedding_bag(rng, combiner, params):
    lengths = rng.integers(10, 31, BAGS)  # about 20 ids a bag
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    ids = rng.integers(0, TABLE_ROWS, int(lengths.sum()), dtype=np.int64)
    torch = torch_or_none()
    out_bytes = BAGS * WIDTH * 4

    def mine(threads):
        f = ndx.function(lambda p, i, o: ndx.nn.embedding_bag(p, i, o, combiner=combiner),
                         threads=threads)
        return call(f, params, ids, offsets)

    peers = {}
    if torch:
        tp, ti, to = (torch.from_numpy(a) for a in (params, ids, offsets))
        peers["torch embedding_bag"] = lambda threads: call(
            lambda: torch.nn.functional.embedding_bag(ti, tp, to, mode=combiner).numpy())
    return dict(ndx=mine, peers=peers, check=close,
                eager=call(lambda: ndx.nn.embedding_bag(params, ids, offsets, combiner=combiner)),
                stream=ids.nbytes + offsets.nbytes + out_bytes, random=ids.size * WIDTH * 4,
                note=f"{ids.size} ids in {BAGS} bags")


def segment(rng, reduce, rows, width):
    data = rng.standard_normal((rows, width), dtype=np.float32)
    ids = rng.integers(0, SEGMENTS, rows, dtype=np.int64)
    torch = torch_or_none()
    out = np.empty((SEGMENTS, width), np.float32)
    lowest = np.finfo(np.float32).min  # TensorFlow's empty max segment
    op = ndx.math.unsorted_segment_sum if reduce == "sum" else ndx.math.unsorted_segment_max

    def mine(threads):
        f = ndx.function(lambda d, i: op(d, i, SEGMENTS), threads=threads)
        return call(f, data, ids, out=out)

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
    return dict(ndx=mine, peers=peers, check=close if reduce == "sum" else exact,
                eager=call(lambda: op(data, ids, SEGMENTS)),
                stream=data.nbytes + ids.nbytes + 2 * out.nbytes, random=0,
                note=f"[{rows}, {width}] into {SEGMENTS}")


def gather(rng, params):
    ids = rng.integers(0, TABLE_ROWS, GATHER_IDS, dtype=np.int64)
    torch = torch_or_none()
    out = np.empty((GATHER_IDS, WIDTH), np.float32)

    def mine(threads):
        f = ndx.function(lambda p, i: ndx.gather(p, i), threads=threads)
        return call(f, params, ids, out=out)

    def np_peer(threads):
        o = np.empty_like(out)
        return call(lambda: np.take(params, ids, axis=0, out=o))[0], (lambda: o)

    peers = {"np.take": np_peer}
    if torch:
        tp, ti, to = torch.from_numpy(params), torch.from_numpy(ids), torch.empty(out.shape)
        peers["torch index_select"] = lambda threads: (
            lambda: torch.index_select(tp, 0, ti, out=to), lambda: to.numpy())
    return dict(ndx=mine, peers=peers, check=exact, eager=call(lambda: ndx.gather(params, ids)),
                stream=ids.nbytes + out.nbytes, random=out.nbytes,
                note=f"{GATHER_IDS} rows of [{TABLE_ROWS}, {WIDTH}]")


def unique(rng, distinct):
    x = rng.integers(0, distinct, UNIQUE_N, dtype=np.int64)
    torch = torch_or_none()

    def mine(threads):
        f = ndx.function(lambda v: tuple(ndx.unique(v, out_idx="int64")), threads=threads)
        return call(f, x)

    def check(got, want):
        """Peers are sorted, ndx in first-occurrence order: the same set, and y[idx] == x."""
        y, idx = (np.asarray(a) for a in got)
        if not np.array_equal(np.sort(y), np.sort(np.asarray(want[0]))):
            return "other distinct values"
        return exact(y[idx], x)

    peers = {"np.unique": lambda threads: call(lambda: np.unique(x, return_inverse=True))}
    if torch:
        tx = torch.from_numpy(x)
        peers["torch unique"] = lambda threads: call(lambda: tuple(
            a.numpy() for a in torch.unique(tx, sorted=False, return_inverse=True)))
    return dict(ndx=mine, peers=peers, check=check, eager_check=check,
                eager=call(lambda: tuple(ndx.unique(x, out_idx="int64"))),
                stream=x.nbytes + UNIQUE_N * 8, random=0,
                note=f"{UNIQUE_N} int64, {distinct} possible values; ndx's y in first-occurrence "
                     f"order (TensorFlow's), the peers' sorted")


def bincount(rng, weighted):
    x = rng.integers(0, BINCOUNT_RANGE, BINCOUNT_N, dtype=np.int32)
    w = rng.random(BINCOUNT_N, dtype=np.float32) if weighted else None
    torch = torch_or_none()
    size = BINCOUNT_RANGE * 4

    def mine(threads):
        f = ndx.function((lambda v, u: ndx.math.bincount(v, weights=u)) if weighted else
                         (lambda v: ndx.math.bincount(v)), threads=threads)
        return call(f, *((x, w) if weighted else (x,)))

    peers = {"np.bincount": lambda threads: call(lambda: np.bincount(x, weights=w))}
    if torch:
        tx = torch.from_numpy(x.astype(np.int64))  # (torch.bincount takes int64)
        tw = torch.from_numpy(w) if weighted else None
        peers["torch bincount"] = lambda threads: call(
            lambda: torch.bincount(tx, weights=tw).numpy())
    return dict(ndx=mine, peers=peers, check=close if weighted else exact,
                eager=call(lambda: ndx.math.bincount(x, weights=w)),
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


def skip(name):
    if name.startswith("bincount") and not hasattr(ndx.math, "bincount"):
        return "this ndx has no ndx.math.bincount"
    return None


if __name__ == "__main__":
    sys.exit(peer_compare.main(__doc__, workloads, skip))
