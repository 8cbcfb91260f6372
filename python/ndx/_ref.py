"""Keys by identity for objects whose == is elementwise (Tensor, Variable: TensorFlow 2's
rules make them unhashable): `x.ref()` gives a Reference, and ndx's own tables of variables
are identity dicts and sets (TensorFlow's object_identity)."""
from collections.abc import MutableMapping, MutableSet

__all__ = ["Reference", "IdentityDict", "IdentitySet"]


class Reference:
    """A hashable reference to an object, equal to another reference to the same object
    (TensorFlow's Tensor.ref() / Variable.ref()); deref() gives the object back."""

    __slots__ = ("_obj",)

    def __init__(self, obj):
        self._obj = obj

    def deref(self):
        """The object this refers to."""
        return self._obj

    def __eq__(self, other):
        return isinstance(other, Reference) and self._obj is other._obj

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return id(self._obj)

    def __repr__(self):
        return f"<Reference at {id(self):#x} of {self._obj!r}>"


def unhashable(kind, what):
    """A __hash__ that raises TensorFlow's TypeError for `kind` ("Tensor", "Variable")."""
    def __hash__(self):
        raise TypeError(f"{kind} is unhashable. Instead, use {what}.ref() as the key.")
    return __hash__


class IdentityDict(MutableMapping):
    """A dict whose keys are compared by identity, in insertion order."""

    __slots__ = ("_d",)

    def __init__(self):
        self._d = {}

    def __getitem__(self, key):
        return self._d[Reference(key)]

    def __setitem__(self, key, value):
        self._d[Reference(key)] = value

    def __delitem__(self, key):
        del self._d[Reference(key)]

    def __iter__(self):
        return (r._obj for r in self._d)

    def __len__(self):
        return len(self._d)

    def __contains__(self, key):
        return Reference(key) in self._d

    def get(self, key, default=None):
        return self._d.get(Reference(key), default)

    def copy(self):
        out = IdentityDict()
        out._d = dict(self._d)
        return out

    def __repr__(self):
        return "IdentityDict({" + ", ".join(f"{r._obj!r}: {v!r}" for r, v in self._d.items()) + "})"


class IdentitySet(MutableSet):
    """A set of objects compared by identity, in insertion order."""

    __slots__ = ("_d",)

    def __init__(self, items=()):
        self._d = {}
        for x in items:
            self.add(x)

    def __contains__(self, x):
        return Reference(x) in self._d

    def __iter__(self):
        return (r._obj for r in self._d)

    def __len__(self):
        return len(self._d)

    def add(self, x):
        self._d[Reference(x)] = None

    def discard(self, x):
        self._d.pop(Reference(x), None)

    def __repr__(self):
        return "IdentitySet([" + ", ".join(repr(r._obj) for r in self._d) + "])"
