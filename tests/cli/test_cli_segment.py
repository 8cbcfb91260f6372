"""ndx op on the segment reductions (UnsortedSegment*, Segment*, SparseSegment*) on NumPy
files, against NumPy references (np.add.at, np.maximum.at, ...); a refused input leaves the
output file untouched."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Folder, check, check_same, error_of, main, run  # noqa: E402


def test_segment_reductions_match_numpy():
    rng = np.random.default_rng(3)
    with Folder() as f:
        data = rng.standard_normal((6, 3)).astype(np.float32)
        ids = np.array([1, -1, 0, 1, 3, 0], np.int32)
        d, i, n = f.save("d.npy", data), f.save("i.npy", ids), f.save("n.npy", np.array(4))
        keep = ids >= 0
        for kind, ufunc, start in (("UnsortedSegmentSum", np.add, 0),
                                   ("UnsortedSegmentMax", np.maximum, np.finfo(np.float32).min)):
            want = np.full((4, 3), start, np.float32)
            ufunc.at(want, ids[keep], data[keep])
            run("op", kind, d, i, n, "-o", f.path("u.npy"))
            check_same(f.load("u.npy"), want, kind)
        sorted_ids = f.save("s.npy", np.array([0, 0, 1, 1, 1, 3], np.int64))
        want = np.zeros((4, 3), np.float32)
        np.add.at(want, [0, 0, 1, 1, 1, 3], data)
        run("op", "SegmentSum", d, sorted_ids, "-o", f.path("ss.npy"))
        check_same(f.load("ss.npy"), want, "SegmentSum")
        sel, seg = np.array([5, 0, 5], np.int32), np.array([0, 2, 2], np.int32)
        run("op", "SparseSegmentSumWithNumSegments", d, f.save("x.npy", sel),
            f.save("g.npy", seg), n, "-o", f.path("ps.npy"))
        want = np.zeros((4, 3), np.float32)
        np.add.at(want, seg, data[sel])
        check_same(f.load("ps.npy"), want, "SparseSegmentSumWithNumSegments")


def test_refusals_leave_the_output_untouched():
    with Folder() as f:
        d = f.save("d.npy", np.ones((3, 2), np.float32))
        i = f.save("i.npy", np.array([0, 5, 1], np.int32))
        n = f.save("n.npy", np.array(2, np.int32))
        out = f.save("o.npy", np.zeros(1))
        proc = run("op", "UnsortedSegmentSum", d, i, n, "-o", out, expect=1)
        check("unsorted_segment_sum" in error_of(proc), error_of(proc))
        check_same(f.load("o.npy"), np.zeros(1), "untouched")


def test_every_other_segment_kind_matches_numpy():
    """The kinds the test above leaves out, once each: the other unsorted and sorted
    reductions and the sparse ones with and without num_segments, against loops."""
    rng = np.random.default_rng(4)
    with Folder() as f:
        data = (rng.standard_normal((6, 2)) + 2).astype(np.float64)
        ids = np.array([1, -1, 0, 1, 3, 0], np.int32)
        sorted_ids = np.array([0, 0, 1, 1, 1, 3], np.int64)
        d, n = f.save("d.npy", data), f.save("n.npy", np.array(4, np.int32))
        i, s = f.save("i.npy", ids), f.save("s.npy", sorted_ids)
        unsorted = {"Prod": (np.prod, 1.0), "Min": (np.min, np.finfo(np.float64).max),
                    "Mean": (np.mean, 0.0),
                    "SqrtN": (lambda r, axis: r.sum(axis) / np.sqrt(len(r)), 0.0)}
        for kind, (reduce, empty) in unsorted.items():
            want = np.array([reduce(data[ids == k], axis=0) if (ids == k).any() else
                             np.full(2, empty) for k in range(4)])
            run("op", "UnsortedSegment" + kind, d, i, n, "-o", f.path("u.npy"))
            check(np.allclose(f.load("u.npy"), want, rtol=1e-12), "UnsortedSegment" + kind)
        for kind, reduce in (("Prod", np.prod), ("Min", np.min), ("Max", np.max),
                             ("Mean", np.mean)):
            want = np.array([reduce(data[sorted_ids == k], axis=0) if (sorted_ids == k).any()
                             else np.full(2, 1.0 if kind == "Prod" else 0.0) for k in range(4)])
            run("op", "Segment" + kind, d, s, "-o", f.path("so.npy"))
            check(np.allclose(f.load("so.npy"), want, rtol=1e-12), "Segment" + kind)
        sel, seg = np.array([5, 0, 5, 2], np.int64), np.array([0, 2, 2, 2], np.int32)
        x, g = f.save("x.npy", sel), f.save("g.npy", seg)
        for kind, scale in (("Sum", lambda c: 1.0), ("Mean", lambda c: c),
                            ("SqrtN", lambda c: np.sqrt(c))):
            for rows, extra in ((3, []), (4, [n])):
                want = np.zeros((rows, 2))
                for k in range(rows):
                    if (seg == k).any():
                        want[k] = data[sel[seg == k]].sum(0) / scale((seg == k).sum())
                name = "SparseSegment" + kind + ("WithNumSegments" if extra else "")
                run("op", name, d, x, g, *extra, "-o", f.path("p.npy"))
                check(np.allclose(f.load("p.npy"), want, rtol=1e-12), name)


main(globals())
