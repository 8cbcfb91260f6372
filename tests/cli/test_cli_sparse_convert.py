"""ndx sparse_reorder, sparse_to_dense and dense_to_sparse end to end, against NumPy references
written here: a stable sort of the entries, a dense array filled by hand, np.nonzero."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import (Folder, check, check_same, error_of, main, random_array,  # noqa: E402
                     run)

DTYPES = ["float32", "int64", "bool", "float16", "complex64", "uint8", "int8", "float64", "S4",
          "U2"]


def random_sparse(rng, dtype, dense_shape, density=0.5):
    """Entries in random order, some of them repeated (reorder keeps their order)."""
    cells = [c for c in np.ndindex(*dense_shape) if rng.random() < density]
    cells += [cells[int(i)] for i in rng.integers(0, len(cells), size=len(cells) // 3)] \
        if cells else []
    rng.shuffle(cells)
    indices = np.array(cells, dtype=np.int64).reshape(len(cells), len(dense_shape))
    values = random_array(rng, dtype, (len(cells),))
    return indices, values, np.array(dense_shape, dtype=np.int64)


def load_sparse(f, name):
    with np.load(f.path(name), allow_pickle=False) as z:
        return z["indices"], z["values"], z["dense_shape"]


def test_reorder_is_a_stable_sort():
    rng = np.random.default_rng(5)
    with Folder() as f:
        for dtype in DTYPES:
            for shape in ([5], [3, 4], [2, 3, 2], [0, 3]):
                indices, values, dense_shape = random_sparse(rng, dtype, shape)
                f.savez("in.npz", indices=indices.astype(np.int32), values=values,
                        dense_shape=dense_shape)
                run("sparse_reorder", f.path("in.npz"), "-o", f.path("out.npz"))
                got = load_sparse(f, "out.npz")
                order = sorted(range(len(indices)), key=lambda k: (tuple(indices[k]), k))
                what = f"reorder {dtype} {shape}"
                check(got[0].dtype == np.int64, f"{what}: indices dtype {got[0].dtype}")
                check_same(got[0], indices[order].reshape(len(order), len(shape)), what)
                check_same(got[1], values[order], what, dtype=values.dtype.kind not in "SU")
                check_same(got[2], dense_shape, what)


def test_to_dense_and_back():
    rng = np.random.default_rng(6)
    with Folder() as f:
        for dtype in DTYPES:
            for shape in ([6], [3, 4], [2, 2, 3]):
                dense = random_array(rng, dtype, shape)
                if dense.dtype.kind not in "SU":
                    dense[rng.random(shape) < 0.5] = 0
                f.save("d.npy", dense)
                run("dense_to_sparse", f.path("d.npy"), "-o", f.path("sp.npz"), "--compress")
                indices, values, dense_shape = load_sparse(f, "sp.npz")
                nz = np.nonzero(dense)
                what = f"from_dense {dtype} {shape}"
                check_same(indices, np.stack(nz, axis=1).astype(np.int64), what)
                check_same(values, dense[nz], what, dtype=dense.dtype.kind not in "SU")
                check_same(dense_shape, np.array(shape), what, dtype=False)
                run("sparse_to_dense", f.path("sp.npz"), "-o", f.path("back.npy"))
                check_same(f.load("back.npy"), dense, f"round trip {dtype} {shape}",
                           dtype=dense.dtype.kind not in "SU")


# (dtype, --default-value, the text NumPy reads for it): every numeric dtype, at its limits and
# where a careless parse goes wrong (octal "010", float16 double rounding, underflow).
DEFAULTS = [
    ("bool", "true", "True"), ("bool", "false", "False"), ("bool", "1", "True"),
    ("bool", "0", "False"),
    ("int8", "-128", "-128"), ("int8", "127", "127"), ("int16", "-32768", "-32768"),
    ("int32", "2147483647", "2147483647"), ("int32", "010", "10"), ("int32", "+7", "7"),
    ("int64", "-9223372036854775808", "-9223372036854775808"),
    ("uint8", "255", "255"), ("uint16", "65535", "65535"), ("uint32", "4294967295", "4294967295"),
    ("uint64", "18446744073709551615", "18446744073709551615"),
    ("float16", "0.25", "0.25"), ("float16", "65504", "65504"), ("float16", "65519", "65519"),
    ("float16", "1.00048828125000091", "1.00048828125000091"), ("float16", "-inf", "-inf"),
    ("float16", "nan", "nan"), ("float16", "1e-9", "1e-9"),
    ("float32", "-1.5", "-1.5"), ("float32", "0.1", "0.1"),
    ("float32", "3.4028235e38", "3.4028235e38"), ("float32", "1e-310", "1e-310"),
    ("float64", "1e-310", "1e-310"), ("float64", "-0.0", "-0.0"), ("float64", "0.1", "0.1"),
    ("complex64", "1,-2", "1,-2"), ("complex64", "0.5", "0.5"),
    ("complex128", "1e-310,-inf", "1e-310,-inf"),
]


def numpy_value(dtype, text):
    """The element NumPy makes of `text` for `dtype` (complex as RE,IM)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.array(text == "True")
    if dtype.kind == "c":
        re, _, im = text.partition(",")
        return np.array(complex(float(re), float(im or 0)), dtype=dtype)
    return np.array(dtype.type(text), dtype=dtype)


