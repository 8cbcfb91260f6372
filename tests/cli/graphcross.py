"""graphcross.py — one CLI op call as a one-node saved graph. cross_check(args) takes the
arguments of an `ndx OP ...` call that succeeded, writes a graph with one node of that op and
those attributes, runs it with `ndx run` four ways — the inputs as placeholders of their exact
specs, of their rank with every dim unknown, of unknown rank (strings of open width in both),
and as constants in the graph — and checks every output equals the CLI's, bit for bit.
`ndx run` writes strings as |S, so a result the CLI wrote as <U is compared by value (its UTF-8
bytes)."""

import os
import shutil
import subprocess
import tempfile

import numpy as np

# CLI command -> the graph's op (tensor_scatter_nd_* map by their last word).
OPS = {"gather_nd": "GatherNd", "scatter_nd": "ScatterNd", "dynamic_stitch": "DynamicStitch",
       "dynamic_partition": "DynamicPartition", "sparse_concat": "SparseConcat",
       "sparse_reorder": "SparseReorder", "sparse_to_dense": "SparseToDense",
       "dense_to_sparse": "DenseToSparse"}
for _w in ("update", "add", "sub", "min", "max"):
    OPS["tensor_scatter_nd_" + _w] = "TensorScatter" + _w.capitalize()

# Options that take a value, and flags, as the commands spell them.
VALUE_OPTIONS = {"-o", "--batch-dims", "--bad-indices", "--shape", "--num-partitions", "--axis",
                 "--default-value", "--threads", "--max-memory"}
INLINE_MAX = 4096  # larger constants go to the graph's .npz

cases = 0  # CLI calls cross-checked, for the driver's summary
ops_seen = set()  # their commands


class Mismatch(AssertionError):
    pass


def parse_cli(args):
    """(command, positional files, {option: value}) of an `ndx OP ...` argument list."""
    cmd, rest = args[0], list(args[1:])
    pos, opts = [], {}
    i = 0
    while i < len(rest):
        a = rest[i]
        if a.startswith("-") and a != "-" and not _is_number(a):
            name, eq, val = a.partition("=")
            if name in VALUE_OPTIONS and not eq:
                i += 1
                val = rest[i]
            opts[name] = val if name in VALUE_OPTIONS else True
        else:
            pos.append(a)
        i += 1
    return cmd, pos, opts


def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


# ---- values as ndx holds them --------------------------------------------------------------

def as_ndx(a):
    """The array as ndx holds it: <U as UTF-8 bytes NUL-padded to 4 bytes per character."""
    a = np.asarray(a)
    if a.dtype.kind == "U":
        width = max(a.dtype.itemsize, 1)
        flat = [s.encode("utf-8") for s in a.reshape(-1).tolist()]
        return np.array(flat, dtype=f"S{width}").reshape(a.shape)
    return a


def dtype_text(a):
    a = np.asarray(a)
    if a.dtype.kind in "SU":
        return "string"
    return a.dtype.name


def spec_text(a, way):
    """The text form's spec of array a: 'exact' (width and dims), 'dims' (the rank, every dim
    and a string's width unknown) or 'open' (unknown rank and width)."""
    a = np.asarray(a)
    dt = dtype_text(a)
    if way == "open":
        return f"{dt}[*]"
    if way == "dims":
        return f"{dt}[{', '.join('?' for _ in a.shape)}]"
    width = f"({a.dtype.itemsize})" if a.dtype.kind in "SU" else ""
    return f"{dt}{width}[{', '.join(str(d) for d in a.shape)}]"


def _element_text(x, kind):
    if kind == "b":
        return "true" if x else "false"
    if kind in "iu":
        return str(int(x))
    if kind == "f":
        return repr(float(x))
    if kind == "c":
        return f"({float(x.real)!r}, {float(x.imag)!r})"
    body = bytes(x).rstrip(b"\0")
    return '"' + "".join(f"\\x{b:02x}" for b in body) + '"'


def inline_ok(a):
    a = np.asarray(a)
    if a.size > INLINE_MAX or (a.dtype.kind in "SU" and a.dtype.itemsize == 0):
        return False
    return not (a.dtype.kind in "fc" and np.isnan(a).any())


def value_text(a):
    a = as_ndx(a)
    kind = a.dtype.kind
    return "[" + ", ".join(_element_text(x, kind) for x in a.reshape(-1)) + "]"


# ---- one node -----------------------------------------------------------------------------------

