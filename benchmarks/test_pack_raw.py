#!/usr/bin/env python3
"""Tests of benchmarks/pack_raw.py: what is raw, what stays, the archive round trip and the bound."""

import os
import random
import sys
import tarfile
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pack_raw  # noqa: E402


def write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)


class PackRawTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run = os.path.join(self.tmp.name, "run")
        self.files = {
            "summary.md": b"# summary\n",
            "summary.json": b"{}\n",
            "notes.txt": b"p50 1.0\n",
            "fig.png": b"\x89PNG",
            "jobs.csv": b"job,jct\n" + b"1,2.0\n" * 2000,
            "trace.csv": b"t,x\n" * 500,
            "bench.log": b"log line\n" * 100,
            "round-1/jobs.csv": b"job,jct\n1,3.0\n",
            "round-1/summary.json": b"{}\n",
        }
        for rel, data in self.files.items():
            write(os.path.join(self.run, rel), data)

    def tearDown(self):
        self.tmp.cleanup()

    def test_summaries_stay_and_raw_data_round_trips_through_the_archive(self):
        n, size, kept = pack_raw.pack(self.run, 2_000_000, set())
        self.assertTrue(kept)
        raw = {"jobs.csv", "trace.csv", "bench.log", "round-1/jobs.csv", "round-1/summary.json"}
        self.assertEqual(n, len(raw))
        self.assertEqual(size, sum(len(self.files[r]) for r in raw))
        left = {os.path.relpath(os.path.join(d, f), self.run) for d, _, fs in os.walk(self.run) for f in fs}
        self.assertEqual(left, (set(self.files) - raw) | {"raw.tar.xz", "RAW.md"})
        self.assertFalse(os.path.exists(os.path.join(self.run, "round-1")), "emptied sub-folders go")
        with tarfile.open(os.path.join(self.run, "raw.tar.xz")) as tar:
            for rel in raw:
                self.assertEqual(tar.extractfile(rel).read(), self.files[rel], rel)
        with open(os.path.join(self.run, "RAW.md")) as fh:
            self.assertIn("tar -xJf raw.tar.xz", fh.read())

    def test_cited_files_stay_unpacked(self):
        cited = os.path.normpath(os.path.join(self.run, "round-1/jobs.csv"))
        n, _, _ = pack_raw.pack(self.run, 2_000_000, {cited})
        self.assertEqual(n, 4)
        self.assertTrue(os.path.exists(cited))

    def test_files_under_a_cited_folder_or_name_stem_stay(self):
        write(os.path.join(self.run, "diag-1.log"), b"x")
        write(os.path.join(self.run, "diag-2.log"), b"y")
        # cited folders and stems count inside a run folder: make the run folder 5 components deep
        area = os.path.join(self.tmp.name, "benchmarks", "results", "netlab")
        os.makedirs(area)
        run = os.path.join(area, "run")
        os.rename(self.run, run)
        keep = {os.path.join(run, "round-1") + "/", os.path.join(run, "diag-")}
        n, _, _ = pack_raw.pack(run, 2_000_000, keep)
        self.assertEqual(n, 3, "jobs.csv, trace.csv, bench.log")
        for rel in ("round-1/jobs.csv", "round-1/summary.json", "diag-1.log", "diag-2.log"):
            self.assertTrue(os.path.exists(os.path.join(run, rel)), rel)

    def test_an_archive_over_the_bound_is_not_kept_and_the_note_says_so(self):
        rng = random.Random(1)
        write(os.path.join(self.run, "big.log"), bytes(rng.getrandbits(8) for _ in range(50_000)))
        _, _, kept = pack_raw.pack(self.run, 10_000, set())
        self.assertFalse(kept)
        self.assertFalse(os.path.exists(os.path.join(self.run, "raw.tar.xz")))
        self.assertFalse(os.path.exists(os.path.join(self.run, "big.log")))
        with open(os.path.join(self.run, "RAW.md")) as fh:
            self.assertIn("over the", fh.read())

    def test_the_archive_is_reproducible(self):
        rels = pack_raw.raw_files(self.run, set())
        self.assertEqual(pack_raw.archive_bytes(self.run, rels), pack_raw.archive_bytes(self.run, rels))

    def test_cited_paths_are_found_in_markdown(self):
        doc = os.path.join(self.tmp.name, "docs", "a.md")
        write(doc, b"see `benchmarks/results/netlab/x/summary.md`, and benchmarks/results/spark/y.txt.\n")
        self.assertEqual(
            pack_raw.cited_paths([os.path.dirname(doc)]),
            {"benchmarks/results/netlab/x/summary.md", "benchmarks/results/spark/y.txt"},
        )

    def test_a_folder_without_raw_data_is_left_alone(self):
        empty = os.path.join(self.tmp.name, "clean")
        write(os.path.join(empty, "summary.md"), b"x")
        self.assertEqual(pack_raw.pack(empty, 2_000_000, set()), (0, 0, False))
        self.assertEqual(os.listdir(empty), ["summary.md"])


if __name__ == "__main__":
    unittest.main()
