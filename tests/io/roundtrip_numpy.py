#!/usr/bin/python3
"""NumPy writes, ndx reads and writes back, NumPy reads and compares bit for bit.

Run by CTest as: /usr/bin/python3 tests/io/roundtrip_numpy.py PATH-OF-npy_roundtrip

Covers every dtype ndx holds (bool, signed and unsigned ints, float16/32/64, complex64/128,
|S<n>, <U<n>), 0-d, zero-size and rank-8 arrays, big-endian and Fortran-ordered files, .npy
versions 1.0/2.0/3.0, large files (which ndx maps), sparse .npz archives from np.savez and
np.savez_compressed, and files ndx must refuse with a clear message.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

TOOL = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="ndx-io-")
rng = np.random.default_rng(20240517)
failures = []


def run(src, dst, *opts):
    r = subprocess.run([TOOL, src, dst, *opts], capture_output=True, text=True)
    check("sanitizers on " + os.path.basename(src),
          "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr)
    return r


def native(a):
    """The array as ndx should write it: row-major, in this machine's (little-endian) order."""
    a = np.array(a, order="C", copy=True)  # (ascontiguousarray would make 0-d arrays 1-d)
    if a.dtype.byteorder == ">":
        a = a.byteswap().view(a.dtype.newbyteorder("<"))
    return a


def random_array(dtype, shape):
    """Random contents covering every bit pattern (NaN payloads, subnormals, extreme ints)."""
    dt = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dt)
    if dt.kind == "U":
        n = dt.itemsize // 4
        pick = rng.integers(0, 6, size=count * n)
        cps = np.where(pick == 0, 0,
              np.where(pick == 1, rng.integers(0x20, 0x7f, size=count * n),
              np.where(pick == 2, rng.integers(0x80, 0x800, size=count * n),
              np.where(pick == 3, rng.integers(0x800, 0x10000, size=count * n),  # surrogates too
                       rng.integers(0x10000, 0x110000, size=count * n))))).astype("<u4")
        return np.frombuffer(cps.tobytes(), dtype="<U%d" % n).reshape(shape).astype(dt)
    raw = rng.integers(0, 256, size=count * dt.itemsize, dtype=np.uint8).tobytes()
    return np.frombuffer(raw, dtype=dt).reshape(shape).copy()


def check(label, cond, detail=""):
    if not cond:
        failures.append("%s: %s" % (label, detail))
        print("FAIL", label, detail)


def roundtrip_npy(label, a, writer=None, want_mapped=None):
    src = os.path.join(TMP, label + ".npy")
    dst = os.path.join(TMP, label + ".out.npy")
    if writer:
        with open(src, "wb") as f:
            writer(f, a)
    else:
        np.save(src, a)
    r = run(src, dst)
    if r.returncode != 0:
        check(label, False, "ndx failed: " + r.stderr.strip())
        return
    if want_mapped is not None:
        check(label + " mapped", ("mapped=%d" % want_mapped) in r.stdout, r.stdout.strip())
    if a.dtype.kind == "U":
        check(label + " kind", "kind=unicode" in r.stdout, r.stdout.strip())
    b = np.load(dst)
    want = native(a)
    check(label + " dtype", b.dtype == want.dtype, "%s vs %s" % (b.dtype, want.dtype))
    check(label + " shape", b.shape == want.shape, "%s vs %s" % (b.shape, want.shape))
    check(label + " order", b.flags.c_contiguous)
    check(label + " bytes", b.tobytes() == want.tobytes(), "data differs")


DTYPES = ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8",
          "<c8", "<c16", "|S1", "|S7", "<U1", "<U5"]

for dt in DTYPES:
    tag = dt.strip("<|").lower()
    roundtrip_npy("plain_" + tag, random_array(dt, (3, 5)))
    roundtrip_npy("scalar_" + tag, random_array(dt, ()))
    roundtrip_npy("empty_" + tag, random_array(dt, (0, 4)))
    roundtrip_npy("empty3_" + tag, random_array(dt, (3, 0, 2)))
    roundtrip_npy("fortran_" + tag, np.asfortranarray(random_array(dt, (3, 4, 5))))
    roundtrip_npy("v2_" + tag, random_array(dt, (7,)),
                  writer=lambda f, a: np.lib.format.write_array(f, a, version=(2, 0)))
    roundtrip_npy("v3_" + tag, random_array(dt, (2, 3)),
                  writer=lambda f, a: np.lib.format.write_array(f, a, version=(3, 0)))
    if dt[0] == "<":
        big = ">" + dt[1:]
        roundtrip_npy("big_" + tag, random_array(big, (4, 3)))
        roundtrip_npy("bigfortran_" + tag, np.asfortranarray(random_array(big, (2, 3, 4))))
        roundtrip_npy("bigscalar_" + tag, random_array(big, ()))

roundtrip_npy("rank8", random_array("<i4", (2, 1, 3, 2, 1, 2, 3, 2)))
roundtrip_npy("rank8_fortran", np.asfortranarray(random_array("<f8", (2, 1, 3, 2, 1, 2, 3, 2))))
roundtrip_npy("vector_fortran", np.asfortranarray(random_array("<i8", (9,))))
# Large native files are mapped, large foreign ones converted into memory.
roundtrip_npy("large", random_array("<f8", (400, 1000)), want_mapped=1)
roundtrip_npy("large_strings", random_array("|S3", (500000,)), want_mapped=1)
roundtrip_npy("large_big", random_array(">f8", (400, 1000)), want_mapped=0)
roundtrip_npy("large_fortran", np.asfortranarray(random_array("<i4", (600, 700))), want_mapped=0)
roundtrip_npy("large_unicode", random_array("<U3", (100000,)), want_mapped=0)


