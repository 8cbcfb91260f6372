"""ndx op TYPE: any kind of node run on NumPy files, against NumPy references and, byte for
byte, against the dedicated commands (gather_nd, dynamic_partition, sparse_concat, ...);
attributes parsed as the kind's registry describes them; refusals leave outputs untouched."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import (ALL_DTYPES, INDEX_DTYPES, NUMERIC_DTYPES, Folder, check, check_same,  # noqa: E402
                     error_of, main, random_array, random_indices, ref_dynamic_partition,
                     ref_gather_nd, ref_sparse_concat_dense, ref_tensor_scatter, run, to_dense)


def read_bytes(path):
    with open(path, "rb") as fh:
        return fh.read()


def same_file(a, b, what):
    check(read_bytes(a) == read_bytes(b), f"{what}: {a} and {b} differ")


def test_gather_nd_every_dtype_matches_numpy_and_gather_nd():
    rng = np.random.default_rng(5)
    with Folder() as f:
        for n, dtype in enumerate(ALL_DTYPES):
            params = random_array(rng, dtype, (4, 3, 2))
            indices = random_indices(rng, INDEX_DTYPES[n % 3], (5, 2), [4, 3])
            p, i = f.save("p.npy", params), f.save("i.npy", indices)
            run("op", "GatherNd", p, i, "-o", f.path("op.npy"))
            run("gather_nd", p, i, "-o", f.path("cmd.npy"))
            check_same(f.load("op.npy"), ref_gather_nd(params, indices), f"GatherNd {dtype}")
            same_file(f.path("op.npy"), f.path("cmd.npy"), f"GatherNd {dtype}")


def test_gather_nd_attributes_and_policy_alias():
    rng = np.random.default_rng(6)
    with Folder() as f:
        params = random_array(rng, "float32", (2, 3, 4))
        indices = np.array([[[1], [2]], [[0], [9]]], np.int64)  # [1][1] is out of range
        p, i = f.save("p.npy", params), f.save("i.npy", indices)
        for word in ["zero", "ignore"]:
            run("op", "GatherNd", p, i, "batch_dims=1", f"bad_indices={word}", "-o",
                f.path(f"op_{word}.npy"))
            run("gather_nd", p, i, "--batch-dims", 1, "--bad-indices", word, "-o",
                f.path(f"cmd_{word}.npy"))
            same_file(f.path(f"op_{word}.npy"), f.path(f"cmd_{word}.npy"), f"bad_indices={word}")
            check_same(f.load(f"op_{word}.npy"),
                       ref_gather_nd(params, indices, batch_dims=1, zero_bad=True), word)
        # error (the default) fails with the op's message, and the file stays as it was
        before = read_bytes(f.path("op_zero.npy"))
        p_err = run("op", "GatherNd", p, i, "batch_dims=1", "-o", f.path("op_zero.npy"),
                    expect=1)
        check("gather_nd" in error_of(p_err) and "out of range" in error_of(p_err),
              error_of(p_err))
        check(read_bytes(f.path("op_zero.npy")) == before, "a failed op changed its output")
        # skip is the scatters' word, not GatherNd's
        p_err = run("op", "GatherNd", p, i, "bad_indices=skip", "-o", f.path("x.npy"), expect=2)
        check("'zero'" in error_of(p_err) and "skip" in error_of(p_err), error_of(p_err))


def test_add_matches_numpy_with_broadcasting():
    rng = np.random.default_rng(7)
    with Folder() as f:
        for dtype in ["int8", "int32", "int64", "uint16", "float16", "float32", "float64",
                      "complex64"]:
            x = random_array(rng, dtype, (3, 1, 4))
            y = random_array(rng, dtype, (2, 1))
            run("op", "AddV2", f.save("x.npy", x), f.save("y.npy", y), "-o", f.path("s.npy"))
            check_same(f.load("s.npy"), (x + y).astype(dtype), f"AddV2 {dtype}")


def test_tensor_scatter_skip_matches_dedicated_command():
    rng = np.random.default_rng(8)
    with Folder() as f:
        tensor = random_array(rng, "int32", (5, 2))
        indices = np.array([[1], [7], [3]], np.int32)
        updates = random_array(rng, "int32", (3, 2))
        t, i, u = f.save("t.npy", tensor), f.save("i.npy", indices), f.save("u.npy", updates)
        run("op", "TensorScatterAdd", t, i, u, "bad_indices=skip", "-o", f.path("op.npy"))
        run("tensor_scatter_nd_add", t, i, u, "--bad-indices", "skip", "-o", f.path("cmd.npy"))
        same_file(f.path("op.npy"), f.path("cmd.npy"), "TensorScatterAdd")
        check_same(f.load("op.npy"), ref_tensor_scatter("add", tensor, indices, updates,
                                                        skip_bad=True), "TensorScatterAdd")


def test_dynamic_partition_several_outputs():
    rng = np.random.default_rng(9)
    with Folder() as f:
        for dtype in ["float64", "int16", "S4", "U3"]:
            data = random_array(rng, dtype, (7, 2))
            parts = random_indices(rng, "int32", (7,), 3)
            d, p = f.save("d.npy", data), f.save("p.npy", parts)
            run("op", "DynamicPartition", d, p, "num_partitions=3", "-o", f.path("op"))
            run("dynamic_partition", d, p, "--num-partitions", 3, "-o", f.path("cmd"))
            want = ref_dynamic_partition(data, parts, 3)
            for k in range(3):
                check_same(f.load(f"op.{k}.npy"), want[k], f"partition {dtype} {k}")
                same_file(f.path(f"op.{k}.npy"), f.path(f"cmd.{k}.npy"), f"partition {k}")
        # an id out of range: the op's message, and no part file changes
        before = [read_bytes(f.path(f"op.{k}.npy")) for k in range(3)]
        bad = f.save("bad.npy", np.array([0, 1, 3, 0, 0, 1, 2], np.int32))
        p = run("op", "DynamicPartition", d, bad, "num_partitions=3", "-o", f.path("op"),
                expect=1)
        check("dynamic_partition" in error_of(p), error_of(p))
        check([read_bytes(f.path(f"op.{k}.npy")) for k in range(3)] == before,
              "a failed DynamicPartition changed a part file")


def test_more_outputs_than_the_soft_limit_on_open_files():
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 400:
        return  # no room above the soft limit to test

    def low_soft_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))

    with Folder() as f:
        data = np.arange(200, dtype=np.int64)
        parts = (np.arange(200) % 150).astype(np.int32)
        run("op", "DynamicPartition", f.save("d.npy", data), f.save("p.npy", parts),
            "num_partitions=150", "-o", f.path("part"), preexec_fn=low_soft_limit)
        want = ref_dynamic_partition(data, parts, 150)
        for k in (0, 49, 149):
            check_same(f.load(f"part.{k}.npy"), want[k], f"part {k}")


def test_sparse_concat_from_sparse_files():
    with Folder() as f:
        a = (np.array([[0, 2], [1, 0], [1, 1]]), np.array([1.5, 2.5, 3.5]), np.array([2, 3]))
        b = (np.array([[0, 1], [0, 2]]), np.array([4.5, 5.5]), np.array([2, 4]))
        pa = f.savez("a.npz", indices=a[0], values=a[1], dense_shape=a[2])
        pb = f.savez("b.npz", indices=b[0], values=b[1], dense_shape=b[2])
        run("op", "SparseConcat", pa, pb, "axis=1", "-o", f.path("op.npz"))
        run("sparse_concat", "--axis", 1, "-o", f.path("cmd.npz"), pa, pb)
        same_file(f.path("op.npz"), f.path("cmd.npz"), "SparseConcat")
        got = np.load(f.path("op.npz"))
        check_same(to_dense(got["indices"], got["values"], got["dense_shape"]),
                   ref_sparse_concat_dense([a, b], 1, False), "SparseConcat dense")
        # expand_nonconcat_dim=true along axis 0 (the shapes differ in dim 1)
        run("op", "SparseConcat", pa, pb, "axis=0", "expand_nonconcat_dim=true", "-o",
            f.path("op0.npz"))
        run("sparse_concat", "--axis", 0, "--expand-nonconcat-dim", "-o", f.path("cmd0.npz"),
            pa, pb)
        same_file(f.path("op0.npz"), f.path("cmd0.npz"), "SparseConcat expand")
        # .npz members as single inputs, in the text form's order
        members = [f"{pa}:indices", f"{pb}:indices", f"{pa}:values", f"{pb}:values",
                   f"{pa}:dense_shape", f"{pb}:dense_shape"]
        run("op", "SparseConcat", *members, "axis=1", "-o", f.path("members.npz"))
        same_file(f.path("members.npz"), f.path("cmd.npz"), "SparseConcat from members")


def test_dynamic_stitch_takes_every_indices_then_every_data():
    rng = np.random.default_rng(10)
    with Folder() as f:
        perm = rng.permutation(6)
        i0, i1 = perm[:2].astype(np.int32), perm[2:].astype(np.int32)
        d0, d1 = random_array(rng, "float32", (2, 3)), random_array(rng, "float32", (4, 3))
        files = [f.save(n, a) for n, a in [("i0.npy", i0), ("i1.npy", i1), ("d0.npy", d0),
                                              ("d1.npy", d1)]]
        run("op", "DynamicStitch", *files, "-o", f.path("op.npy"))
        run("dynamic_stitch", "-o", f.path("cmd.npy"), files[0], files[2], files[1], files[3])
        same_file(f.path("op.npy"), f.path("cmd.npy"), "DynamicStitch")
        want = np.zeros((6, 3), np.float32)
        want[i0], want[i1] = d0, d1
        check_same(f.load("op.npy"), want, "DynamicStitch")


def test_sparse_file_is_three_inputs():
    with Folder() as f:
        indices, values = np.array([[1, 0], [0, 2]]), np.array([7, 8], np.int32)
        sp = f.savez("sp.npz", indices=indices, values=values, dense_shape=np.array([2, 3]))
        run("op", "SparseReorder", sp, "-o", f.path("op.npz"))
        run("sparse_reorder", sp, "-o", f.path("cmd.npz"))
        same_file(f.path("op.npz"), f.path("cmd.npz"), "SparseReorder")
        default = f.save("default.npy", np.array(-1, np.int32))
        run("op", "SparseToDense", sp, default, "-o", f.path("dense.npy"))
        want = np.full((2, 3), -1, np.int32)
        want[1, 0], want[0, 2] = 7, 8
        check_same(f.load("dense.npy"), want, "SparseToDense with a default")
        run("op", "SparseToDense", sp, "-o", f.path("dense0.npy"))
        run("sparse_to_dense", sp, "-o", f.path("cmd0.npy"))
        same_file(f.path("dense0.npy"), f.path("cmd0.npy"), "SparseToDense")
        # SparseConcat takes whole sparse files, not a mixture
        p = run("op", "SparseConcat", sp, default, "axis=0", "-o", f.path("bad.npz"), expect=1)
        check("SparseConcat takes sparse tensors only" in error_of(p), error_of(p))


def test_attribute_kinds_dtype_bool_axes():
    with Folder() as f:
        x = np.arange(6, dtype=np.float32).reshape(1, 6, 1) - 2.5
        px = f.save("x.npy", x)
        run("op", "Cast", px, "to=int64", "-o", f.path("c.npy"))
        check_same(f.load("c.npy"), x.astype(np.int64), "Cast to=int64")
        run("op", "Squeeze", px, "squeeze_dims=0,-1", "-o", f.path("q.npy"))
        check_same(f.load("q.npy"), x.reshape(6), "Squeeze [0, -1]")
        run("op", "Squeeze", px, "squeeze_dims=[2]", "-o", f.path("q2.npy"))
        check_same(f.load("q2.npy"), x.reshape(1, 6), "Squeeze [2]")
        axes = f.save("axes.npy", np.array([1], np.int32))
        run("op", "Sum", px, axes, "keep_dims=true", "-o", f.path("s.npy"))
        check_same(f.load("s.npy"), x.sum(axis=1, keepdims=True), "Sum keep_dims")
        run("op", "Shape", px, "-o", f.path("sh.npy"))
        check_same(f.load("sh.npy"), np.array([1, 6, 1], np.int32), "Shape")
        run("op", "Shape", px, "out_type=int64", "-o", f.path("sh.npy"))
        check_same(f.load("sh.npy"), np.array([1, 6, 1], np.int64), "Shape int64")


def test_refusals_leave_output_untouched():
    with Folder() as f:
        x = f.save("x.npy", np.float32([1, 2, 3]))
        y = f.save("y.npy", np.int32([1, 2, 3]))
        out = f.save("out.npy", np.float64([42]))
        before = read_bytes(out)
        cases = [
            (["AddV2", x], 1, "AddV2 takes 2 inputs, not 1"),
            (["AddV2", x, x, x], 1, "AddV2 takes 2 inputs, not 3"),
            (["AddV2", x, x, "foo=1"], 1, "AddV2 takes no attribute 'foo'"),
            (["AddV2", x, y], 1, "AddV2"),
            (["Cast", x, "to=flot"], 2, "to takes a dtype"),
            (["Cast", x], 1, "Cast needs the attribute to"),
            (["DynamicPartition", x, y, "num_partitions=0"], 1, "num_partitions = 0"),
            (["SparseToDense", x], 1, "SparseToDense takes 3 or 4 inputs, not 1"),
            (["Squeeze", x, "squeeze_dims=a"], 2, "squeeze_dims takes axes"),
            (["Sum", x, y, "keep_dims=yes"], 2, "keep_dims takes true or false"),
            (["GatherNd", x, y, "batch_dims=x"], 2, "batch_dims takes an integer"),
            (["NoSuchOp", x], 2, "unknown op type 'NoSuchOp'"),
            (["Variable", x], 2, "not run by 'ndx op'"),
            (["Const"], 2, "not run by 'ndx op'"),
            (["ResourceScatterNdAdd", x, y, x], 2, "not run by 'ndx op'"),
            (["AddV2", x, f.path("missing.npy")], 1, "missing.npy"),
        ]
        for args, code, needle in cases:
            p = run("op", *args, "-o", out, expect=code)
            check(needle in error_of(p).splitlines()[0], f"{args}: {error_of(p)!r} lacks {needle!r}")
            check(read_bytes(out) == before, f"{args}: the output changed")
        check(f.listing() == ["out.npy", "x.npy", "y.npy"], f"files left: {f.listing()}")
        run("op", "AddV2", x, x, expect=2)  # no -o


def test_list_names_every_runnable_type_with_its_attributes():
    p = run("op", "--list")
    lines = {line.split()[0]: line for line in p.stdout.splitlines()}
    for t in ["GatherNd", "AddV2", "DynamicPartition", "SparseConcat", "Squeeze", "Cast"]:
        check(t in lines, f"--list lacks {t}")
    check("bad_indices=error|ignore|zero" in lines["GatherNd"], lines["GatherNd"])
    check("bad_indices=error|ignore|skip" in lines["ScatterNd"], lines["ScatterNd"])
    check("num_partitions=INT" in lines["DynamicPartition"], lines["DynamicPartition"])
    for t in ["Const", "Placeholder", "Variable", "ResourceScatterNdAdd"]:
        check(t not in lines, f"--list shows {t}")
    check("ndx op" in run("op", "--help").stdout, "help")
    check(" op " in run("--help").stdout, "the command list lacks op")


main(globals())
