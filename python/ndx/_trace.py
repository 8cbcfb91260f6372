"""Whether ops build graph nodes or run: the one check every op wrapper makes.

`active` counts the traces running in any thread; each wrapper module that registers its
globals (watch(globals())) also gets it as its own global `_tracing` (true while any trace
runs), so the eager path pays one global load. `graph()` is the graph of this thread's
innermost trace, or None (another thread may be tracing while this one runs ops eagerly)."""
import threading

active = 0
_count_lock = threading.Lock()
_local = threading.local()
_watchers = []


def watch(module_globals):
    """Keeps module_globals["_tracing"] equal to `active > 0`."""
    module_globals["_tracing"] = active > 0
    _watchers.append(module_globals)


def _count(step):
    global active
    with _count_lock:
        active += step
        for g in _watchers:
            g["_tracing"] = active > 0


def graph():
    """The ndx Graph this thread is tracing into, or None."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def tapes():
    """This thread's recording eager tapes (innermost last), or None."""
    return getattr(_local, "tapes", None) or None


# Set by ndx/_tape.py: record(fn, *args, **kwargs) runs the op fn eagerly (recording it on the
# tapes its inputs concern), mode is the glue's eager mode that records, read(variable) a
# Variable's value as the tapes see it, unrecorded(name, args, kwargs) warns of a call they
# cannot record.
record = mode = read = unrecorded = None


def op_call(fn, build, run, args, name, **options):
    """A call of the index or sparse op fn(*args, name, **options) while some thread traces (the
    wrappers check their `_tracing` first): build(g, *args, name, *options) adds its node to this
    thread's graph; else, under this thread's eager tapes, record runs it for them; else
    run(*args, *options), the op's private function, runs it."""
    if (g := graph()) is not None:
        return build(g, *args, name, *options.values())
    if tapes() is not None:
        return record(fn, *args, name, **options)
    return run(*args, *options.values())


def push_tape(tape):
    _local.tapes = (getattr(_local, "tapes", None) or []) + [tape]
    _count(1)


def pop_tape(tape):
    stack = list(getattr(_local, "tapes", None) or [])
    stack.remove(tape)
    _local.tapes = stack
    _count(-1)


class paused:
    """`with paused():` this thread's tapes see nothing (an op run for them, gradient())."""

    __slots__ = ("_saved",)

    def __enter__(self):
        self._saved = getattr(_local, "tapes", None)
        _local.tapes = None

    def __exit__(self, *exc):
        _local.tapes = self._saved
        return False


class tracing:
    """`with tracing(graph):` ops called in this thread build nodes in `graph`."""

    __slots__ = ("_graph",)

    def __init__(self, graph):
        self._graph = graph

    def __enter__(self):
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self._graph)
        _count(1)
        return self._graph

    def __exit__(self, *exc):
        _local.stack.pop()
        _count(-1)
        return False
