"""compare.py — ndx against its peers on the speed workloads, in one run (bench/compare sets up
everything and calls this; run that script, not this file).

For every workload and thread count (1 and every core) it times, back to back on the same inputs:
ndx (`ndx bench`, into a reused output and into a fresh one it allocates itself), NumPy, PyTorch,
ONNX Runtime (bench/ort_peer.js), the naive OpenMP loop of bench/baseline.c and memcpy of the same
traffic. Every contender gets one warm-up and R timed runs into outputs allocated beforehand, and
the median counts. Each result is checked against a plainly computed reference
(bench/workloads.py): ndx through the digest of its output, the peers and the naive loop array by
array. Incorrect results are marked and never count. Ratios are time(contender) / time(ndx): above
1, ndx is faster. Besides the table per thread count it prints each contender at its best thread
count against ndx at its best, with the targets the run misses, writes both to a markdown report
and draws them as a chart (matplotlib) beside it.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W  # noqa: E402

SEED = 42
EXACT_TOLERANCE = dict(rtol=1e-5, atol=1e-5)  # scatter-add sums in another order: rounding only


def median_time(run, repeat):
    run()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def matches(name, got, ref):
    """(correct, note) for a peer's output against the reference."""
    got, ref = as_tuple(got), as_tuple(ref)
    if len(got) != len(ref):
        return False, "wrong number of outputs"
    for g, r in zip(got, ref):
        g = np.asarray(g)
        if g.shape != r.shape:
            return False, f"shape {list(g.shape)} instead of {list(r.shape)}"
        if name in ("S1", "S2") and r.dtype == np.float32:
            bad = ~np.isclose(g, r, **EXACT_TOLERANCE)
            if bad.any():
                worst = float(np.max(np.abs(g[bad].astype(np.float64) - r[bad])))
                return False, f"{int(bad.sum())} sums differ (up to {worst:.3g})"
        elif not np.array_equal(g, r):
            return False, f"{int(np.sum(g != r))} elements differ"
    return True, ""


# ---- NumPy and PyTorch: each returns (run, result) with outputs allocated here, untimed ----

def numpy_peer(name, w):
    if name == "G1":
        p, i = w["params"], w["indices"].reshape(-1)
        out = np.zeros((i.size, p.shape[1]), np.float32)
        return (lambda: np.take(p, i, axis=0, out=out)), (lambda: out)
    if name == "G2":
        p, i = w["params"], w["indices"]
        flat_p, cols = p.reshape(-1), p.shape[1]
        flat = np.zeros(i.shape[0], np.int64)
        out = np.zeros(i.shape[0], np.float32)

        def run():
            np.multiply(i[:, 0], cols, out=flat)
            np.add(flat, i[:, 1], out=flat)
            np.take(flat_p, flat, out=out)
        return run, (lambda: out)
    if name == "G3":
        p, i = w["params"], w["indices"]
        b, m, width = p.shape
        base = (np.arange(b, dtype=np.int64) * m)[:, None]
        flat = np.zeros((b, i.shape[1]), np.int64)
        out = np.zeros((b, i.shape[1], width), np.float32)
        rows, out_rows = p.reshape(-1, width), out.reshape(-1, width)

        def run():
            np.add(i[..., 0], base, out=flat)
            np.take(rows, flat.reshape(-1), axis=0, out=out_rows)
        return run, (lambda: out)
    if name in ("S1", "S2"):
        t, i, u = w["tensor"], w["indices"], w["updates"]
        out = np.zeros_like(t)
        if name == "S1":
            rows = i.reshape(-1)

            def run():
                np.copyto(out, t)
                np.add.at(out, rows, u)
        else:
            flat = np.zeros(i.shape[0], np.int64)
            cols = t.shape[1]

            def run():
                np.copyto(out, t)
                np.multiply(i[:, 0], cols, out=flat)
                np.add(flat, i[:, 1], out=flat)
                np.add.at(out.reshape(-1), flat, u)
        return run, (lambda: out)
    if name == "D1":
        out = np.zeros_like(w["source"])

        def run():
            for idx, data in zip(w["indices"], w["data"]):
                out[idx] = data
        return run, (lambda: out)
    if name == "P1":
        data, parts = w["data"], w["partitions"]
        counts = np.bincount(parts, minlength=W.PARTS)
        outs = [np.zeros((c, data.shape[1]), np.float32) for c in counts]
        mask = np.zeros(parts.shape, bool)

        def run():
            for p in range(W.PARTS):
                np.equal(parts, p, out=mask)
                np.compress(mask, data, axis=0, out=outs[p])
        return run, (lambda: tuple(outs))
    return sparse_peer(name, w, np_mode=True)


