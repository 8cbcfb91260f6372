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


# ---- sparse fill: fill_empty_rows ----

FILL_ENTRIES, FILL_ROWS, FILL_COLS = 10_000_000, 1_000_000, 1000


def fill_empty_rows(rng):
    """10M entries in canonical order over 1M rows, a tenth of them empty."""
    empty = rng.random(FILL_ROWS) < 0.1
    rows = np.sort(rng.choice(np.flatnonzero(~empty), FILL_ENTRIES))
    cols = rng.integers(0, FILL_COLS, FILL_ENTRIES)
    indices = np.stack([rows, cols], 1)
    values = rng.standard_normal(FILL_ENTRIES, dtype=np.float32)
    shape = np.array([FILL_ROWS, FILL_COLS], np.int64)
    torch = torch_or_none()

    def parts(i, v):
        out, ind = ndx.sparse.fill_empty_rows(ndx.SparseTensor(i, v, shape), 0.0)
        return [out.indices, out.values, ind]

    def mine(threads):
        f = ndx.function(parts, threads=threads)
        run, result = call(f, indices, values)
        return run, lambda: tuple(result())

    def np_peer(threads):
        # grouped by row in input order: a stable sort of the entries and one filler per empty
        # row, appended after them
        def run():
            counts = np.bincount(indices[:, 0], minlength=FILL_ROWS)
            fill = np.flatnonzero(counts == 0)
            all_rows = np.concatenate([indices[:, 0], fill])
            order = np.argsort(all_rows, kind="stable")
            cols = np.concatenate([indices[:, 1], np.zeros(fill.size, np.int64)])
            vals = np.concatenate([values, np.zeros(fill.size, np.float32)])
            last["r"] = (np.stack([all_rows[order], cols[order]], 1), vals[order], counts == 0)
        last = {}
        return run, lambda: last["r"]

    peers = {"numpy bincount+argsort": np_peer}
    if torch:
        ti, tv = torch.from_numpy(indices), torch.from_numpy(values)

        def torch_peer(threads):
            def run():
                counts = torch.bincount(ti[:, 0], minlength=FILL_ROWS)
                fill = torch.nonzero(counts == 0).reshape(-1)
                all_rows = torch.cat([ti[:, 0], fill])
                order = torch.argsort(all_rows, stable=True)
                cols = torch.cat([ti[:, 1], torch.zeros(fill.numel(), dtype=torch.int64)])
                vals = torch.cat([tv, torch.zeros(fill.numel(), dtype=torch.float32)])
                last["r"] = (torch.stack([all_rows[order], cols[order]], 1).numpy(),
                             vals[order].numpy(), (counts == 0).numpy())
            last = {}
            return run, lambda: last["r"]
        peers["torch bincount+argsort"] = torch_peer

    def check(got, want):
        return next((n for n in (exact(g, w) for g, w in zip(got, want)) if n), "")

    n_full = FILL_ENTRIES + int(empty.sum())
    return dict(ndx=mine, peers=peers, check=check,
                eager=call(lambda: parts(indices, values)), eager_check=check,
                # read the entries, write the filled ones and the indicator (ndx also writes
                # the reverse map, 8 bytes an entry, which the floor does not count)
                stream=indices.nbytes + values.nbytes + n_full * (16 + 4) + FILL_ROWS, random=0,
                note=f"{FILL_ENTRIES} entries [{FILL_ROWS}, {FILL_COLS}], "
                     f"{int(empty.sum())} empty rows, canonical order, float32")


# ---- sparse.reduce_sum and sparse.reduce_max (src/ops/sparse_reduce.c) ----

REDUCE_SHAPE = (200_000, 200_000)
REDUCE_NNZ = 10_000_000


