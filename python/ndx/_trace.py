"""Whether ops build graph nodes or run: the one check every op wrapper makes.

`active` counts the traces running in any thread (a module global, so the eager path pays one
attribute load); `graph()` is the graph of this thread's innermost trace, or None (another
thread may be tracing while this one runs ops eagerly)."""
import threading

active = 0
_count_lock = threading.Lock()
_local = threading.local()


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
        global active
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self._graph)
        with _count_lock:
            active += 1
        return self._graph

    def __exit__(self, *exc):
        global active
        _local.stack.pop()
        with _count_lock:
            active -= 1
        return False