def python_call(name, w, threads):
    """ndx through its Python module: the scatters into a reused out= (as `ndx` is timed), the
    others into the fresh arrays the module returns (as `ndx fresh`)."""
    import ndx
    last = {}
    if name in ("G1", "G2", "G3"):
        def run():
            last["r"] = ndx.gather_nd(w["params"], w["indices"], batch_dims=w["batch_dims"],
                                      threads=threads)
    elif name in ("S1", "S2"):
        out = np.zeros_like(w["tensor"])
        last["r"] = out

        def run():
            ndx.tensor_scatter_nd_add(w["tensor"], w["indices"], w["updates"], out=out,
                                      threads=threads)
    elif name == "D1":
        def run():
            last["r"] = ndx.dynamic_stitch(w["indices"], w["data"], threads=threads)
    elif name == "P1":
        def run():
            last["r"] = tuple(ndx.dynamic_partition(w["data"], w["partitions"], W.PARTS,
                                                    threads=threads))
    else:
        inputs = [ndx.SparseTensor(*sp) for sp in w["inputs"]]

        def run():
            r = ndx.sparse.concat(w["axis"], inputs, threads=threads)
            last["r"] = (r.indices, r.values, r.dense_shape)
    return run, (lambda: last["r"])


def sparse_peer(name, w, np_mode):
    """C0: offset + concatenate; C1: the same, then a stable argsort of the rows."""
    ins, axis = w["inputs"], w["axis"]
    n = sum(sp[0].shape[0] for sp in ins)
    offsets, at = [], 0
    for sp in ins:
        off = np.zeros(2, np.int64)
        off[axis] = at
        offsets.append(off)
        at += int(sp[2][axis])
    shape = ins[0][2].copy()
    shape[axis] = at
    if np_mode:
        oi, ov = np.zeros((n, 2), np.int64), np.zeros(n, np.float32)
        ti, tv = (np.zeros((n, 2), np.int64), np.zeros(n, np.float32)) if axis else (oi, ov)
        inds, vals = [sp[0] for sp in ins], [sp[1] for sp in ins]

        def run():
            s = 0
            for ind, off in zip(inds, offsets):
                np.add(ind, off, out=ti[s:s + ind.shape[0]])
                s += ind.shape[0]
            np.concatenate(vals, out=tv)
            if axis:
                order = np.argsort(ti[:, 0], kind="stable")
                np.take(ti, order, axis=0, out=oi)
                np.take(tv, order, out=ov)
        return run, (lambda: (oi, ov, shape))
    import torch
    oi, ov = torch.zeros((n, 2), dtype=torch.int64), torch.zeros(n, dtype=torch.float32)
    ti, tv = (torch.zeros((n, 2), dtype=torch.int64), torch.zeros(n)) if axis else (oi, ov)
    inds = [torch.from_numpy(sp[0]) for sp in ins]
    vals = [torch.from_numpy(sp[1]) for sp in ins]
    toffs = [torch.from_numpy(o) for o in offsets]

    def run():
        s = 0
        for ind, off in zip(inds, toffs):
            torch.add(ind, off, out=ti[s:s + ind.shape[0]])
            s += ind.shape[0]
        torch.cat(vals, out=tv)
        if axis:
            _, order = torch.sort(ti[:, 0], stable=True)
            torch.index_select(ti, 0, order, out=oi)
            torch.index_select(tv, 0, order, out=ov)
    return run, (lambda: (oi.numpy(), ov.numpy(), shape))