def test_to_dense_default_values():
    with Folder() as f:
        for dtype, text, numpy_text in DEFAULTS:
            values = np.array([1, 0], dtype=dtype)
            f.savez("sp.npz", indices=np.array([[1, 0], [0, 2]]), values=values,
                    dense_shape=np.array([2, 3]))
            run("sparse_to_dense", f.path("sp.npz"), "-o", f.path("d.npy"), "--default-value",
                text)
            got = f.load("d.npy")
            want = np.full((2, 3), numpy_value(dtype, numpy_text), dtype=dtype)
            want[1, 0], want[0, 2] = values[0], values[1]
            what = f"default {dtype} {text}"
            check_same(got, want, what)
            if want.dtype.kind in "fc":  # -0.0 is not 0.0 here
                check(np.array_equal(np.signbit(got.view(got.real.dtype)),
                                     np.signbit(want.view(want.real.dtype))), f"{what}: signs")
        strings = [("S3", "ab", b"ab"), ("S1", "longer", b"longer"), ("U2", "héé", "héé"),
                   ("U2", "x" * 9, "x" * 9), ("S4", "", b"")]
        for dtype, text, want_default in strings:
            values = np.array(["x", "yz"], dtype=dtype)
            f.savez("sp.npz", indices=np.array([[1, 0], [0, 2]]), values=values,
                    dense_shape=np.array([2, 3]))
            run("sparse_to_dense", f.path("sp.npz"), "-o", f.path("d.npy"), "--default-value",
                text)
            got = f.load("d.npy")
            check(got.dtype.kind == dtype[0], f"default {dtype} {text!r}: {got.dtype}")
            want = np.full((2, 3), want_default, dtype=got.dtype)
            want[1, 0], want[0, 2] = values[0], values[1]
            check_same(got, want, f"default {dtype} {text!r}", dtype=False)


# (dtype, --default-value that is not one of its values)
NOT_VALUES = [
    ("bool", "yes"), ("bool", "True"), ("int8", "128"), ("int8", "-129"), ("uint8", "-1"),
    ("uint64", "18446744073709551616"), ("uint16", "-0"), ("int64", "0x10"), ("int32", " 5"),
    ("int32", "5 "), ("int32", "1.0"), ("int32", ""), ("float16", "70000"),
    ("float32", "1e39"), ("float64", "1e999"), ("float64", ""), ("float64", "1.5x"),
    ("complex64", "1,2,3"), ("complex64", "1,"), ("complex128", "1e999,0"),
]


def test_to_dense_rejects_what_is_not_a_value():
    with Folder() as f:
        for dtype, text in NOT_VALUES:
            f.savez("sp.npz", indices=np.array([[0]]), values=np.array([1], dtype=dtype),
                    dense_shape=np.array([3]))
            p = run("sparse_to_dense", f.path("sp.npz"), "-o", f.path("d.npy"),
                    "--default-value", text, expect=1)
            want = f"sparse_to_dense: --default-value '{text}' is not a value of dtype {dtype}"
            check(error_of(p) == want, error_of(p))
            check(f.listing() == ["sp.npz"], f"{dtype} {text!r}: {f.listing()}")


