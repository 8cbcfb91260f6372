"""sparse_compare.py — ndx.sparse against SciPy and PyTorch, in one run.

    /usr/bin/python3 -m venv --system-site-packages build-py/venv   # once, then install ndx:
    build-py/venv/bin/pip install --quiet --no-build-isolation --no-index ./python
    build-py/venv/bin/python bench/sparse_compare.py [--threads 1 2] [--repeat 7] [--only matmul]

Inputs come from NumPy's generator with a fixed seed. Every peer's result is checked against
ndx's before timing; a wrong one is marked ✗ and never counts. ndx runs as an ndx.function traced
once per thread count (threads=T), PyTorch under torch.set_num_threads(T); SciPy is
single-threaded (timed at every T all the same). The time is the best of R repetitions, the
contenders taking turns, after one warm-up each (bench/peer_compare.py). The floor is the traffic
the op must move at this machine's measured memcpy and random-row rates (bench/baseline.c)."""
import sys

import numpy as np

import ndx
import peer_compare
from peer_compare import call, close, exact, torch_or_none

SEED = 20261130


def scipy_or_none():
    try:
        import scipy.sparse
        return scipy.sparse
    except ImportError:
        return None


# ---- workloads (bench/peer_compare.py describes a workload's dict) ----------------------------


# ---- sparse_dense_matmul --------------------------------------------------------------------

MATMUL_ROWS, MATMUL_COLS, MATMUL_PER_ROW, MATMUL_WIDTH = 65_536, 1_000_000, 20, 64


def sparse_dense_matmul(rng):
    """A [65536, 1000000] with 20 entries a row (canonical order) times B [1000000, 64] float32:
    bound by reading 1.31M random 256-byte rows of B. The peers get their own format built
    beforehand (not timed): SciPy a CSR matrix, PyTorch a coalesced COO tensor and a CSR one."""
    nnz = MATMUL_ROWS * MATMUL_PER_ROW
    rows = np.repeat(np.arange(MATMUL_ROWS, dtype=np.int64), MATMUL_PER_ROW)
    cols = rng.integers(0, MATMUL_COLS, nnz, dtype=np.int64)
    cols = cols.reshape(MATMUL_ROWS, MATMUL_PER_ROW)
    cols.sort(axis=1)
    cols = cols.reshape(-1)
    indices = np.stack([rows, cols], axis=1)
    values = rng.standard_normal(nnz, dtype=np.float32)
    shape = np.array([MATMUL_ROWS, MATMUL_COLS], np.int64)
    b = rng.standard_normal((MATMUL_COLS, MATMUL_WIDTH), dtype=np.float32)
    out = np.empty((MATMUL_ROWS, MATMUL_WIDTH), np.float32)

    def mine(threads):
        f = ndx.function(lambda i, v, s, b: ndx.sparse.sparse_dense_matmul(
            ndx.SparseTensor(i, v, s), b), threads=threads)
        return call(f, indices, values, shape, b, out=out)

    peers = {}
    sp = scipy_or_none()
    if sp:
        csr = sp.csr_matrix((values, (rows, cols)), shape=(MATMUL_ROWS, MATMUL_COLS))
        peers["scipy csr @ dense"] = lambda threads: call(lambda: csr @ b)
    torch = torch_or_none()
    if torch:
        tb = torch.from_numpy(b)
        coo = torch.sparse_coo_tensor(torch.from_numpy(indices.T.copy()),
                                      torch.from_numpy(values),
                                      (MATMUL_ROWS, MATMUL_COLS)).coalesce()
        tcsr = coo.to_sparse_csr()
        peers["torch.sparse.mm coo"] = lambda threads: call(
            lambda: torch.sparse.mm(coo, tb).numpy())
        peers["torch.sparse.mm csr"] = lambda threads: call(
            lambda: torch.sparse.mm(tcsr, tb).numpy())
    eager_sp = ndx.SparseTensor(indices, values, shape)
    return dict(ndx=mine, peers=peers, check=close,
                eager=call(lambda: ndx.sparse.sparse_dense_matmul(eager_sp, b)),
                stream=indices.nbytes + values.nbytes + out.nbytes,
                random=nnz * MATMUL_WIDTH * 4,
                note=f"{nnz} entries, {MATMUL_PER_ROW} a row, B [{MATMUL_COLS}, {MATMUL_WIDTH}]"
                     " float32")


