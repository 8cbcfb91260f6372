"""ndx gather_nd end to end, against a NumPy reference, on random inputs of every dtype."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import (ALL_DTYPES, INDEX_DTYPES, Folder, check, check_same, error_of, main,  # noqa: E402
                     random_array, random_indices, ref_gather_nd, run)


def gather(f, params, indices, *flags):
    run("gather_nd", f.save("params.npy", params), f.save("indices.npy", indices),
        "-o", f.path("out.npy"), *flags)
    return f.load("out.npy")


def test_every_dtype_elements_and_slices():
    rng = np.random.default_rng(1)
    with Folder() as f:
        for n, dtype in enumerate(ALL_DTYPES):
            params = random_array(rng, dtype, (3, 4, 2))
            for depth in (1, 2, 3):
                idt = INDEX_DTYPES[(n + depth) % 3]
                indices = random_indices(rng, idt, (5, depth), params.shape[:depth])
                got = gather(f, params, indices)
                check_same(got, ref_gather_nd(params, indices), f"{dtype} depth {depth}")


def test_index_shapes_scalar_and_depth_zero():
    rng = np.random.default_rng(2)
    params = random_array(rng, "float32", (5, 6))
    with Folder() as f:
        # A rank-1 index is one index row: a scalar out.
        got = gather(f, params, np.array([1, 2]))
        check(got.shape == () and got == params[1, 2], f"scalar gather: {got!r}")
        # Index rows with leading dimensions.
        indices = random_indices(rng, "int32", (2, 3, 2), params.shape)
        check_same(gather(f, params, indices), ref_gather_nd(params, indices), "rank-3 indices")
        # Depth 0 gathers the whole of params per row.
        indices = np.zeros((3, 0), dtype=np.int64)
        check_same(gather(f, params, indices), np.stack([params] * 3), "depth 0")
        # No index rows: an empty output of the right shape.
        indices = np.zeros((0, 1), dtype=np.int64)
        got = gather(f, params, indices)
        check(got.shape == (0, 6) and got.dtype == params.dtype, f"empty: {got.shape}")


def test_batch_dims():
    rng = np.random.default_rng(3)
    with Folder() as f:
        params = random_array(rng, "U3", (2, 3, 4))
        indices = random_indices(rng, "int64", (2, 5, 1), 3)
        got = gather(f, params, indices, "--batch-dims", "1")
        check_same(got, ref_gather_nd(params, indices, 1), "batch_dims 1 slices")
        indices = random_indices(rng, "int16", (2, 3, 2, 1), 4)
        got = gather(f, params, indices, "--batch-dims=2")
        check_same(got, ref_gather_nd(params, indices, 2), "batch_dims 2 elements")


def test_bad_indices_error_and_zero():
    rng = np.random.default_rng(4)
    with Folder() as f:
        for dtype in ("float64", "S5", "int8"):
            params = random_array(rng, dtype, (4, 3))
            indices = np.array([[0, 1], [5, 2], [3, 0], [-1, 0]], dtype=np.int32)
            p = run("gather_nd", f.save("p.npy", params), f.save("i.npy", indices),
                    "-o", f.path("out.npy"), expect=1)
            check("gather_nd" in error_of(p) and "5" in error_of(p),
                  f"the error should name the op and the index: {p.stderr!r}")
            check(not os.path.exists(f.path("out.npy")), "a failed gather wrote its output")
            for mode in ("zero", "ignore"):  # one vocabulary with Python's bad_indices=
                got = gather(f, params, indices, "--bad-indices", mode)
                check_same(got, ref_gather_nd(params, indices, zero_bad=True), f"{dtype} {mode}")
            got = gather(f, params, indices[[0, 2]], "--bad-indices", "error")
            check_same(got, ref_gather_nd(params, indices[[0, 2]]), f"{dtype} error mode")
            os.remove(f.path("out.npy"))


def test_threads_give_identical_bytes():
    rng = np.random.default_rng(5)
    params = random_array(rng, "float32", (300, 64))
    indices = random_indices(rng, "int64", (20000, 1), 300)
    with Folder() as f:
        f.save("p.npy", params)
        f.save("i.npy", indices)
        blobs = []
        for t in ("1", "2", "3", "0"):
            out = f.path(f"out{t}.npy")
            run("gather_nd", f.path("p.npy"), f.path("i.npy"), "-o", out, "--threads", t)
            with open(out, "rb") as fh:
                blobs.append(fh.read())
        check(all(b == blobs[0] for b in blobs), "thread counts gave different files")
        check_same(f.load("out1.npy"), ref_gather_nd(params, indices), "threaded gather")


def test_op_errors_exit_1():
    rng = np.random.default_rng(6)
    params = random_array(rng, "int32", (4, 3))
    with Folder() as f:
        pp = f.save("p.npy", params)
        out = f.path("out.npy")
        cases = [
            (np.array([[0, 0, 0, 0]]), []),                     # depth above the rank
            (np.array([[0.0, 1.0]]), []),                       # float indices
            (np.array(1), []),                                  # scalar indices
            (np.array([[[0]], [[1]], [[2]], [[3]]]), ["--batch-dims", "-1"]),
            (np.array([[0]]), ["--batch-dims", "5"]),
        ]
        for k, (indices, flags) in enumerate(cases):
            run("gather_nd", pp, f.save(f"i{k}.npy", indices), "-o", out, *flags, expect=1)
            check(not os.path.exists(out), f"case {k} wrote an output")


main(globals())