def roundtrip_npz(label, members, compress):
    src = os.path.join(TMP, label + ".npz")
    dst = os.path.join(TMP, label + ".out.npz")
    (np.savez_compressed if compress else np.savez)(src, **members)
    r = run(src, dst, *(["--compress"] if compress else []))
    if r.returncode != 0:
        check(label, False, "ndx failed: " + r.stderr.strip())
        return
    with zipfile.ZipFile(dst) as z:
        check(label + " crc", z.testzip() is None)
        kinds = {i.filename: i.compress_type for i in z.infolist()}
        want_kind = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
        check(label + " members", sorted(kinds) == ["dense_shape.npy", "indices.npy", "values.npy"],
              str(kinds))
        check(label + " method", set(kinds.values()) == {want_kind}, str(kinds))
    with np.load(dst) as got:
        for key, a in members.items():
            want = native(a)
            if key != "values":
                want = want.astype(np.int64)  # ndx widens int32 indices and shapes
            b = got[key]
            check("%s %s dtype" % (label, key), b.dtype == want.dtype, "%s vs %s" % (b.dtype, want.dtype))
            check("%s %s shape" % (label, key), b.shape == want.shape, "%s vs %s" % (b.shape, want.shape))
            check("%s %s bytes" % (label, key), b.tobytes() == want.tobytes(), "data differs")


def sparse_members(values_dtype, n, dense=(6, 7, 5), index_dtype=np.int64):
    idx = np.stack([rng.integers(0, d, size=n) for d in dense], axis=1).astype(index_dtype)
    return {"indices": idx, "values": random_array(values_dtype, (n,)),
            "dense_shape": np.array(dense, dtype=index_dtype)}


for dt in DTYPES + [">i4", ">f8", ">U3"]:
    tag = dt.replace("<", "").replace(">", "be").replace("|", "").lower()
    for compress in (0, 1):
        roundtrip_npz("sparse_%s_%s" % (tag, "deflated" if compress else "stored"),
                      sparse_members(dt, 11), compress)
roundtrip_npz("sparse_empty", sparse_members("<f4", 0), 0)
roundtrip_npz("sparse_int32", sparse_members("<f8", 9, index_dtype=np.int32), 1)
roundtrip_npz("sparse_large", sparse_members("<f8", 200000, dense=(1000, 1000)), 1)
roundtrip_npz("sparse_large_stored", sparse_members("<i8", 200000, dense=(1000, 1000)), 0)


def refused(label, path, needle, *opts):
    r = run(path, os.path.join(TMP, label + ".never"), *opts)
    msg = r.stderr.strip()
    check(label + " refused", r.returncode == 1, "exit %d: %s" % (r.returncode, msg))
    check(label + " names file", os.path.basename(path) in msg, msg)
    check(label + " says why", needle.lower() in msg.lower(), "%r not in %r" % (needle, msg))
    check(label + " wrote nothing", not os.path.exists(os.path.join(TMP, label + ".never")))


def saved(label, a, **kw):
    p = os.path.join(TMP, label + ".npy")
    np.save(p, a, **kw)
    return p


refused("object", saved("object", np.array([1, "a"], dtype=object), allow_pickle=True), "object")
refused("datetime", saved("datetime", np.array(["2020-01-01"], dtype="M8[D]")), "datetime")
refused("structured", saved("structured", np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")])),
        "structured")
if np.dtype(np.longdouble).itemsize > 8:
    refused("longdouble", saved("longdouble", np.zeros(3, dtype=np.longdouble)), "long double")
p = saved("truncated", np.arange(100, dtype="<i8"))
with open(p, "r+b") as f:
    f.truncate(os.path.getsize(p) - 8)
refused("truncated", p, "truncated")
p = saved("budget", np.arange(1000, dtype="<i8"))
refused("budget", p, "memory budget", "--max-bytes=4000")
refused("missing", os.path.join(TMP, "no-such-file.npy"), "cannot open")

p = os.path.join(TMP, "no_shape.npz")
np.savez(p, indices=np.zeros((2, 2), np.int64), values=np.zeros(2, np.float32))
refused("no_shape", p, "dense_shape")
p = os.path.join(TMP, "misshaped.npz")
np.savez(p, indices=np.zeros((2, 2), np.int64), values=np.zeros(3, np.float32),
         dense_shape=np.array([4, 4], np.int64))
refused("misshaped", p, "values has shape")
p = os.path.join(TMP, "badcrc.npz")
np.savez(p, **sparse_members("<f8", 20))
data = bytearray(open(p, "rb").read())
vals = data.find(b"\x93NUMPY", data.find(b"values.npy"))  # the member's data, after its name
data[vals + 200] ^= 0x55
open(p, "wb").write(bytes(data))
refused("badcrc", p, "CRC-32")

if failures:
    print("%d failure(s); files kept in %s" % (len(failures), TMP))
    sys.exit(1)
shutil.rmtree(TMP)
print("all NumPy round trips exact")
