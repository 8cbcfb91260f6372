"""sparse_compare.py — ndx.sparse against SciPy and PyTorch, in one run.

    /usr/bin/python3 -m venv --system-site-packages build-py/venv   # once, then install ndx:
    build-py/venv/bin/pip install --quiet --no-build-isolation --no-index ./python
    build-py/venv/bin/python bench/sparse_compare.py [--threads 1 2] [--repeat 7] [--only matmul]

Inputs come from NumPy's generator with a fixed seed. Every peer's result is checked against
ndx's before timing; a wrong one is marked ✗ and never counts. ndx runs as an ndx.function traced
once per thread count (threads=T), PyTorch under torch.set_num_threads(T); SciPy is
single-threaded (timed at every T all the same). The time is the best of R repetitions, the
contenders taking turns, after one warm-up each (bench/peer_compare.py). The floor is the traffic
the op must move at this machine's measured memcpy and random-row rates (bench/baseline.c)."""
import sys

import numpy as np

import ndx
import peer_compare
from peer_compare import call, close, exact, torch_or_none

SEED = 20261130


def scipy_or_none():
    try:
        import scipy.sparse
        return scipy.sparse
    except ImportError:
        return None


# ---- workloads (bench/peer_compare.py describes a workload's dict) ----------------------------


def workloads():
    """name -> builder of the workload (inputs drawn when it is run)."""
    rng = np.random.default_rng(SEED)
    return {
    }


if __name__ == "__main__":
    sys.exit(peer_compare.main(__doc__, workloads))
