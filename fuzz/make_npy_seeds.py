#!/usr/bin/python3
"""Writes the seed corpus of fuzz_npy (fuzz/corpus/npy/): small .npy files of every dtype NumPy
and ndx share, in C and Fortran order, both byte orders, format versions 1.0 to 3.0, scalars and
empty arrays; sparse .npz archives, stored and deflated; and a few malformed files. Run with
Debian's python3 (NumPy): /usr/bin/python3 fuzz/make_npy_seeds.py"""
import io
import os
import zipfile

import numpy as np
from numpy.lib import format as npf

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "npy")


def npy_bytes(a, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, a, allow_pickle=False)
    else:
        npf.write_array(buf, a, version=version, allow_pickle=False)
    return buf.getvalue()


def raw_npy(header, data):
    """A version 1.0 .npy with the given header text, padded as NumPy pads it."""
    h = header.encode("latin1")
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + data


def npz_bytes(members, compressed):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **members)
    return buf.getvalue()


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {}
    rng = np.random.default_rng(5)
    for dt in ["?", "i1", "<i2", "<i4", "<i8", "u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8",
               "<c8", "<c16", "S3", "<U2"]:
        if dt in ("S3",):
            a = np.array([b"ab", b"", b"xyz", b"q"], dtype=dt).reshape(2, 2)
        elif dt == "<U2":
            a = np.array(["a", "\u00e9", "\u4e2d\u6587", ""], dtype=dt)
        else:
            a = (rng.integers(-3, 4, size=(2, 3)) % (2 if dt == "?" else 100)).astype(dt)
        seeds["c-" + dt.strip("<")] = npy_bytes(a)
    seeds["big-i4"] = npy_bytes(np.arange(6, dtype=">i4").reshape(3, 2))
    seeds["big-f8"] = npy_bytes(np.array([1.5, -0.0, np.nan], dtype=">f8"))
    seeds["big-U3"] = npy_bytes(np.array(["abc", "d"], dtype=">U3"))
    seeds["big-c8"] = npy_bytes(np.array([1 + 2j], dtype=">c8"))
    seeds["fortran-2x3"] = npy_bytes(np.asfortranarray(np.arange(6, dtype="<i2").reshape(2, 3)))
    seeds["fortran-3d"] = npy_bytes(np.asfortranarray(np.arange(24, dtype="<f4").reshape(2, 3, 4)))
    seeds["scalar"] = npy_bytes(np.array(7, dtype="<i8"))
    seeds["empty"] = npy_bytes(np.zeros((0,), dtype="<f4"))
    seeds["empty-2x0x3"] = npy_bytes(np.zeros((2, 0, 3), dtype="<u2"))
    seeds["rank8"] = npy_bytes(np.zeros((1,) * 8, dtype="u1"))
    seeds["v2"] = npy_bytes(np.arange(4, dtype="<i4"), version=(2, 0))
    seeds["v3-unicode"] = npy_bytes(np.array(["\u00fc"], dtype="<U1"), version=(3, 0))
    # malformed: truncated data or header, and headers NumPy would not write
    good = npy_bytes(np.arange(10, dtype="<i8"))
    seeds["bad-truncated-data"] = good[:-5]
    seeds["bad-truncated-header"] = good[:20]
    seeds["bad-object"] = raw_npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8)
    seeds["bad-structured"] = npy_bytes(np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]))
    seeds["bad-negative-shape"] = raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (-1,), }", b"")
    seeds["bad-huge-shape"] = raw_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (9223372036854775807, 3), }", b"\0" * 16)
    seeds["bad-wide-string"] = raw_npy("{'descr': '|S99999999999', 'fortran_order': False, 'shape': (1,), }", b"ab")

    idx = np.array([[0, 1], [2, 0], [1, 1]], dtype=np.int64)
    members = {"indices": idx, "values": np.array([1.5, -2.0, 3.0], dtype=np.float32),
               "dense_shape": np.array([3, 2], dtype=np.int64)}
    seeds["sparse-stored.npz"] = npz_bytes(members, False)
    seeds["sparse-deflated.npz"] = npz_bytes(members, True)
    seeds["sparse-strings.npz"] = npz_bytes(dict(members, values=np.array([b"a", b"bc", b""])), False)
    seeds["sparse-unicode.npz"] = npz_bytes(dict(members, values=np.array(["x", "\u00e9\u00e9", ""])), True)
    seeds["sparse-empty.npz"] = npz_bytes({"indices": np.zeros((0, 3), np.int64),
                                           "values": np.zeros(0, np.int8),
                                           "dense_shape": np.array([4, 0, 2], np.int64)}, False)
    seeds["sparse-missing.npz"] = npz_bytes({"indices": idx, "values": members["values"]}, False)
    seeds["sparse-int32.npz"] = npz_bytes(dict(members, indices=idx.astype(np.int32)), True)
    seeds["sparse-outside.npz"] = npz_bytes(dict(members, indices=idx * 5), False)
    seeds["sparse-truncated.npz"] = npz_bytes(members, True)[:-30]
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(seeds)} seeds to {OUT}")


if __name__ == "__main__":
    main()
