"""Nothing lost when ndx is killed mid-write: SIGKILL (nothing can be cleaned up) and SIGTERM sent
while a large output is being written leave an existing output byte for byte as it was. The
output is written to a hidden temporary file beside it and renamed only when complete, so a kill
can at worst leave that temporary file behind, never a torn destination."""
import os
import signal
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import NDX, Folder, check, main  # noqa: E402

PRECIOUS = b"precious bytes that must survive a kill\n"


def temp_files(f):
    return [n for n in f.listing() if n.startswith(".out.npy.")]


def writing(f):
    """The temporary output exists and has bytes in it: ndx is mid-write."""
    for name in temp_files(f):
        try:
            if os.path.getsize(f.path(name)) > 0:
                return True
        except FileNotFoundError:
            pass
    return False


def kill_while_writing(sig):
    with Folder() as f:
        # 64 MiB of params gathered twice over: a 128 MiB output takes a while to write.
        f.save("params.npy", np.ones((131072, 128), dtype=np.float32))
        f.save("rows.npy", np.tile(np.arange(131072, dtype=np.int64), 2).reshape(-1, 1))
        with open(f.path("out.npy"), "wb") as fh:
            fh.write(PRECIOUS)
        caught = False
        for attempt in range(20):
            p = subprocess.Popen([NDX, "gather_nd", f.path("params.npy"), f.path("rows.npy"),
                                  "-o", f.path("out.npy"), "--threads", "1"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 30
            while p.poll() is None and not writing(f) and time.monotonic() < deadline:
                time.sleep(0.0005)
            if p.poll() is None and writing(f):
                p.send_signal(sig)
                caught = True
            rc = p.wait(timeout=60)
            if caught:
                check(rc == -sig, f"expected death by signal {sig}, got exit {rc}")
                break
            # It finished before the kill landed: restore the old output and try again.
            with open(f.path("out.npy"), "wb") as fh:
                fh.write(PRECIOUS)
        check(caught, "could not catch ndx while it was writing")
        with open(f.path("out.npy"), "rb") as fh:
            check(fh.read() == PRECIOUS, f"signal {sig}: the old output was changed")
        # With SIGKILL the temporary file may stay (nothing runs after the kill); it is hidden,
        # beside the destination, and never mistaken for the output.
        for name in temp_files(f):
            check(name.startswith(".out.npy."), f"unexpected leftover {name}")


def test_sigkill_mid_write_keeps_old_output():
    kill_while_writing(signal.SIGKILL)


def test_sigterm_mid_write_keeps_old_output():
    kill_while_writing(signal.SIGTERM)


if __name__ == "__main__":
    main(globals())
