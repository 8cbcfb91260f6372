"""The speed workloads of shared/bench/WORKLOADS.md, built with NumPy from the same formulas as
bench/ndx_bench/bench_rng.h and bench_workloads.c (keep the three in step), plus an independent,
plainly written reference result for each and the digest `ndx bench --digest` prints.

    key(seed, w, a) = mix(seed * 1024 + w * 32 + a)
    draw(i)         = mix(key + (i + 1) * 0x9E3779B97F4A7C15)   (mod 2^64)
    below(i, n)     = draw(i) % n
    unit(i)         = float32(draw(i) >> 40) * 2^-24
"""
import math

import numpy as np

NAMES = ["G1", "G2", "G3", "S1", "S2", "D1", "P1", "C0", "C1"]
PARTS = 8
SPARSE_INPUTS = 8
SPARSE_ROWS, SPARSE_COLS = 100000, 1000000

_U = np.uint64
_GOLDEN = _U(0x9E3779B97F4A7C15)
_M1, _M2 = _U(0xBF58476D1CE4E5B9), _U(0x94D049BB133111EB)
_MASK = (1 << 64) - 1
_CHUNK = 1 << 22


def _mix_int(z):
    z &= _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def key(seed, workload, array):
    return _mix_int(seed * 1024 + workload * 32 + array)


