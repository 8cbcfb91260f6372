"""ndx op GatherV2, OneHot, Unique, UniqueWithCounts, UniqueV2 and BooleanMask on NumPy files,
against NumPy references (np.take, rows of np.eye, np.unique in order of first occurrence,
boolean indexing); a refused input leaves the output file untouched."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import (ALL_DTYPES, Folder, check, check_same, error_of, main,  # noqa: E402
                     random_array, run)


def test_gather_v2_every_dtype_matches_np_take():
    rng = np.random.default_rng(9)
    with Folder() as f:
        for dtype in ALL_DTYPES:
            params = random_array(rng, dtype, (3, 4, 2))
            indices = rng.integers(0, 4, (2, 3)).astype(np.int32)
            p, i = f.save("p.npy", params), f.save("i.npy", indices)
            for axis in (1, -2):
                a = f.save("a.npy", np.array(axis, np.int64))
                run("op", "GatherV2", p, i, a, "-o", f.path("g.npy"))
                check_same(f.load("g.npy"), np.take(params, indices, axis=1),
                           f"GatherV2 {dtype} axis {axis}")
        # batch_dims=1: each batch row gathers with its own indices
        params = rng.standard_normal((2, 5)).astype(np.float32)
        indices = np.array([[4, 0], [1, 1]], np.int64)
        p, i = f.save("p.npy", params), f.save("i.npy", indices)
        a = f.save("a.npy", np.array(1, np.int32))
        run("op", "GatherV2", p, i, a, "batch_dims=1", "-o", f.path("b.npy"))
        check_same(f.load("b.npy"), np.stack([params[0, [4, 0]], params[1, [1, 1]]]), "batch")


def test_one_hot_unique_and_boolean_mask_match_numpy():
    with Folder() as f:
        idx = np.array([[0, 2], [-1, 1]], np.int32)
        i = f.save("i.npy", idx)
        d = f.save("d.npy", np.array(3, np.int32))
        on, off = f.save("on.npy", np.array(5.0)), f.save("off.npy", np.array(0.0))
        run("op", "OneHot", i, d, on, off, "axis=1", "-o", f.path("oh.npy"))
        want = np.vstack([np.eye(3) * 5, np.zeros((1, 3))])[np.where(idx < 0, 3, idx)]
        check_same(f.load("oh.npy"), np.moveaxis(want, -1, 1), "OneHot")
        x = np.array([4, 1, 4, 4, 2, 1], np.int64)
        xf = f.save("x.npy", x)
        run("op", "UniqueWithCounts", xf, "out_idx=int64", "-o", f.path("u"))
        check_same(f.load("u.0.npy"), np.array([4, 1, 2], np.int64), "y")
        check_same(f.load("u.1.npy"), np.array([0, 1, 0, 0, 2, 1], np.int64), "idx")
        check_same(f.load("u.2.npy"), np.array([3, 2, 1], np.int64), "count")
        rows = np.array([[1, 2], [3, 4], [1, 2]], np.int32)
        r, ax = f.save("r.npy", rows), f.save("ax.npy", np.array([0], np.int32))
        run("op", "UniqueV2", r, ax, "-o", f.path("v"))
        check_same(f.load("v.0.npy"), rows[:2], "UniqueV2 y")
        check_same(f.load("v.1.npy"), np.array([0, 1, 0], np.int32), "UniqueV2 idx")
        run("op", "UniqueWithCountsV2", r, ax, "out_idx=int64", "-o", f.path("w"))
        check_same(f.load("w.0.npy"), rows[:2], "UniqueWithCountsV2 y")
        check_same(f.load("w.1.npy"), np.array([0, 1, 0], np.int64), "UniqueWithCountsV2 idx")
        check_same(f.load("w.2.npy"), np.array([2, 1], np.int64), "UniqueWithCountsV2 count")
        t = np.arange(12.0).reshape(2, 3, 2)
        m = np.array([True, False, True])
        run("op", "BooleanMask", f.save("t.npy", t), f.save("m.npy", m), "axis=1", "-o",
            f.path("bm.npy"))
        check_same(f.load("bm.npy"), t[:, m], "BooleanMask")


def test_unique_and_embedding_bag_match_numpy():
    """Unique, and EmbeddingBag (ndx's kind under nn.embedding_lookup_sparse): bags of ids by
    sorted bag ids, each combined by a loop."""
    with Folder() as f:
        x = np.array([b"b", b"a", b"b", b"c"])
        run("op", "Unique", f.save("x.npy", x), "-o", f.path("u"))
        check_same(f.load("u.0.npy"), np.array([b"b", b"a", b"c"]), "Unique y")
        check_same(f.load("u.1.npy"), np.array([0, 1, 0, 2], np.int32), "Unique idx")
        params = np.arange(12.0).reshape(4, 3)
        ids, bags = np.array([3, 0, 1, 1], np.int64), np.array([0, 0, 2, 2], np.int64)
        weights = np.array([0.5, 2.0, 1.0, 3.0])
        inputs = [f.save("p.npy", params), f.save("i.npy", ids), f.save("b.npy", bags),
                  f.save("w.npy", weights), f.save("m.npy", np.array(-1.0)),
                  f.save("n.npy", np.array(-1, np.int64))]
        for code, scale in ((0, lambda w: 1.0), (4, np.sum),
                            (5, lambda w: np.sqrt(np.sum(w * w)))):
            want = np.zeros((3, 3))
            for b in (0, 2):
                sel = bags == b
                want[b] = (weights[sel, None] * params[ids[sel]]).sum(0) / scale(weights[sel])
            run("op", "EmbeddingBag", *inputs, f"combiner={code}", "-o", f.path("e.npy"))
            check(np.allclose(f.load("e.npy"), want, rtol=1e-12), f"EmbeddingBag {code}")


def test_refusals_leave_the_output_untouched():
    with Folder() as f:
        p = f.save("p.npy", np.zeros((2, 3), np.float32))
        i = f.save("i.npy", np.array([0, 3], np.int32))
        a = f.save("a.npy", np.array(1, np.int32))
        out = f.save("out.npy", np.ones(1))
        before = open(out, "rb").read()
        proc = run("op", "GatherV2", p, i, a, "-o", out, expect=1)
        check("indices[1] = 3 is not in [0, 3)" in error_of(proc), error_of(proc))
        d = f.save("d.npy", np.array(-2, np.int32))
        proc = run("op", "OneHot", i, d, a, a, "-o", out, expect=1)
        check("depth must be non-negative" in error_of(proc), error_of(proc))
        check(open(out, "rb").read() == before, "a refused op changed its output")


main(globals())
