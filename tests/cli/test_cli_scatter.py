"""ndx scatter_nd and tensor_scatter_nd_* end to end, against NumPy references (in-order loops)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import (ALL_DTYPES, INDEX_DTYPES, NUMERIC_DTYPES, Folder, check, check_same,  # noqa: E402
                     error_of, main, random_array, random_indices, ref_scatter_nd,
                     ref_tensor_scatter, run)

OPS = ["add", "sub", "update", "min", "max"]


def supports(op, dtype):
    kind = np.dtype(dtype).kind
    if op == "update":
        return True
    if op in ("add", "sub"):
        return kind in "iufc"
    return kind in "iuf"


def tensor_scatter(f, op, tensor, indices, updates, *flags, expect=0):
    p = run(f"tensor_scatter_nd_{op}", f.save("t.npy", tensor), f.save("i.npy", indices),
            f.save("u.npy", updates), "-o", f.path("out.npy"), *flags, expect=expect)
    return f.load("out.npy") if expect == 0 else p


def test_tensor_scatter_every_op_and_dtype():
    rng = np.random.default_rng(11)
    with Folder() as f:
        for n, dtype in enumerate(ALL_DTYPES):
            tensor = random_array(rng, dtype, (4, 3, 2))
            for k, op in enumerate(OPS):
                depth = 1 + (n + k) % 3
                # 7 rows over few destinations: duplicates are certain.
                indices = random_indices(rng, INDEX_DTYPES[(n + k) % 3], (7, depth),
                                         tensor.shape[:depth])
                updates = random_array(rng, dtype, (7,) + tensor.shape[depth:])
                if not supports(op, dtype):
                    p = tensor_scatter(f, op, tensor, indices, updates, expect=1)
                    check(f"tensor_scatter_nd_{op}" in p.stderr or "scatter" in p.stderr,
                          f"{op} on {dtype}: {p.stderr!r}")
                    continue
                got = tensor_scatter(f, op, tensor, indices, updates)
                check_same(got, ref_tensor_scatter(op, tensor, indices, updates),
                           f"tensor_scatter_nd_{op} {dtype} depth {depth}")


def test_min_max_nan_rules():
    nan = np.nan
    tensor = np.array([1.0, nan, 3.0, 4.0], dtype=np.float32)
    indices = np.array([[0], [1], [2], [3]])
    updates = np.array([nan, 0.0, 2.0, 5.0], dtype=np.float32)
    with Folder() as f:
        for op in ("min", "max"):
            got = tensor_scatter(f, op, tensor, indices, updates)
            check_same(got, ref_tensor_scatter(op, tensor, indices, updates), f"{op} with NaN")


def test_integer_wraparound_and_float16():
    with Folder() as f:
        tensor = np.array([120, -120], dtype=np.int8)
        indices = np.array([[0], [0], [1]])
        updates = np.array([5, 10, -20], dtype=np.int8)
        got = tensor_scatter(f, "add", tensor, indices, updates)
        check_same(got, np.array([-121, 116], dtype=np.int8), "int8 wraps")
        tensor = np.array([2048, 0.5], dtype=np.float16)
        indices = np.array([[0], [0], [1]])
        updates = np.array([1, 1, 0.25], dtype=np.float16)
        got = tensor_scatter(f, "add", tensor, indices, updates)
        # 2048 + 1 rounds back to 2048 at every step in float16.
        check_same(got, np.array([2048, 0.75], dtype=np.float16), "float16 rounds per step")


def test_bad_indices_error_and_skip():
    rng = np.random.default_rng(12)
    tensor = random_array(rng, "float64", (5, 2))
    indices = np.array([[1], [7], [-1], [4]], dtype=np.int64)
    updates = random_array(rng, "float64", (4, 2))
    with Folder() as f:
        for op in OPS:
            p = tensor_scatter(f, op, tensor, indices, updates, expect=1)
            check("7" in error_of(p), f"the error should name the index: {p.stderr!r}")
            check(not os.path.exists(f.path("out.npy")), "a failed scatter wrote its output")
            for mode in ("skip", "ignore"):  # one vocabulary with Python's bad_indices=
                got = tensor_scatter(f, op, tensor, indices, updates, "--bad-indices", mode)
                check_same(got, ref_tensor_scatter(op, tensor, indices, updates, skip_bad=True),
                           f"{op} {mode} mode")
            os.remove(f.path("out.npy"))


def test_output_may_be_the_input():
    rng = np.random.default_rng(13)
    tensor = random_array(rng, "int32", (6, 3))
    indices = random_indices(rng, "int32", (4, 1), 6)
    updates = random_array(rng, "int32", (4, 3))
    with Folder() as f:
        t = f.save("t.npy", tensor)
        run("tensor_scatter_nd_add", t, f.save("i.npy", indices), f.save("u.npy", updates),
            "-o", t)
        check_same(f.load("t.npy"), ref_tensor_scatter("add", tensor, indices, updates),
                   "in place")
        check(f.listing() == ["i.npy", "t.npy", "u.npy"], f"stray files: {f.listing()}")


def test_string_widths_and_kinds():
    with Folder() as f:
        tensor = np.array([b"a", b"bb", b""], dtype="S2")
        indices = np.array([[2], [0]])
        updates = np.array([b"longer", b"x"], dtype="S6")
        got = tensor_scatter(f, "update", tensor, indices, updates)
        check_same(got, np.array([b"x", b"bb", b"longer"], dtype="S6"), "widened bytes")
        tensor = np.array(["é", "日本"], dtype="U2")
        updates = np.array(["ß€😀"], dtype="U3")
        got = tensor_scatter(f, "update", tensor, np.array([[1]]), updates)
        check_same(got, np.array(["é", "ß€😀"], dtype="U3"), "widened unicode")
        p = tensor_scatter(f, "update", tensor, np.array([[1]]), np.array([b"x"]), expect=1)
        check("updates" in error_of(p) and "tensor" in error_of(p), p.stderr)


def test_scatter_nd_every_dtype():
    rng = np.random.default_rng(14)
    with Folder() as f:
        for n, dtype in enumerate(NUMERIC_DTYPES + ["S3", "U2"]):
            shape = (4, 3)
            depth = 1 + n % 2
            indices = random_indices(rng, INDEX_DTYPES[n % 3], (6, depth), shape[:depth])
            updates = random_array(rng, dtype, (6,) + shape[depth:])
            run("scatter_nd", f.save("i.npy", indices), f.save("u.npy", updates),
                "--shape", "4,3", "-o", f.path("out.npy"))
            got = f.load("out.npy")
            want = ref_scatter_nd(indices, updates, shape)
            check_same(got, want, f"scatter_nd {dtype}", dtype=np.dtype(dtype).kind not in "SU")
            check(got.dtype.kind == np.dtype(dtype).kind, f"{dtype}: kind {got.dtype}")


def test_scatter_nd_shapes_and_errors():
    with Folder() as f:
        i = f.save("i.npy", np.array([[1], [1]]))
        u = f.save("u.npy", np.array([2.5, 4.0]))
        out = f.path("out.npy")
        run("scatter_nd", i, u, "--shape", "3", "-o", out)
        check_same(f.load("out.npy"), np.array([0, 6.5, 0]), "duplicates add")
        os.remove(out)
        run("scatter_nd", i, u, "--shape", "1", "-o", out, expect=1)  # index 1 out of [0, 1)
        run("scatter_nd", i, u, "--shape", "3,2", "-o", out, expect=1)  # updates shape wrong
        run("scatter_nd", i, u, "--shape", "-3", "-o", out, expect=1)  # negative dimension
        run("scatter_nd", i, u, "--shape", "3,x", "-o", out, expect=2)
        run("scatter_nd", i, u, "--shape", "3,,2", "-o", out, expect=2)
        run("scatter_nd", i, u, "-o", out, expect=2)
        check(not os.path.exists(out), "a failed scatter_nd wrote its output")


def test_empty_output_rule():
    """TensorFlow's rule when the output has no elements: an error if indices or updates has
    elements; with both empty the result is the empty output. Every variant, zeros in front,
    in the middle and at the end of the output shape, index depth 0 to the rank."""
    with Folder() as f:
        for shape in [(0, 3, 2), (3, 0, 2), (3, 2, 0)]:
            for depth in range(len(shape) + 1):
                for lead in [(), (2,), (0,), (2, 0)]:
                    indices = np.zeros(lead + (depth,), np.int64)
                    refused = indices.size > 0 or np.prod(lead + shape[depth:]) > 0
                    for dtype in ["float32", "S3", "U2"]:
                        updates = np.zeros(lead + shape[depth:], dtype)
                        tensor = np.zeros(shape, dtype)
                        ops = OPS if dtype == "float32" else ["update"]
                        what = f"output {shape}, indices {indices.shape}, {dtype}"
                        for op in ops:
                            out = f.path("out.npy")
                            p = tensor_scatter(f, op, tensor, indices, updates,
                                               expect=1 if refused else 0)
                            if refused:
                                check(error_of(p) == f"tensor_scatter_nd_{op}: indices has "
                                      f"{int(np.prod(lead))} index rows but tensor of shape "
                                      f"[{', '.join(map(str, shape))}] has no elements",
                                      f"{op}, {what}: {p.stderr!r}")
                                check(not os.path.exists(out), f"{op}, {what}: wrote an output")
                            else:
                                check(p.shape == shape and p.dtype.kind == np.dtype(dtype).kind,
                                      f"{op}, {what}: got {p.shape} {p.dtype}")
                                os.remove(out)
                        p = run("scatter_nd", f.save("i.npy", indices), f.save("u.npy", updates),
                                "--shape", ",".join(map(str, shape)), "-o", f.path("out.npy"),
                                expect=1 if refused else 0)
                        if refused:
                            check("has no elements" in error_of(p), f"scatter_nd, {what}")
                            check(not os.path.exists(f.path("out.npy")), f"scatter_nd, {what}")
                        else:
                            got = f.load("out.npy")
                            check(got.shape == shape and got.dtype.kind == np.dtype(dtype).kind,
                                  f"scatter_nd, {what}: got {got.shape} {got.dtype}")
                            os.remove(f.path("out.npy"))


main(globals())