def torch_peer(name, w):
    import torch
    T = torch.from_numpy
    if name == "G1":
        p, i = T(w["params"]), T(w["indices"]).view(-1)
        out = torch.zeros((i.numel(), p.shape[1]))
        return (lambda: torch.index_select(p, 0, i, out=out)), (lambda: out.numpy())
    if name in ("G2", "S2"):
        i = T(w["indices"])
        src = T(w["params"] if name == "G2" else w["tensor"])
        cols = src.shape[1]
        flat = torch.zeros(i.shape[0], dtype=torch.int64)

        def flatten():
            torch.mul(i[:, 0], cols, out=flat)
            flat.add_(i[:, 1])
        if name == "G2":
            out = torch.zeros(i.shape[0])

            def run():
                flatten()
                torch.index_select(src.view(-1), 0, flat, out=out)
        else:
            out, u = torch.zeros_like(src), T(w["updates"])

            def run():
                out.copy_(src)
                flatten()
                out.view(-1).index_add_(0, flat, u)
        return run, (lambda: out.numpy())
    if name == "G3":
        p, i = T(w["params"]), T(w["indices"])
        b, m, width = p.shape
        base = (torch.arange(b, dtype=torch.int64) * m)[:, None]
        flat = torch.zeros((b, i.shape[1]), dtype=torch.int64)
        out = torch.zeros((b, i.shape[1], width))

        def run():
            torch.add(i[..., 0], base, out=flat)
            torch.index_select(p.view(-1, width), 0, flat.view(-1), out=out.view(-1, width))
        return run, (lambda: out.numpy())
    if name == "S1":
        t, i, u = T(w["tensor"]), T(w["indices"]).view(-1), T(w["updates"])
        out = torch.zeros_like(t)

        def run():
            out.copy_(t)
            out.index_add_(0, i, u)
        return run, (lambda: out.numpy())
    if name == "D1":
        out = torch.zeros(w["source"].shape)
        # index_copy_ takes int64 indices only: converted here, untimed.
        idx = [T(i.astype(np.int64)) for i in w["indices"]]
        data = [T(d) for d in w["data"]]

        def run():
            for i, d in zip(idx, data):
                out.index_copy_(0, i, d)
        return run, (lambda: out.numpy())
    if name == "P1":
        data, parts = T(w["data"]), T(w["partitions"])
        counts = np.bincount(w["partitions"], minlength=W.PARTS)
        outs = [torch.zeros((int(c), data.shape[1])) for c in counts]
        mask = torch.zeros(parts.shape, dtype=torch.bool)

        def run():
            for p in range(W.PARTS):
                torch.eq(parts, p, out=mask)
                torch.index_select(data, 0, torch.nonzero(mask).view(-1), out=outs[p])
        return run, (lambda: tuple(o.numpy() for o in outs))
    return sparse_peer(name, w, np_mode=False)


# ---- input files, written once per workload for ONNX Runtime and the naive loops ----

class InputFiles:
    """Each input array of one workload as a raw little-endian file in the work directory."""

    def __init__(self, work, name):
        self.work, self.name, self.paths = work, name, {}

    def path(self, key, arr):
        if key not in self.paths:
            path = os.path.join(self.work, f"{self.name}-{key}.bin")
            np.ascontiguousarray(arr).tofile(path)
            self.paths[key] = path
        return self.paths[key]

    def remove(self):
        for path in self.paths.values():
            os.remove(path)
        self.paths.clear()


# ---- ONNX Runtime, through node ----

ORT_OPS = {"G1", "G2", "G3", "S1", "S2"}


def ort_job(name, w, files):
    """The job (minus threads) for ort_peer.js."""
    def tensor(tname, arr, key):
        return dict(name=tname, type=str(arr.dtype), shape=list(arr.shape),
                    file=files.path(key, arr))
    out_file = os.path.join(files.work, f"{name}-ort-out.bin")
    if name == "G1":
        idx = w["indices"].reshape(-1)  # Gather (axis 0) is ONNX's own embedding lookup
        ins = [tensor("params", w["params"], "params"), tensor("indices", idx, "indices")]
        return dict(op="Gather", attrs={"axis": 0}, inputs=ins,
                    output=dict(name="out", type="float32", shape=[idx.size, 128], file=out_file))
    if name in ("G2", "G3"):
        ref_shape = list(w["indices"].shape[:-1]) + list(
            w["params"].shape[w["batch_dims"] + w["indices"].shape[-1]:])
        ins = [tensor("params", w["params"], "params"), tensor("indices", w["indices"], "indices")]
        return dict(op="GatherND", attrs={"batch_dims": w["batch_dims"]}, inputs=ins,
                    output=dict(name="out", type="float32", shape=ref_shape, file=out_file))
    ins = [tensor("data", w["tensor"], "tensor"), tensor("indices", w["indices"], "indices"),
           tensor("updates", w["updates"], "updates")]
    return dict(op="ScatterND", attrs={"reduction": "add"}, inputs=ins,
                output=dict(name="out", type="float32", shape=list(w["tensor"].shape),
                            file=out_file))