# ---- sparse.add: two SparseTensors of 10M entries each ---------------------------------------

ADD_ROWS, ADD_COLS, ADD_PER_ROW = 1_000_000, 1_000_000, 10


def add_operands(rng):
    """Two canonical [ADD_ROWS, ADD_COLS] float32 SparseTensors of ADD_PER_ROW entries a row
    (about 10M each); half of b's entries sit where a has one (their values are summed), half
    elsewhere. Values are continuous, so no sum is exactly 0 (SciPy would drop it)."""
    def canonical(keys):
        keys = np.unique(keys)
        return np.stack([keys // ADD_COLS, keys % ADD_COLS], axis=1)

    n = ADD_ROWS * ADD_PER_ROW
    rows = np.repeat(np.arange(ADD_ROWS, dtype=np.int64), ADD_PER_ROW)
    a_keys = rows * ADD_COLS + rng.integers(0, ADD_COLS, n)
    shared = rng.choice(a_keys, n // 2, replace=False)
    b_keys = np.concatenate([shared, rng.integers(0, ADD_ROWS * ADD_COLS, n - n // 2)])
    a_idx, b_idx = canonical(a_keys), canonical(b_keys)
    a = ndx.SparseTensor(a_idx, rng.random(len(a_idx), dtype=np.float32) + 0.5,
                         [ADD_ROWS, ADD_COLS])
    b = ndx.SparseTensor(b_idx, rng.random(len(b_idx), dtype=np.float32) + 0.5,
                         [ADD_ROWS, ADD_COLS])
    return a, b


def sparse_add(rng):
    a, b = add_operands(rng)
    sp, torch = scipy_or_none(), torch_or_none()

    def mine(threads):
        f = ndx.function(lambda x, y: ndx.sparse.add(x, y), threads=threads)
        last = {}

        def run():
            last["r"] = f(a, b)
        return run, lambda: (np.asarray(last["r"].indices), np.asarray(last["r"].values))

    def check(got, want):
        return exact(got[0], want[0]) or exact(got[1], want[1])

    peers = {}
    if sp is not None:
        shape = (ADD_ROWS, ADD_COLS)
        ca = sp.csr_matrix((a.values, (a.indices[:, 0], a.indices[:, 1])), shape=shape)
        cb = sp.csr_matrix((b.values, (b.indices[:, 0], b.indices[:, 1])), shape=shape)

        def scipy_result(c):
            c = c.tocoo()
            return np.stack([c.row, c.col], axis=1).astype(np.int64), c.data
        peers["scipy csr + csr"] = lambda threads: (lambda r: (r[0], lambda: scipy_result(
            r[1]())))(call(lambda: ca + cb))
    if torch is not None:
        def coo(x):
            return torch.sparse_coo_tensor(torch.from_numpy(x.indices.T.copy()),
                                           torch.from_numpy(x.values),
                                           (ADD_ROWS, ADD_COLS)).coalesce()  # (not timed)
        ta, tb = coo(a), coo(b)

        def torch_result(t):
            return t.indices().numpy().T, t.values().numpy()
        peers["torch add + coalesce"] = lambda threads: (lambda r: (r[0], lambda: torch_result(
            r[1]())))(call(lambda: (ta + tb).coalesce()))
    eager = call(lambda: ndx.sparse.add(a, b))
    return dict(ndx=mine, peers=peers, check=check, eager_check=lambda got, want: check(
                    (np.asarray(got.indices), np.asarray(got.values)), want),
                eager=eager,
                stream=2 * (a.indices.nbytes + a.values.nbytes + b.indices.nbytes +
                            b.values.nbytes), random=0,
                note=f"two canonical float32 SparseTensors of {len(a.values):,} and "
                     f"{len(b.values):,} entries in [{ADD_ROWS:,}, {ADD_COLS:,}], half of b's "
                     f"where a has one; ndx.sparse.add in canonical order; the peers' results "
                     f"(SciPy's CSR sum, PyTorch's coalesced sum) checked equal to ndx's")


def workloads():
    """name -> builder of the workload (inputs drawn when it is run)."""
    rng = np.random.default_rng(SEED)
    return {
        "sparse_dense_matmul": lambda: sparse_dense_matmul(rng),
        "sparse.add 2x10M": lambda: sparse_add(rng),
    }


if __name__ == "__main__":
    sys.exit(peer_compare.main(__doc__, workloads))