def default_array(text, values):
    """--default-value TEXT as a scalar of the values' dtype, as the CLI reads it."""
    dt = values.dtype
    if dt.kind in "SU":
        raw = text.encode("utf-8")
        return np.array(raw, dtype=f"S{max(len(raw), 1)}")
    if dt.kind == "b":
        return np.array(text in ("true", "1"))
    if dt.kind == "c":
        re, _, im = text.partition(",")
        part = np.float32 if dt.itemsize == 8 else np.float64
        value = np.zeros((), dtype=dt.newbyteorder("="))
        value.real, value.imag = part(re), part(im or "0")
        return value
    if dt.kind in "iu":
        return np.array(int(text), dtype=dt.newbyteorder("="))
    return np.array(np.dtype(dt.newbyteorder("=")).type(text))


def load_sparse(path):
    with np.load(path, allow_pickle=False) as z:
        return (z["indices"].astype(np.int64), z["values"], z["dense_shape"].astype(np.int64))


def describe(cmd, pos, opts):
    """The node: (op line attributes, [(input name, array, file to feed or None)],
    [(fetch, CLI output path, sparse)])."""
    op = OPS[cmd]
    attrs, inputs = [], []
    out = opts["-o"]

    def dense(name, path):
        inputs.append((name, np.load(path, allow_pickle=False), path))

    def sparse(prefix, path):
        for part, arr in zip(("i", "v", "s"), load_sparse(path)):
            inputs.append((f"{prefix}{part}", arr, None))

    if cmd == "gather_nd":
        dense("params", pos[0])
        dense("indices", pos[1])
        if int(opts.get("--batch-dims", 0)):
            attrs.append(f"batch_dims={int(opts['--batch-dims'])}")
        if opts.get("--bad-indices", "error") != "error":
            attrs.append("bad_indices=ignore")
        fetches = [("y", out, False)]
    elif cmd == "scatter_nd":
        dense("indices", pos[0])
        dense("updates", pos[1])
        dims = [int(d) for d in opts["--shape"].split(",")]
        inputs.append(("shape", np.array(dims, dtype=np.int64), None))
        fetches = [("y", out, False)]
    elif cmd.startswith("tensor_scatter_nd_"):
        for name, path in zip(("tensor", "indices", "updates"), pos):
            dense(name, path)
        if opts.get("--bad-indices", "error") != "error":
            attrs.append("bad_indices=ignore")
        fetches = [("y", out, False)]
    elif cmd == "dynamic_stitch":
        n = len(pos) // 2
        for m in range(n):
            inputs.append((f"i{m}", np.load(pos[2 * m], allow_pickle=False), pos[2 * m]))
        for m in range(n):
            inputs.append((f"d{m}", np.load(pos[2 * m + 1], allow_pickle=False), pos[2 * m + 1]))
        fetches = [("y", out, False)]
    elif cmd == "dynamic_partition":
        dense("data", pos[0])
        dense("partitions", pos[1])
        n = int(opts["--num-partitions"])
        attrs.append(f"num_partitions={n}")
        fetches = [(f"y:{k}", f"{out}.{k}.npy", False) for k in range(n)]
    elif cmd == "sparse_concat":
        parts = [load_sparse(p) for p in pos]
        for k in range(3):
            for m, sp in enumerate(parts):
                inputs.append((f"s{m}{'ivs'[k]}", sp[k], None))
        attrs.append(f"axis={int(opts['--axis'])}")
        if opts.get("--expand-nonconcat-dim"):
            attrs.append("expand_nonconcat_dim=true")
        fetches = [("y", out, True)]
    elif cmd == "sparse_reorder":
        sparse("s", pos[0])
        fetches = [("y", out, True)]
    elif cmd == "sparse_to_dense":
        sparse("s", pos[0])
        if "--default-value" in opts:
            inputs.append(("default", default_array(opts["--default-value"], inputs[1][1]), None))
        fetches = [("y", out, False)]
    else:  # dense_to_sparse
        dense("dense", pos[0])
        fetches = [("y", out, True)]
    return op, attrs, inputs, fetches