def reduce_input(rng):
    """A [200000, 200000] float32 SparseTensor of 10M distinct entries in canonical order, in
    TensorFlow's layout: int64 indices [n, 2], values, dense_shape."""
    rows, cols = REDUCE_SHAPE
    flat = np.unique(rng.integers(0, rows * cols, REDUCE_NNZ + REDUCE_NNZ // 50))[:REDUCE_NNZ]
    idx = np.stack(np.divmod(flat, cols), axis=1).astype(np.int64)
    vals = rng.standard_normal(len(flat), dtype=np.float32)
    return idx, vals, np.array(REDUCE_SHAPE, np.int64)


def tf_layout_peers(idx, vals, axis, reduce):
    """What a user holding the TensorFlow-layout SparseTensor calls, timed from that input
    (every conversion inside the timed call)."""
    sps, torch = scipy_or_none(), torch_or_none()
    peers = {}
    if axis is None:
        return peers
    kept = 1 - axis  # the coordinate column that names the output element
    n_out = REDUCE_SHAPE[kept]

    def peer(fn, post=lambda r: r):
        def setup(threads):
            last = {}

            def run():
                last["r"] = fn()
            return run, (lambda: np.asarray(post(last["r"])).reshape(-1))
        return setup

    if reduce == "sum":
        # float64 result (bincount's weights): checked with a tolerance like the others
        peers["np.bincount (TF layout)"] = peer(
            lambda: np.bincount(idx[:, kept], weights=vals, minlength=n_out))
        if sps:
            peers["scipy coo built+sum (TF layout)"] = peer(
                lambda: sps.coo_matrix((vals, (idx[:, 0], idx[:, 1])),
                                       shape=REDUCE_SHAPE).sum(axis=axis))
    else:
        if axis == 1:  # rows in canonical order: one reduceat over the row starts
            def reduceat():
                r = idx[:, 0]
                starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
                out = np.zeros(n_out, np.float32)  # TF: 0 for a row without entries
                out[r[starts]] = np.maximum.reduceat(vals, starts)
                return out
            peers["np.maximum.reduceat (TF layout)"] = peer(reduceat)
    if torch:
        ti, tv = torch.from_numpy(idx), torch.from_numpy(vals)
        if reduce == "sum":
            peers["torch index_add_ (TF layout)"] = peer(
                lambda: torch.zeros(n_out).index_add_(0, ti[:, kept], tv), lambda r: r.numpy())
            peers["torch coo coalesce+sparse.sum (TF layout)"] = peer(
                lambda: torch.sparse.sum(torch.sparse_coo_tensor(ti.T, tv, REDUCE_SHAPE)
                                         .coalesce(), dim=axis),
                lambda r: r.to_dense().numpy())
        else:
            # include_self=False: an element no entry reaches keeps its 0, as TF's
            peers["torch scatter_reduce amax (TF layout)"] = peer(
                lambda: torch.zeros(n_out).scatter_reduce_(0, ti[:, kept], tv, "amax",
                                                           include_self=False),
                lambda r: r.numpy())
    return peers


def sparse_reduce_sum(rng, axis):
    """reduce_sum of reduce_input over `axis` (None: every dim). Peers: SciPy's COO and CSR
    .sum(axis) on matrices built beforehand (not timed: a different input format, int32
    indices, and for axis 1 CSR never reads the column indices), torch.sparse.sum on a
    coalesced COO tensor built beforehand, and tf_layout_peers, timed from TF's layout."""
    idx, vals, shape = reduce_input(rng)
    rows, cols = REDUCE_SHAPE
    sps, torch = scipy_or_none(), torch_or_none()

    def mine(threads):
        f = ndx.function(lambda i, v, s: ndx.sparse.reduce_sum(
            ndx.SparseTensor._from_parts(i, v, s), axis), threads=threads)
        return call(f, idx, vals, shape)

    def as_array(x):
        return np.asarray(x).reshape(-1) if axis is not None else np.asarray(x).reshape(())

    peers = {}
    if sps:
        coo = sps.coo_matrix((vals, (idx[:, 0].astype(np.int32), idx[:, 1].astype(np.int32))),
                             shape=REDUCE_SHAPE)
        csr = coo.tocsr()
        for label, m in (("scipy coo", coo), ("scipy csr", csr)):
            def peer(threads, m=m):
                last = {}

                def run():
                    last["r"] = m.sum(axis=axis)
                return run, (lambda: as_array(last["r"]))
            peers[label + ".sum (prebuilt, other format)"] = peer
    if torch:
        t = torch.sparse_coo_tensor(torch.from_numpy(idx.T.copy()), torch.from_numpy(vals),
                                    REDUCE_SHAPE).coalesce()

        def torch_peer(threads):
            last = {}

            def run():
                last["r"] = (torch.sparse.sum(t, dim=axis) if axis is not None
                             else torch.sparse.sum(t))
            return run, (lambda: as_array(last["r"].to_dense() if last["r"].is_sparse
                                          else last["r"]))
        peers["torch.sparse.sum (prebuilt coalesced)"] = torch_peer
    peers.update(tf_layout_peers(idx, vals, axis, "sum"))

    def check(got, want):
        got = np.asarray(got, np.float64)
        want = np.asarray(want, np.float64)
        if got.shape != want.shape:
            return f"shape {list(got.shape)} instead of {list(want.shape)}"
        bad = ~np.isclose(got, want, rtol=1e-3, atol=1e-3)
        return f"{int(bad.sum())} elements differ" if bad.any() else ""
    return dict(ndx=mine, peers=peers, check=check,
                eager=call(lambda: ndx.sparse.reduce_sum(ndx.SparseTensor._from_parts(
                    idx, vals, shape), axis)),
                stream=idx.nbytes + vals.nbytes, random=0,
                note=f"[{rows}, {cols}] float32, {len(vals)} entries in canonical order, "
                     f"int64 indices, axis {axis}; floor: reading the indices and values once "
                     f"({(idx.nbytes + vals.nbytes) / 1e6:.0f} MB)")


def sparse_reduce_max(rng, axis):
    """reduce_max of reduce_input over `axis`: TF's max over the entries present (0 for an
    element with none). SciPy's csr.max(axis) (prebuilt) counts the implicit zeros of a row
    that is not full, so it agrees only where each row's max is positive: the exact check
    below marks it wrong otherwise. torch scatter_reduce amax and NumPy's reduceat from TF's
    layout."""
    idx, vals, shape = reduce_input(rng)
    rows, cols = REDUCE_SHAPE
    sps = scipy_or_none()

    def mine(threads):
        f = ndx.function(lambda i, v, s: ndx.sparse.reduce_max(
            ndx.SparseTensor._from_parts(i, v, s), axis), threads=threads)
        return call(f, idx, vals, shape)

    peers = {}
    if sps:
        csr = sps.csr_matrix((vals, (idx[:, 0].astype(np.int32), idx[:, 1].astype(np.int32))),
                             shape=REDUCE_SHAPE)

        def scipy_peer(threads):
            last = {}

            def run():
                last["r"] = csr.max(axis=axis)
            return run, (lambda: np.asarray(last["r"].todense()).reshape(-1))
        peers["scipy csr.max (prebuilt, other format)"] = scipy_peer
    peers.update(tf_layout_peers(idx, vals, axis, "max"))

    def check(got, want):  # a max is exact: no tolerance
        return exact(np.asarray(got, np.float32).reshape(-1), np.asarray(want).reshape(-1))
    return dict(ndx=mine, peers=peers, check=check,
                eager=call(lambda: ndx.sparse.reduce_max(ndx.SparseTensor._from_parts(
                    idx, vals, shape), axis)),
                stream=idx.nbytes + vals.nbytes, random=0,
                note=f"[{rows}, {cols}] float32, {len(vals)} entries in canonical order, "
                     f"int64 indices, axis {axis}; SciPy's max counts implicit zeros (right "
                     f"here only because every row's max is positive)")


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
        "fill_empty_rows": lambda: fill_empty_rows(rng),
        "sparse.reduce_sum axis 1": lambda: sparse_reduce_sum(rng, 1),
        "sparse.reduce_sum axis 0": lambda: sparse_reduce_sum(rng, 0),
        "sparse.reduce_sum all axes": lambda: sparse_reduce_sum(rng, None),
        "sparse.reduce_max axis 1": lambda: sparse_reduce_max(rng, 1),
        "sparse.add 2x10M": lambda: sparse_add(rng),
        "sparse.reshape 3-D to 2-D": lambda: sparse_reshape(rng, (1000, 1000, 1000),
                                                             (1_000_000, 1000)),
        "sparse.reshape 2-D to 2-D": lambda: sparse_reshape(rng, (1_000_000, 1000),
                                                             (1000, 1_000_000)),
    }


if __name__ == "__main__":
    sys.exit(peer_compare.main(__doc__, workloads))