def _draw(k, start, stop):
    z = np.arange(start + 1, stop + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z *= _GOLDEN
        z += _U(k)
        z ^= z >> _U(30)
        z *= _M1
        z ^= z >> _U(27)
        z *= _M2
        z ^= z >> _U(31)
    return z


def below(k, n, bound):
    """below(i, bound) for i in [0, n), as int64."""
    out = np.empty(n, dtype=np.int64)
    for s in range(0, n, _CHUNK):
        e = min(n, s + _CHUNK)
        out[s:e] = _draw(k, s, e) % _U(bound)
    return out


def unit(k, n):
    """unit(i) for i in [0, n), as float32."""
    out = np.empty(n, dtype=np.float32)
    for s in range(0, n, _CHUNK):
        e = min(n, s + _CHUNK)
        out[s:e] = (_draw(k, s, e) >> _U(40)).astype(np.float32)
        out[s:e] *= np.float32(2.0 ** -24)
    return out


def pairs(k, n, rows, cols):
    """[n, 2] element coordinates: row = below(2i, rows), column = below(2i + 1, cols)."""
    out = np.empty((n, 2), dtype=np.int64)
    for s in range(0, n, _CHUNK // 2):
        e = min(n, s + _CHUNK // 2)
        d = _draw(k, 2 * s, 2 * e).reshape(-1, 2)
        out[s:e, 0] = d[:, 0] % _U(rows)
        out[s:e, 1] = d[:, 1] % _U(cols)
    return out


def scaled(base, scale):
    return max(1, int(math.floor(base * scale)))


def digest(*arrays):
    """bench_rng.h's digest chain over the arrays' bytes (C order)."""
    h = 0
    for a in arrays:
        b = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
        n = b.size
        pad = (-n) % 8
        if pad:
            b = np.concatenate([b, np.zeros(pad, dtype=np.uint8)])
        w = b.view("<u8")
        total = 0
        for s in range(0, w.size, _CHUNK):
            e = min(w.size, s + _CHUNK)
            weights = np.arange(s, e, dtype=np.uint64) * _U(2) + _U(1)
            with np.errstate(over="ignore"):
                total = (total + int((w[s:e] * weights).sum(dtype=np.uint64))) & _MASK
        h = (h * 1099511628211 + total + n) & _MASK
    return h


def build(name, scale=1.0, seed=42):
    """The workload's inputs, as a dict of NumPy arrays and sizes, plus 'bytes' (read + write)."""
    w = NAMES.index(name)
    k = [key(seed, w, a) for a in range(3)]
    if name == "G1":
        p, n = scaled(262144, scale), scaled(262144, scale)
        params = unit(k[0], p * 128).reshape(p, 128)
        indices = below(k[1], n, p).reshape(n, 1)
        return dict(params=params, indices=indices, batch_dims=0, bytes=n * 8 + 2 * n * 128 * 4)
    if name == "G2":
        r, n = scaled(4096, scale), scaled(4194304, scale)
        params = unit(k[0], r * 4096).reshape(r, 4096)
        return dict(params=params, indices=pairs(k[1], n, r, 4096), batch_dims=0,
                    bytes=n * 16 + 2 * n * 4)
    if name == "G3":
        m = scaled(4096, scale)
        params = unit(k[0], 64 * m * 64).reshape(64, m, 64)
        indices = below(k[1], 64 * m, m).reshape(64, m, 1)
        return dict(params=params, indices=indices, batch_dims=1,
                    bytes=64 * m * 8 + 2 * 64 * m * 64 * 4)
    if name == "S1":
        t, n = scaled(65536, scale), scaled(262144, scale)
        return dict(tensor=unit(k[0], t * 128).reshape(t, 128),
                    indices=below(k[1], n, t).reshape(n, 1),
                    updates=unit(k[2], n * 128).reshape(n, 128),
                    bytes=2 * t * 128 * 4 + n * 8 + n * 128 * 4)
    if name == "S2":
        r, n = scaled(4096, scale), scaled(4194304, scale)
        return dict(tensor=unit(k[0], r * 4096).reshape(r, 4096), indices=pairs(k[1], n, r, 4096),
                    updates=unit(k[2], n), bytes=2 * r * 4096 * 4 + n * 16 + n * 4)
    if name == "D1":
        r = scaled(4194304, scale)
        part = below(k[0], r, PARTS)
        source = unit(k[1], r * 16).reshape(r, 16)
        indices = [np.flatnonzero(part == m).astype(np.int32) for m in range(PARTS)]
        data = [source[i] for i in indices]
        return dict(indices=indices, data=data, source=source, bytes=r * 4 + 2 * r * 16 * 4)
    if name == "P1":
        r = scaled(4194304, scale)
        return dict(data=unit(k[0], r * 16).reshape(r, 16),
                    partitions=below(k[1], r, PARTS).astype(np.int32),
                    bytes=2 * r * 16 * 4 + r * 4)
    # C0 and C1 share their inputs, drawn under C0's number.
    n = scaled(1000000, scale)
    cells = SPARSE_ROWS * SPARSE_COLS
    inputs = []
    for i in range(SPARSE_INPUTS):
        kp, kv = key(seed, 7, i), key(seed, 7, SPARSE_INPUTS + i)
        p = np.sort(below(kp, n, cells - n))
        ramp = np.arange(n, dtype=np.int64)
        p = np.maximum.accumulate(p - ramp) + ramp  # distinct and still in order
        ind = np.stack([p // SPARSE_COLS, p % SPARSE_COLS], axis=1)
        inputs.append((ind, unit(kv, n), np.array([SPARSE_ROWS, SPARSE_COLS], dtype=np.int64)))
    return dict(inputs=inputs, axis=0 if name == "C0" else 1,
                bytes=2 * SPARSE_INPUTS * n * (16 + 4))


def reference(name, w):
    """The expected output, computed plainly (a tuple of arrays for multi-array outputs)."""
    if name in ("G1", "G2"):
        idx = w["indices"]
        return w["params"][tuple(idx[:, d] for d in range(idx.shape[1]))]
    if name == "G3":
        idx = w["indices"][..., 0]
        return w["params"][np.arange(idx.shape[0])[:, None], idx]
    if name in ("S1", "S2"):
        out = w["tensor"].copy()
        idx = w["indices"]
        # np.add.at applies duplicates one after another in index order: TensorFlow's semantics.
        np.add.at(out, tuple(idx[:, d] for d in range(idx.shape[1])), w["updates"])
        return out
    if name == "D1":
        return w["source"]  # every row is named once, so the stitch gives the source back
    if name == "P1":
        return tuple(w["data"][w["partitions"] == p] for p in range(PARTS))
    ins = w["inputs"]
    axis = w["axis"]
    offsets = np.cumsum([0] + [int(sp[2][axis]) for sp in ins])
    inds, vals = [], []
    for i, (ind, val, _) in enumerate(ins):
        ind = ind.copy()
        ind[:, axis] += offsets[i]
        inds.append(ind)
        vals.append(val)
    ind, val = np.concatenate(inds), np.concatenate(vals)
    order = np.lexsort((ind[:, 1], ind[:, 0]))  # canonical: by row, then column
    shape = ins[0][2].copy()
    shape[axis] = offsets[-1]
    return (ind[order], val[order], shape)


def reference_digest(name, ref):
    return digest(*(ref if isinstance(ref, tuple) else (ref,)))
