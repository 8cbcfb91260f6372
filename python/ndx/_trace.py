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