def run_ort(args, job, threads, ref_shape):
    job = dict(job, threads=threads, repeat=args.repeat, opset=18)
    path = job["output"]["file"] + ".job.json"
    with open(path, "w") as f:
        json.dump(job, f)
    env = dict(os.environ, NODE_PATH=args.node_modules)
    proc = subprocess.run(["node", os.path.join(args.here, "ort_peer.js"), path], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else
                           f"exit {proc.returncode}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    got = np.fromfile(job["output"]["file"], dtype=np.float32).reshape(ref_shape)
    note = "" if res["preallocated"] else "output allocated by ORT"
    return res["median_s"], got, note


# ---- ndx and the C baselines, as subprocesses ----

def run_ndx(args, name, threads):
    cmd = [args.ndx, "bench", name, "--threads", str(threads), "--repeat", str(args.repeat),
           "--digest", "--quiet", "--seed", str(SEED)]
    if args.scale != 1.0:
        cmd += ["--scale", repr(args.scale)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip() or f"exit {proc.returncode}")
    line = proc.stdout.strip().splitlines()[-1]
    fields = dict(f.split("=", 1) for f in line.split()[1:])
    return fields


def run_baseline(args, argv):
    proc = subprocess.run([args.baseline] + [str(a) for a in argv], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip() or f"exit {proc.returncode}")
    return dict(f.split("=", 1) for f in proc.stdout.split())


def naive_inputs(name, w):
    """(key, array) for every input, in the order bench/baseline.c's loop for `name` takes them."""
    if name in ("G1", "G2", "G3"):
        return [("params", w["params"]), ("indices", w["indices"])]
    if name in ("S1", "S2"):
        return [("tensor", w["tensor"]), ("indices", w["indices"]), ("updates", w["updates"])]
    if name == "D1":
        return ([(f"indices{m}", i) for m, i in enumerate(w["indices"])]
                + [(f"data{m}", d) for m, d in enumerate(w["data"])])
    if name == "P1":
        return [("data", w["data"]), ("partitions", w["partitions"])]
    return [(f"{part}{m}", arr) for m, sp in enumerate(w["inputs"])
            for part, arr in zip(("indices", "values", "shape"), sp)]


def tensor_line(kind, key, arr_or_ref, path):
    if any(c.isspace() for c in path):
        raise RuntimeError(f"a path with white space cannot go into a baseline job: {path}")
    dims = " ".join(str(d) for d in arr_or_ref.shape)
    return f"{kind} {key} {arr_or_ref.dtype} {path} {dims}".rstrip()


def naive_job(name, w, ref, files):
    """The job text for `baseline naive` (minus threads and repeat) and its output paths, which
    take the reference's shapes: the outputs a caller reuses."""
    refs = as_tuple(ref)
    outs = [os.path.join(files.work, f"{name}-naive-out{k}.bin") for k in range(len(refs))]
    lines = [f"workload {name}"]
    lines += [tensor_line("in", key, arr, files.path(key, arr))
              for key, arr in naive_inputs(name, w)]
    lines += [tensor_line("out", f"out{k}", r, path) for k, (r, path) in enumerate(zip(refs, outs))]
    return lines, outs


def run_naive(args, name, job, threads, ref):
    """(seconds, correct, note) of the naive OpenMP loop, its outputs checked like a peer's."""
    lines, outs = job
    path = outs[0] + ".job"
    with open(path, "w") as f:
        f.write("\n".join(lines + [f"threads {threads}", f"repeat {args.repeat}", ""]))
    fields = run_baseline(args, ["naive", path])
    got = tuple(np.fromfile(p, dtype=r.dtype).reshape(r.shape) for p, r in zip(outs, as_tuple(ref)))
    for p in outs + [path]:
        os.remove(p)
    ok, note = matches(name, got, ref)
    if fields.get("bad_index_caught") != "1":
        ok, note = False, "; ".join(x for x in (note, "did not report a bad index") if x)
    return float(fields["median_s"]), ok, note


# ---- one workload at every thread count ----

def measure(args, name, work, log):
    log(f"{name}: building inputs and the reference")
    w = W.build(name, args.scale, SEED)
    ref = W.reference(name, w)
    ref_digest = W.reference_digest(name, ref)
    files = InputFiles(work, name)
    job = ort_job(name, w, files) if name in ORT_OPS and args.ort else None
    naive = naive_job(name, w, ref, files)
    rows = []
    for threads in args.thread_counts:
        row = dict(workload=name, threads=threads, results={}, notes=[])

        def record(peer, seconds, correct, note=""):
            row["results"][peer] = dict(s=seconds, ok=correct)
            if note:
                row["notes"].append(f"{peer}: {note}")

        log(f"{name} at {threads} thread(s): ndx")
        try:
            f = run_ndx(args, name, threads)
            ok = int(f["digest"], 16) == ref_digest
            record("ndx", float(f["median_s"]), ok,
                   "" if ok else "output differs from the reference")
            record(COLD, float(f["first_touch_s"]), None)  # same op and inputs, not re-checked
            record(FRESH, float(f["fresh_s"]), None)
            row["GBps"] = float(f["GBps"])
            row["peak_rss_mb"] = f["peak_rss_mb"]
        except Exception as e:  # a failing contender is reported, not fatal
            record("ndx", None, False, f"failed: {e}")
        log(f"{name} at {threads} thread(s): {PY}")
        try:
            run, result = python_call(name, w, threads)
            seconds = median_time(run, args.repeat)
            ok, note = matches(name, result(), ref)
            record(PY, seconds, ok, note)
        except Exception as e:
            record(PY, None, False, f"failed: {type(e).__name__}: {e}")
        for peer, make in (("NumPy", numpy_peer), ("PyTorch", torch_peer)):
            log(f"{name} at {threads} thread(s): {peer}")
            try:
                if peer == "PyTorch":
                    import torch
                    torch.set_num_threads(threads)
                run, result = make(name, w)
                seconds = median_time(run, args.repeat)
                ok, note = matches(name, result(), ref)
                record(peer, seconds, ok, note)
            except Exception as e:
                record(peer, None, False, f"failed: {type(e).__name__}: {e}")
        if job:
            log(f"{name} at {threads} thread(s): ONNX Runtime")
            try:
                seconds, got, note = run_ort(args, job, threads, ref.shape)
                ok, why = matches(name, got, ref)
                record("ONNX Runtime", seconds, ok, "; ".join(x for x in (note, why) if x))
            except Exception as e:
                record("ONNX Runtime", None, False, f"failed: {e}")
        log(f"{name} at {threads} thread(s): {NAIVE}")
        try:
            record(NAIVE, *run_naive(args, name, naive, threads, ref))
        except Exception as e:
            record(NAIVE, None, False, f"failed: {e}")
        log(f"{name} at {threads} thread(s): memcpy")
        try:
            half = int(w["bytes"]) // 2  # memcpy reads and writes this many: the same traffic
            f = run_baseline(args, ["memcpy", half, threads, args.repeat])
            record("memcpy", float(f["median_s"]), None)
        except Exception as e:
            record("memcpy", None, None, f"failed: {e}")
        rows.append(row)
    files.remove()
    return rows


# ---- the report ----

PEERS = ["NumPy", "PyTorch", "ONNX Runtime"]
NAIVE = "naive C, OpenMP"
FRESH = "ndx fresh"
COLD = "ndx first touch"
PY = "ndx from Python"
COLUMNS = ["ndx", FRESH, COLD, PY, "NumPy", "PyTorch", "ONNX Runtime", NAIVE, "memcpy"]


def python_over_c(row):
    """The module's time over the C call it makes: reused output for the scatters (out=), fresh
    for the ops whose results the module allocates."""
    c = seconds(row, "ndx") if row["workload"] in ("S1", "S2") else seconds(row, FRESH)
    return ratio(seconds(row, PY), c)
FRESH_TARGET = 1.5  # fresh output within 1.5x of reused output


def seconds(row, who):
    """who's median in this row, or None when it is missing, failed or wrong."""
    res = row["results"].get(who)
    return res["s"] if res and res["s"] and res["ok"] is not False else None


def fmt_ms(res):
    if res is None:
        return "-"
    if res["s"] is None:
        return "failed"
    text = f"{res['s'] * 1e3:.3g}"
    return text + (" ✗" if res["ok"] is False else "")


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def at_threads(best):
    """'<ms> (<T> T)' for a (seconds, threads) pair."""
    return f"{best[0] * 1e3:.3g} ({best[1]} T)" if best else "-"


def table(rows):
    """One line per workload and thread count: every contender's median, and the ratios."""
    head = ["workload", "T"] + [c + " ms" for c in COLUMNS] + [
        "fresh/reused", "first touch/reused", "Python/C", "fastest correct peer", "peer/ndx", "naive/ndx", "memcpy/ndx", "ndx GB/s"]
    lines = []
    for row in rows:
        ndx = seconds(row, "ndx")
        best = min(((seconds(row, p), p) for p in PEERS if seconds(row, p)), default=None)
        cells = [row["workload"], str(row["threads"])]
        cells += [fmt_ms(row["results"].get(c)) for c in COLUMNS]
        cells += [ratio(seconds(row, FRESH), ndx), ratio(seconds(row, COLD), ndx),
                  python_over_c(row),
                  f"{best[1]} {best[0] * 1e3:.3g}" if best else "-",
                  ratio(best[0] if best else None, ndx),
                  ratio(seconds(row, NAIVE), ndx),
                  ratio(seconds(row, "memcpy"), ndx),
                  f"{row['GBps']:.1f}" if row.get("GBps") else "-"]
        lines.append(cells)
    return head, lines


def best_of(rows, who):
    """(seconds, threads) of who's fastest correct median over the thread counts, or None."""
    return min(((seconds(r, who), r["threads"]) for r in rows if seconds(r, who)), default=None)


def workload_summary(rows):
    """Best against best for one workload's rows, and the targets this run misses."""
    ndx, naive, memcpy = (best_of(rows, who) for who in ("ndx", NAIVE, "memcpy"))
    peer = min((best_of(rows, p) + (p,) for p in PEERS if best_of(rows, p)), default=None)
    one = next((seconds(r, "ndx") for r in rows if r["threads"] == 1), None)
    speedup = min(((one / seconds(r, "ndx"), r["threads"]) for r in rows
                   if r["threads"] > 1 and one and seconds(r, "ndx")), default=None)
    fresh = max(((seconds(r, FRESH) / seconds(r, "ndx"), r["threads"]) for r in rows
                 if seconds(r, FRESH) and seconds(r, "ndx")), default=None)
    misses = []
    if not ndx:
        misses.append("ndx failed or wrong")
    if ndx and naive and naive[0] < ndx[0]:
        misses.append("naive loop faster")
    if speedup and speedup[0] < 1:
        misses.append(f"ndx slower at {speedup[1]} T than at 1 T")
    if fresh and fresh[0] > FRESH_TARGET:
        misses.append(f"fresh > {FRESH_TARGET:g}x reused")
    return [rows[0]["workload"], at_threads(ndx), at_threads(naive),
            ratio(naive and naive[0], ndx and ndx[0]),
            f"{peer[2]} {at_threads(peer)}" if peer else "-",
            ratio(peer and peer[0], ndx and ndx[0]),
            at_threads(memcpy), ratio(memcpy and memcpy[0], ndx and ndx[0]),
            f"{speedup[0]:.2f} ({speedup[1]} T)" if speedup else "-",
            f"{fresh[0]:.2f} ({fresh[1]} T)" if fresh else "-",
            ", ".join(misses) or "none"]


def summary(rows):
    """One line per workload: each contender at its best thread count, against ndx at its best."""
    head = ["workload", "ndx best ms", "naive best ms", "naive/ndx", "fastest correct peer, best",
            "peer/ndx", "memcpy best ms", "memcpy/ndx", "ndx speed-up over 1 T",
            "fresh/reused, worst", "targets missed"]
    names = list(dict.fromkeys(r["workload"] for r in rows))
    return head, [workload_summary([r for r in rows if r["workload"] == n]) for n in names]


def render_text(head, lines):
    widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(head)]
    out = ["  ".join(h.rjust(wd) for h, wd in zip(head, widths))]
    out += ["  ".join(c.rjust(wd) for c, wd in zip(l, widths)) for l in lines]
    return "\n".join(out)