def graph_text(op, attrs, inputs, way, npz_members):
    """The graph: inputs as placeholders (way 'exact', 'dims' or 'open'; see spec_text) or
    constants ('const')."""
    lines = ["ndx-graph 1"]
    for name, arr, _ in inputs:
        if way == "const":
            if inline_ok(arr):
                lines.append(f"{name} = Const() value={value_text(arr)} : "
                             f"{spec_text(arr, 'exact')}")
            else:
                npz_members[name] = as_ndx(arr)
                lines.append(f"{name} = Const() value=@{name} : {spec_text(arr, 'exact')}")
        else:
            lines.append(f"{name} = Placeholder() : {spec_text(arr, way)}")
    names = ", ".join(name for name, _, _ in inputs)
    lines.append(f"y = {op}({names}){''.join(' ' + a for a in attrs)}")
    return "\n".join(lines) + "\n"


# ---- comparing --------------------------------------------------------------------------------

def _same_array(got, want, what):
    want = np.asarray(want)
    if want.dtype.kind == "U":  # the CLI kept <U; ndx run writes the UTF-8 bytes as |S
        want = as_ndx(want)
        if got.dtype.kind != "S" or got.shape != want.shape or \
                [bytes(x) for x in got.reshape(-1)] != [bytes(x) for x in want.reshape(-1)]:
            raise Mismatch(f"{what}: got {got!r}, the CLI gave {want!r}")
        return
    if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
        raise Mismatch(f"{what}: got {got!r}, the CLI gave {want!r}")


def compare(run_path, cli_path, sparse, what):
    if sparse:
        with np.load(run_path, allow_pickle=False) as g, np.load(cli_path, allow_pickle=False) as w:
            if sorted(g.files) != sorted(w.files):
                raise Mismatch(f"{what}: members {g.files}, the CLI wrote {w.files}")
            for k in w.files:
                _same_array(g[k], w[k], f"{what}: {k}")
        return
    want = np.load(cli_path, allow_pickle=False)
    if want.dtype.kind != "U":
        with open(run_path, "rb") as a, open(cli_path, "rb") as b:
            if a.read() == b.read():
                return
    _same_array(np.load(run_path, allow_pickle=False), want, what)


def snapshot(args, folder):
    """args with every input file copied into `folder` first (a CLI call may write its output
    over an input): the arguments cross_check is given once the call succeeded."""
    args = [str(a) for a in args]
    if args[0] not in OPS:
        return args
    out, value_next = [args[0]], False
    for a in args[1:]:
        takes = a.partition("=")[0] in VALUE_OPTIONS and "=" not in a
        if not value_next and not a.startswith("-") and os.path.isfile(a):
            copy = os.path.join(folder, f"in{len(out)}_{os.path.basename(a)}")
            shutil.copyfile(a, copy)
            a = copy
        out.append(a)
        value_next = takes and not value_next
    return out


def cross_check(ndx, args):
    """Runs the graph forms of the CLI call `args` (which succeeded) and compares."""
    global cases
    cmd, pos, opts = parse_cli([str(a) for a in args])
    if cmd not in OPS or "-o" not in opts:
        return
    op, attrs, inputs, fetches = describe(cmd, pos, opts)
    threads = ["--threads", opts["--threads"]] if "--threads" in opts else []
    with tempfile.TemporaryDirectory(prefix="ndx-cross-") as tmp:
        feeds = []
        for name, arr, path in inputs:
            if path is None:
                path = os.path.join(tmp, f"feed_{name}.npy")
                np.save(path, arr, allow_pickle=False)
            feeds += ["--feed", f"{name}={path}"]
        for way in ("exact", "dims", "open", "const"):
            members = {}
            text = graph_text(op, attrs, inputs, way, members)
            graph = os.path.join(tmp, f"{way}.txt")
            with open(graph, "w") as fh:
                fh.write(text)
            if members:
                np.savez(os.path.join(tmp, f"{way}.npz"), **members)
            outs, fetch_args = [], []
            for k, (fetch, cli_path, sparse) in enumerate(fetches):
                path = os.path.join(tmp, f"{way}_{k}.{'npz' if sparse else 'npy'}")
                outs.append((path, cli_path, sparse))
                fetch_args += ["--fetch", f"{fetch}={path}"]
            p = subprocess.run([ndx, "run", graph] + (feeds if way != "const" else []) +
                               fetch_args + threads, capture_output=True, text=True, timeout=120)
            what = f"ndx {' '.join(str(a) for a in args)} as a graph ({way})"
            if p.returncode != 0:
                raise Mismatch(f"{what}: ndx run failed: {p.stderr.strip()}\n{text[:3000]}")
            for path, cli_path, sparse in outs:
                compare(path, cli_path, sparse, what)
    cases += 1
    ops_seen.add(cmd)
