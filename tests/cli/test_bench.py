"""ndx bench: argument handling, the output line, and — on every workload shrunk with the hidden
--scale option — the result itself, checked through --digest against bench/workloads.py, which
builds the same inputs with NumPy and computes the expected outputs plainly. Never checks speed.

    python3 tests/cli/test_bench.py path/to/ndx
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import workloads as W  # noqa: E402

NDX = None
SCALE = 0.002
LINE = re.compile(r"^(G1|G2|G3|S1|S2|D1|P1|C0|C1) median_s=(\d+\.\d{6}) GBps=(\d+\.\d\d) "
                  r"threads=(\d+) peak_rss_mb=(\d+) first_touch_s=(\d+\.\d{6}) fresh_s=(\d+\.\d{6})"
                  r"(?: digest=([0-9a-f]{16}))?$")


def ndx(*args):
    return subprocess.run([NDX, "bench", *args], capture_output=True, text=True, timeout=300)


class Usage(unittest.TestCase):
    def assert_usage(self, proc, needle):
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertIn("ndx: error:", proc.stderr)
        self.assertIn(needle, proc.stderr)
        self.assertIn("usage: ndx bench", proc.stderr)

    def test_unknown_workload(self):
        self.assert_usage(ndx("G9"), "unknown workload 'G9'")
        self.assert_usage(ndx("G1", "bogus"), "unknown workload 'bogus'")

    def test_no_workload(self):
        self.assert_usage(ndx(), "name a workload")

    def test_bad_values(self):
        self.assert_usage(ndx("G1", "--repeat", "4"), "--repeat")
        self.assert_usage(ndx("G1", "--repeat", "five"), "--repeat")
        self.assert_usage(ndx("G1", "--threads", "-1"), "--threads")
        self.assert_usage(ndx("G1", "--scale", "0"), "--scale")
        self.assert_usage(ndx("G1", "--scale", "1x"), "--scale")
        self.assert_usage(ndx("G1", "--seed", "-3"), "--seed")
        self.assert_usage(ndx("G1", "--frobnicate"), "unknown option")
        self.assert_usage(ndx("G1", "--repeat"), "needs a value")

    def test_scaling_needs_threads_and_a_plain_workload(self):
        self.assert_usage(ndx("G1", "--scaling", "--threads", "1"), "it needs T of 2 or more, not 1")
        self.assert_usage(ndx("N3", "--scaling", "--threads", "2"), "--scaling applies to G1 ... C1")
        self.assert_usage(ndx("G1", "A1", "--scaling", "--threads", "2"), "not to N3")

    def test_help(self):
        proc = ndx("--help")
        self.assertEqual(proc.returncode, 0)
        for name in W.NAMES:
            self.assertIn(f"  {name}  ", proc.stdout)
        self.assertIn("first_touch_s", proc.stdout)

    def test_without_ndx_bench(self):
        # ndx bench runs ndx-bench, found beside ndx or in PATH; an ndx with neither (as
        # installed) names the missing program in one error line, exit 1.
        with tempfile.TemporaryDirectory() as tmp:
            alone = os.path.join(tmp, "ndx")
            shutil.copy(NDX, alone)
            proc = subprocess.run([alone, "bench", "G1"], capture_output=True, text=True,
                                  timeout=60, env={"PATH": tmp})
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        self.assertTrue(proc.stderr.startswith("ndx: error: "), proc.stderr)
        self.assertIn("ndx-bench", proc.stderr)


class Runs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.expected = {}
        for name in W.NAMES:
            w = W.build(name, SCALE, 42)
            cls.expected[name] = (W.reference_digest(name, W.reference(name, w)), w["bytes"])

    def run_all(self, threads):
        proc = ndx("all", "--scale", str(SCALE), "--threads", str(threads), "--digest")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual([l.split()[0] for l in lines], W.NAMES)
        results = {}
        for line in lines:
            m = LINE.match(line)
            self.assertIsNotNone(m, f"malformed line: {line!r}")
            name, med, gbps, t, rss, first, fresh, digest = m.groups()
            self.assertEqual(int(t), threads)
            self.assertGreater(int(rss), 0)
            bytes_moved = self.expected[name][1]
            if float(med) > 0:  # printed bandwidth is bytes / median, to the printed precision
                want = bytes_moved / float(med) / 1e9
                self.assertLessEqual(abs(float(gbps) - want), 0.01 + 2e-3 * want + want * 1e-6 /
                                     float(med), line)
            results[name] = int(digest, 16)
        return results, proc.stderr

    def test_every_workload_gives_the_reference_result(self):
        one, progress = self.run_all(1)
        for name in W.NAMES:
            self.assertEqual(one[name], self.expected[name][0], f"{name} differs from NumPy")
            self.assertIn(f"] {name}: ", progress)  # a progress line per workload
        three, _ = self.run_all(3)
        self.assertEqual(one, three)  # identical bytes at any thread count

    def test_graph_workloads(self):
        # every workload as a one-node graph, run alternately with the direct call into the
        # same outputs: the digest (taken after the last, a graph run) is still NumPy's
        proc = ndx("all", "--graph", "--scale", str(SCALE), "--digest", "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for line in proc.stdout.splitlines():
            m = re.search(r" graph_median_s=([0-9.]+) graph_vs_direct=([0-9.]+) digest=([0-9a-f]{16})$",
                          line)
            self.assertIsNotNone(m, line)
            name = line.split()[0]
            self.assertEqual(int(m.group(3), 16), self.expected[name][0], f"{name} as a graph")
        # the small graphs: their overhead against direct calls, the results compared inside
        proc = ndx("N3", "n20", "--threads", "1")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual([l.split()[0] for l in lines], ["N3", "N20"])
        for line, nodes in zip(lines, (8, 20)):
            m = re.fullmatch(r"N\d+ graph_us=([0-9.]+) direct_us=([0-9.]+) nodes=(\d+) "
                             r"overhead_per_node_us=(-?[0-9.]+) threads=1", line)
            self.assertIsNotNone(m, line)
            self.assertEqual(int(m.group(3)), nodes)
            g, d, per = float(m.group(1)), float(m.group(2)), float(m.group(4))
            self.assertAlmostEqual(per, (g - d) / nodes, delta=0.002)

    def test_scaling_pairs(self):
        # --scaling times a 1-thread run beside every 3-thread one into the same output: the
        # digest is still NumPy's, and the ratio printed is a median between its quartiles
        proc = ndx("C1", "G2", "--scale", str(SCALE), "--threads", "3", "--scaling",
                   "--repeat", "9", "--digest", "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual([l.split()[0] for l in lines], ["C1", "G2"])  # in the order named
        for line in lines:
            m = re.search(r" threads=3 .* one_thread_median_s=(\d+\.\d{6}) scaling=(\d+\.\d\d) "
                          r"scaling_q1=(\d+\.\d\d) scaling_q3=(\d+\.\d\d) digest=([0-9a-f]{16})$", line)
            self.assertIsNotNone(m, line)
            one, med, q1, q3 = (float(m.group(k)) for k in range(1, 5))
            self.assertGreater(one, 0)
            self.assertLessEqual(q1, med, line)
            self.assertLessEqual(med, q3, line)
            self.assertEqual(int(m.group(5), 16), self.expected[line.split()[0]][0], line)

    def test_one_workload_names_and_quiet(self):
        proc = ndx("g3", "G3", "--scale", str(SCALE), "--repeat", "7", "--quiet", "--threads", "2")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")
        lines = proc.stdout.splitlines()
        self.assertEqual(len(lines), 1)  # a workload named twice runs once
        m = LINE.match(lines[0])
        self.assertIsNotNone(m, lines[0])
        self.assertIsNone(m.group(8))  # no digest unless asked
        self.assertEqual(m.group(4), "2")

    def test_optimizer_steps(self):
        # A1 and A2 apply a sparse gradient in place and check one step bitwise against the naive
        # serial loop (same_as_naive=yes, else the command fails); not part of 'all'
        proc = ndx("A1", "a2", "--scale", str(SCALE), "--threads", "2", "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual([l.split()[0] for l in lines], ["A1", "A2"])
        for line in lines:
            m = re.fullmatch(r"A[12] median_s=\d+\.\d{6} naive_serial_s=\d+\.\d{6} "
                             r"naive_parallel_s=\d+\.\d{6} GBps=\d+\.\d\d threads=2 "
                             r"serial_vs_ndx=\d+\.\d\d same_as_naive=yes", line)
            self.assertIsNotNone(m, line)

    def test_training_steps(self):
        # T1, T2 and T3 (the bag step): one session run per step, nothing allocated after the
        # first, and the same losses at 1 and 2 threads (every gradient is the same bits)
        pattern = (r"(T[123]) steps_per_s=\d+\.\d{3} step_s=\d+\.\d{6} threads=(\d) steps=20 "
                   r"allocs_first_step=\d+ allocs_after_first=0 bytes_after_first=0 "
                   r"loss_first=(\S+) loss_last=(\S+)")
        losses = {}
        for threads in ("1", "2"):
            proc = ndx("T1", "T2", "t3", "--scale", str(SCALE), "--threads", threads, "--quiet")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            lines = proc.stdout.splitlines()
            self.assertEqual([l.split()[0] for l in lines], ["T1", "T2", "T3"])
            for line in lines:
                m = re.fullmatch(pattern, line)
                self.assertIsNotNone(m, line)
                self.assertEqual(m.group(2), threads)
                losses.setdefault(m.group(1), set()).add((m.group(3), m.group(4)))
        for name, seen in losses.items():
            self.assertEqual(len(seen), 1, f"{name}: losses differ by thread count: {seen}")


if __name__ == "__main__":
    NDX = sys.argv.pop(1)
    unittest.main(verbosity=2)