def render_markdown(head, lines):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(l) + " |" for l in lines]
    return "\n".join(out)


# ---- the chart ----

CHART_BARS = [FRESH, "NumPy", "PyTorch", "ONNX Runtime", NAIVE, "memcpy"]
CHART_COLORS = {FRESH: "#9ecae1", "NumPy": "#4c72b0", "PyTorch": "#dd8452",
                "ONNX Runtime": "#8172b3", NAIVE: "#c44e52", "memcpy": "#7f7f7f"}


def chart_panel(ax, rows, bars, threads):
    """One thread count: per workload, a bar per contender from 1 to time(X) / time(ndx).
    Returns the ratios drawn."""
    import matplotlib.ticker as ticker
    width = 0.8 / len(bars)
    labels, values = [], [1.0]
    for i, row in enumerate(rows):
        ndx = seconds(row, "ndx")
        labels.append(f"{row['workload']}\nndx {ndx * 1e3:.3g} ms" if ndx else
                      f"{row['workload']}\nndx failed")
        for k, who in enumerate(bars):
            res = row["results"].get(who)
            if not ndx or not res or not res["s"]:
                continue
            value, wrong = res["s"] / ndx, res["ok"] is False
            x = i + (k - (len(bars) - 1) / 2) * width
            values.append(value)
            ax.bar(x, value - 1, width, bottom=1, color=CHART_COLORS[who],
                   hatch="xx" if wrong else None, alpha=0.45 if wrong else 1.0,
                   edgecolor="white", linewidth=0.5)
            ax.text(x, value * (1.08 if value >= 1 else 1 / 1.08),
                    f"{value:.2g}" if value < 10 else f"{value:.0f}", rotation=90, ha="center",
                    va="bottom" if value >= 1 else "top", fontsize=5.5, color="#333333")
    ax.axhline(1, color="black", linewidth=1)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    ax.grid(axis="y", which="major", color="#dddddd")
    ax.set_axisbelow(True)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_xlim(-0.6, len(rows) - 0.4)
    ax.set_title(f"{threads} thread{'s' if threads > 1 else ''}", fontsize=10, loc="left")
    ax.set_ylabel("time / ndx's time")
    return values


