"""The graph layer's registry of node kinds, read once from the library (ndx_kind_info, through
_ndx.kinds()): for each TensorFlow op type, its inputs' names and arity, its outputs, and its
attributes (name, type, default, range, whether required, and the bad-index policy's own word
for "ignore": "zero" for GatherNd, "skip" for the scatters). Graph.op and the traced ops
(ndx/_graph_ops.py) take what they need to know of a kind from here, so a kind added to the
graph layer reaches them with no code of its own."""
from . import _ndx

KINDS = {k["type"]: k for k in _ndx.kinds()}
_ATTRS = {t: {a["name"]: a for a in k["attrs"]} for t, k in KINDS.items()}


def attrs_of(type):
    """The attributes of kind `type` by name ({} for a type the registry does not know: the
    library then refuses it with its own message)."""
    return _ATTRS.get(type, {})


def policy_alias(type, attr="bad_indices"):
    """The kind's own word for "ignore" in its policy attribute `attr` ("zero", "skip"), or
    None."""
    a = attrs_of(type).get(attr)
    return a["alias"] if a and a["type"] == "policy" else None
