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
# ---- sparse.reshape (sparse-reshape) ----------------------------------------------------------

RESHAPE_N = 10_000_000


def sparse_reshape(rng, in_shape, out_shape):
    """sparse.reshape of RESHAPE_N entries (distinct, canonical) of in_shape to out_shape; the
    floor is the indices read once and the new ones written once."""
    flat = np.unique(rng.integers(0, int(np.prod(in_shape)), RESHAPE_N + RESHAPE_N // 8))
    flat = flat[:RESHAPE_N]
    indices = np.stack(np.unravel_index(flat, in_shape), axis=1).astype(np.int64)
    values = np.ones(len(flat), np.float32)
    dense_shape = np.array(in_shape, np.int64)
    new = np.array(out_shape, np.int64)
    sp = ndx.SparseTensor._from_parts(indices, values, dense_shape)
    torch = torch_or_none()
    scipy_sparse = scipy_or_none()

    def mine(threads):
        f = ndx.function(lambda i, v, d: ndx.sparse.reshape(ndx.SparseTensor(i, v, d), new).indices,
                         threads=threads)
        return call(f, indices, values, dense_shape)

    def numpy_peer(threads):  # what a NumPy user writes: the flat offsets, then the new rows
        return call(lambda: np.stack(np.unravel_index(
            np.ravel_multi_index(tuple(indices.T), in_shape), out_shape), axis=1))

    peers = {"np ravel/unravel": numpy_peer}
    if torch:
        ti = torch.from_numpy(indices)
        strides = torch.tensor(np.cumprod((list(in_shape[1:]) + [1])[::-1])[::-1].copy())
        out_strides = np.cumprod((list(out_shape[1:]) + [1])[::-1])[::-1].copy()

        def torch_peer(threads):  # torch.sparse has no reshape: the same arithmetic in torch ops
            def run():
                off = (ti * strides).sum(1)
                cols = []
                for s in out_strides:
                    cols.append(torch.div(off, int(s), rounding_mode="floor"))
                    off = off - cols[-1] * int(s)
                return torch.stack(cols, 1).numpy()
            return call(run)
        peers["torch (offsets, div)"] = torch_peer
    if scipy_sparse and len(in_shape) == 2 and len(out_shape) == 2:
        coo = scipy_sparse.coo_array((values, (indices[:, 0], indices[:, 1])), shape=in_shape)

        def scipy_peer(threads):
            def run():
                r = coo.reshape(out_shape)
                return np.stack([r.row, r.col], axis=1)
            return call(run)
        peers["scipy coo reshape"] = scipy_peer
    return dict(ndx=mine, peers=peers, check=exact,
                eager=call(lambda: ndx.sparse.reshape(sp, new).indices),
                stream=indices.nbytes + len(flat) * len(out_shape) * 8, random=0,
                note=f"{len(flat)} entries of {list(in_shape)} to {list(out_shape)}, int64 "
                     f"indices")


def workloads():
    """name -> builder of the workload (inputs drawn when it is run)."""
    rng = np.random.default_rng(SEED)
    return {
        "sparse_dense_matmul": lambda: sparse_dense_matmul(rng),
        "sparse.reshape 3-D to 2-D": lambda: sparse_reshape(rng, (1000, 1000, 1000),
                                                             (1_000_000, 1000)),
        "sparse.reshape 2-D to 2-D": lambda: sparse_reshape(rng, (1_000_000, 1000),
                                                             (1000, 1_000_000)),
    }


if __name__ == "__main__":
    sys.exit(peer_compare.main(__doc__, workloads))