def draw_chart(rows, path, caption):
    """The table as a chart: one panel per thread count, log scale, above 1 = ndx faster."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    thread_counts = sorted({r["threads"] for r in rows})
    bars = [b for b in CHART_BARS if any(b in r["results"] and r["results"][b]["s"] for r in rows)]
    height = 1.6 + 3.4 * len(thread_counts)  # inches: the panels, the title, legend and caption
    fig, axes = plt.subplots(len(thread_counts), 1, squeeze=False, sharey=True,
                             figsize=(max(10, 1.25 * len(rows) / len(thread_counts) + 2), height))
    values = [v for ax, threads in zip(axes[:, 0], thread_counts)
              for v in chart_panel(ax, [r for r in rows if r["threads"] == threads], bars, threads)]
    axes[0, 0].set_ylim(min(values) / 4, max(values) * 4)  # shared; room for the labels
    handles = [Patch(color=CHART_COLORS[b], label=b.replace("ndx fresh", "ndx, fresh output"))
               for b in bars]
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="xx", label="wrong result"))
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.3 / height),
               ncol=len(handles), fontsize=8, frameon=False)
    fig.text(0.5, 0.1 / height, caption, ha="center", va="bottom", fontsize=7, color="#555555")
    fig.suptitle("ndx against its peers: time of each / time of ndx (reused output) at the same "
                 "thread count;\nabove 1x ndx is faster, below 1x the other is", fontsize=10)
    fig.tight_layout(rect=(0, 0.75 / height, 1, 1 - 0.1 / height))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def versions(args):
    v = {"numpy": np.__version__}
    try:
        import torch
        v["torch"] = torch.__version__
    except Exception:
        v["torch"] = "missing"
    try:
        with open(os.path.join(args.node_modules, "onnxruntime-node", "package.json")) as f:
            v["onnxruntime-node"] = json.load(f)["version"]
    except Exception:
        v["onnxruntime-node"] = "missing"
    try:
        v["ndx"] = subprocess.run([args.ndx, "--version"], capture_output=True,
                                  text=True).stdout.strip().replace("ndx ", "", 1)
        v["commit"] = subprocess.run(["git", "-C", args.here, "rev-parse", "--short", "HEAD"],
                                     capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", os.path.dirname(args.here), "status", "--porcelain",
                                "--", "src", "include", "tools"], capture_output=True,
                               text=True).stdout
        if dirty.strip():
            v["commit"] += " + uncommitted changes"
    except Exception:
        pass
    return v


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ndx", required=True)
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--node-modules", required=True)
    ap.add_argument("--workloads", default="all", help="comma-separated names, or all")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="shrink every workload (tests)")
    ap.add_argument("--threads", default="", help="comma-separated thread counts (default: 1 "
                    "and every core)")
    ap.add_argument("--no-ort", dest="ort", action="store_false")
    ap.add_argument("--out", default="", help="report file (default bench/results/compare-"
                    "<date>.md)")
    args = ap.parse_args()
    args.here = os.path.dirname(os.path.abspath(__file__))
    args.repeat = max(5, args.repeat)
    names = (W.NAMES if args.workloads == "all"
             else [n.strip().upper() for n in args.workloads.split(",")])
    for n in names:
        if n not in W.NAMES:
            ap.error(f"unknown workload {n}")
    cores = os.cpu_count() or 1
    args.thread_counts = ([int(t) for t in args.threads.split(",")] if args.threads
                          else sorted({1, cores}))

    def log(msg):
        print(f"compare: {msg}", file=sys.stderr, flush=True)

    started = datetime.datetime.now()
    load_before = os.getloadavg()
    work = tempfile.mkdtemp(prefix="ndx-compare-")
    rows = []
    try:
        for name in names:
            rows += measure(args, name, work, log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    notes = [f"- {row['workload']} T={row['threads']}: {n}" for row in rows for n in row["notes"]]
    if not args.ort:
        notes.insert(0, "- ONNX Runtime left out of this run (--no-ort, or npm could not install "
                        "onnxruntime-node)")
    v = versions(args)
    about = (f"{started:%Y-%m-%d %H:%M}, {cpu_name()}, {cores} cores; load average "
             f"{load_before[0]:.2f} before, {load_after[0]:.2f} after; "
             + ", ".join(f"{k} {val}" for k, val in v.items())
             + f"; repeat {args.repeat}, scale {args.scale:g}")
    tables = [table(rows), summary(rows)]
    print(render_text(*tables[0]))
    print("\nBest against best (each at its fastest thread count):\n" + render_text(*tables[1]))
    if notes:
        print("\n".join(["", "Notes:"] + notes))
    path = args.out or os.path.join(args.here, "results", f"compare-{started:%Y%m%d-%H%M%S}.md")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    caption = (f"{started:%Y-%m-%d %H:%M}, {cpu_name()}, {cores} cores, load {load_before[0]:.2f}"
               f" to {load_after[0]:.2f}; ndx {v.get('ndx', '?')} ({v.get('commit', '?')}); "
               f"repeat {args.repeat}, scale {args.scale:g}")
    chart = publish_chart(args, rows, path, caption, full=args.scale == 1.0 and names == W.NAMES)
    with open(path, "w") as f:
        f.write(report(about, tables, notes, chart, args.scale))
    print(f"\n{about}\nreport written to {path}")
    wrong = [r for r in rows if r["results"].get("ndx", {}).get("ok") is not True]
    return 1 if wrong else 0


LEGEND = (
    "Medians in milliseconds of R runs after one warm-up, outputs allocated and touched "
    "beforehand (reused output); `ndx fresh` is ndx into an output it allocates itself (median "
    "of 3 runs; the blocks come from those ndx kept when the previous outputs were freed), and "
    "fresh/reused is its time over ndx's; `ndx first touch` is one such run into new pages "
    "(after ndx_release_memory: page faults and the kernel's zeroing included). `ndx from "
    "Python` is the same op through `import ndx` (S1/S2 into a reused out=, the rest into the "
    "arrays the module returns), and Python/C its time over the C figure it matches (reused for "
    "S1/S2, fresh for the rest). ✗ marks a result "
    "that differs from the reference (it never counts as the fastest peer or the naive loop's "
    "best). Ratios are time(X) / time(ndx): above 1, ndx is faster. memcpy copies half the "
    "workload's bytes (the same read + write traffic): where ndx is near it, the memory system "
    "is the limit. `naive C, OpenMP` is bench/baseline.c: the loop a competent user writes in "
    "ten minutes, every index checked before use, each output row owned by one thread "
    "(scatter-add and stitch: every thread reads all indices in order and applies those in its "
    "rows, so duplicates add in index order and the later stitch index wins; partition: each "
    "thread owns whole partitions and appends in input order; sparse_concat: bounds and "
    "canonical order checked first, then each thread merges its block of output rows), "
    "checked against the reference like a peer and also for reporting a bad index. NumPy runs "
    "these ops on one thread whatever T says. Peer recipes: G1 torch.index_select(out=), "
    "np.take(out=), ORT Gather; G2 np.take on flattened params (flat index computed in the "
    "timed call), ORT GatherND; G3 ORT GatherND batch_dims=1; S1/S2 ORT ScatterND "
    "reduction=add, torch index_add_ (after a copy_ of the tensor, as the op returns a new "
    "tensor), np.add.at; D1 torch index_copy_, NumPy fancy assignment; P1 NumPy compress per "
    "partition, torch index_select of nonzero; C0 offset + concatenate; C1 concatenate + "
    "stable argsort.")

TARGETS = (
    "Targets missed: ndx at its best thread count slower than the naive loop at its "
    f"best; ndx slower at more threads than at 1; ndx fresh more than {FRESH_TARGET:g}x its "
    "reused-output time.")


def report(about, tables, notes, chart, scale):
    """The markdown report: the table, best against best, the chart, and the notes."""
    caveat = ([f"Scale {scale:g}: these sizes only check the tooling; the targets are judged "
               "at scale 1.", ""] if scale != 1.0 else [])
    return "\n".join(
        ["# ndx vs peers", "", about, "", render_markdown(*tables[0]), "", LEGEND, "",
         "## Best against best", "", render_markdown(*tables[1]), "", TARGETS, ""] + caveat
        + ([f"![ndx against its peers]({os.path.basename(chart)})", ""] if chart else [])
        + (["Notes:", ""] + notes + [""] if notes else []))


def publish_chart(args, rows, report_path, caption, full):
    """Draws the chart beside the report; a full run (scale 1, every workload) also copies it
    to bench/results/latest.png, which docs/performance.md shows. The chart's path, or None."""
    path = os.path.splitext(report_path)[0] + ".png"
    try:
        draw_chart(rows, path, caption)
    except Exception as e:  # no matplotlib: the table still stands
        print(f"compare: no chart ({type(e).__name__}: {e})", file=sys.stderr)
        return None
    print(f"chart drawn to {path}")
    if full and not args.out:
        latest = os.path.join(args.here, "results", "latest.png")
        shutil.copyfile(path, latest)
        print(f"chart copied to {latest}")
    return path


if __name__ == "__main__":
    sys.exit(main())