def test_signed_zeros_and_nans_from_dense():
    """-0.0 is zero and NaN is not, for every float and complex dtype, as np.nonzero says."""
    nz = float("nan")
    with Folder() as f:
        for dtype in ("float16", "float32", "float64", "complex64", "complex128"):
            dense = np.array([[0.0, -0.0, nz], [1.0, -0.0, 0.0]], dtype=dtype)
            if dense.dtype.kind == "c":
                dense[1, 2] = complex(-0.0, -0.0)
                dense[0, 0] = complex(0.0, nz)
            f.save("d.npy", dense)
            run("dense_to_sparse", f.path("d.npy"), "-o", f.path("sp.npz"))
            indices, values, dense_shape = load_sparse(f, "sp.npz")
            where = np.nonzero(dense)
            check_same(indices, np.stack(where, axis=1).astype(np.int64), dtype)
            check_same(values, dense[where], dtype)


def test_threads_and_memory_cap():
    """Every thread count gives the same bytes; --max-memory caps what the op may allocate."""
    rng = np.random.default_rng(7)
    with Folder() as f:
        indices, values, dense_shape = random_sparse(rng, "float64", [40, 30, 20], density=0.3)
        f.savez("in.npz", indices=indices, values=values, dense_shape=dense_shape)
        keep = np.unique(indices, axis=0, return_index=True)[1][:500]  # few, in reverse order
        f.savez("unique.npz", indices=indices[keep][::-1], values=values[keep][::-1],
                dense_shape=dense_shape)
        dense = random_array(rng, "int8", (50, 40)) * (rng.random((50, 40)) < 0.9)
        f.save("dense.npy", dense.astype(np.int8))
        # Each cap leaves room to load the input but not for what the op allocates: the sorted
        # copy; the dense output (192000 bytes); 17 bytes of output per int8 entry.
        runs = [("sparse_reorder", "in.npz", "out.npz", os.path.getsize(f.path("in.npz"))),
                ("sparse_to_dense", "unique.npz", "out.npy", 40 * 30 * 20 * 8 - 1),
                ("dense_to_sparse", "dense.npy", "out.npz", os.path.getsize(f.path("dense.npy")))]
        for cmd, src, dst, cap in runs:
            outputs = set()
            for threads in ("1", "2", "3", "0"):
                run(cmd, f.path(src), "-o", f.path(dst), "--threads", threads)
                with open(f.path(dst), "rb") as fh:
                    outputs.add(fh.read())
            check(len(outputs) == 1, f"{cmd}: outputs differ across thread counts")
            os.remove(f.path(dst))
            p = run(cmd, f.path(src), "-o", f.path(dst), "--max-memory", str(cap), expect=1)
            check(error_of(p).startswith(cmd + ":") and "--max-memory" in error_of(p),
                  error_of(p))
            check(not os.path.exists(f.path(dst)), f"{cmd}: wrote under a failed cap")


def test_errors():
    with Folder() as f:
        f.savez("rep.npz", indices=np.array([[0, 1], [0, 1]]), values=np.array([1.0, 2.0]),
                dense_shape=np.array([2, 2]))
        p = run("sparse_to_dense", f.path("rep.npz"), "-o", f.path("d.npy"), expect=1)
        check(error_of(p) == "sparse_to_dense: sp.indices[1] = [0, 1] repeats sp.indices[0]",
              error_of(p))
        f.savez("out.npz", indices=np.array([[0, 3]]), values=np.array([1.0]),
                dense_shape=np.array([2, 2]))
        p = run("sparse_reorder", f.path("out.npz"), "-o", f.path("o.npz"), expect=1)
        check("outside dense_shape" in error_of(p), error_of(p))
        f.save("s.npy", np.array(1))
        p = run("dense_to_sparse", f.path("s.npy"), "-o", f.path("o.npz"), expect=1)
        check("scalar" in error_of(p), error_of(p))
        for cmd in ("sparse_reorder", "sparse_to_dense", "dense_to_sparse"):
            p = run(cmd, "--help")
            check("Example" in p.stdout, f"{cmd} --help")
            run(cmd, f.path("s.npy"), expect=2)
        check(not os.path.exists(f.path("d.npy")) and not os.path.exists(f.path("o.npz")),
              "a failed run wrote an output")


if __name__ == "__main__":
    main(globals())
