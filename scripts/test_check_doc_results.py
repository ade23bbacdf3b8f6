"""Tests of scripts/check-doc-results.py on small trees: cited results that exist pass, missing ones fail."""

import contextlib
import importlib.util
import io
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

_PATH = Path(__file__).resolve().parent / "check-doc-results.py"
_SPEC = importlib.util.spec_from_file_location("check_doc_results", _PATH)
cdr = importlib.util.module_from_spec(_SPEC)
sys.modules["check_doc_results"] = cdr
_SPEC.loader.exec_module(cdr)

FILES = [
    "benchmarks/results/kafka/e2e/summary.md",
    "benchmarks/results/kafka/e2e/summary.json",
    "benchmarks/results/veth/line11-new-2c0d76f.txt",
    "benchmarks/results/veth/line11-old-c441f4c.txt",
    "benchmarks/results/netlab/full-20261125-stop24/summary.json",
]

DOC = """# Results

The run of record: `benchmarks/results/kafka/e2e/summary.md` (`benchmarks/run kafka-e2e`), its JSON
benchmarks/results/kafka/e2e/summary.json. Raw: `benchmarks/results/veth/line11-{new-2c0d76f,old-c441f4c}.txt`;
the folder results/netlab/full-20261125-stop24/, any `benchmarks/results/netlab/full-*/summary.json`; every entry
writes `benchmarks/results/<area>/<name>/summary.md`; `benchmarks/results/jmh/java-api/summary.md` (not yet run).
Raw lines in benchmarks/results/kafka/e2e/netlab-*.txt (not in git), benchmarks/results/spark/e2e/raw/ (not committed).
"""


class CheckDocResultsTest(unittest.TestCase):
    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.root = Path(self._dir.name)
        for rel in FILES:
            self.write(rel, "x\n")
        self.write("docs/kafka.md", DOC)

    def tearDown(self):
        self._dir.cleanup()

    def write(self, rel, text):
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def run_check(self, *docs):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = cdr.main(["--root", str(self.root), *[str(self.root / d) for d in docs]])
        return rc, out.getvalue()

    def test_cited_paths_that_exist_pass(self):
        rc, out = self.run_check()
        self.assertEqual(0, rc, out)
        self.assertIn("every benchmarks/results path and relative link in 1 document", out)

    def test_a_removed_summary_fails(self):
        (self.root / "benchmarks/results/kafka/e2e/summary.md").unlink()
        rc, out = self.run_check("docs/kafka.md")
        self.assertEqual(1, rc)
        self.assertIn("docs/kafka.md:3: `benchmarks/results/kafka/e2e/summary.md` is not in the tree", out)
        self.assertNotIn("summary.json", out)

    def test_each_brace_alternative_is_checked(self):
        (self.root / "benchmarks/results/veth/line11-old-c441f4c.txt").unlink()
        rc, out = self.run_check()
        self.assertEqual(1, rc)
        self.assertIn("`benchmarks/results/veth/line11-old-c441f4c.txt`", out)
        self.assertNotIn("line11-new", out)

    def test_a_renamed_folder_fails_bare_and_as_a_glob(self):
        (self.root / "benchmarks/results/netlab/full-20261125-stop24/summary.json").rename(
            self.root / "benchmarks/results/netlab/summary.json"
        )
        rc, out = self.run_check()
        self.assertEqual(1, rc)
        self.assertIn(
            "`benchmarks/results/netlab/full-20261125-stop24/`", out
        )  # `results/` read as benchmarks/
        self.assertIn("`benchmarks/results/netlab/full-*/summary.json`", out)

    def test_patterns_and_paths_marked_untracked_are_not_citations(self):
        self.write("docs/kafka.md", DOC + "and `benchmarks/results/jmh/java-api/summary.json` too\n")
        rc, out = self.run_check()
        self.assertEqual(1, rc)
        self.assertIn("docs/kafka.md:8: `benchmarks/results/jmh/java-api/summary.json`", out)
        self.assertEqual(1, out.count("java-api"), out)  # the one marked (not yet run) passes
        self.assertNotIn("netlab-*", out)  # marked (not in git)
        self.assertNotIn("e2e/raw", out)  # marked (not committed)
        self.assertNotIn("<area>", out)

    def test_in_a_git_checkout_only_tracked_files_count(self):
        git = ["git", "-C", str(self.root), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "docs", *[f for f in FILES if "kafka" not in f]], check=True)
        rc, out = self.run_check()
        self.assertEqual(1, rc)
        self.assertIn(
            "`benchmarks/results/kafka/e2e/summary.md` is not in the tree", out
        )  # on disk, untracked

    def test_relative_links_resolve_from_the_documents_folder(self):
        self.write("docs/sampling.md", "# Sampling\n")
        self.write(
            "docs/spark.md",
            "[s](sampling.md#pre-sample), [k](kafka.md), [r](../README.md), [w](https://x.org/a.md)\n",
        )
        self.write(
            "README.md",
            "[s](docs/sampling.md#pre-sample) ![f](benchmarks/results/kafka/e2e/summary.md) [a](#top)\n",
        )
        rc, out = self.run_check("docs/spark.md", "README.md")
        self.assertEqual(0, rc, out)

    def test_a_link_copied_into_another_folder_fails(self):
        self.write("docs/sampling.md", "# Sampling\n")
        self.write(
            "README.md", "see [sampling.md](sampling.md#map-side-pre-sample-spark) and [up](../x.md)\n"
        )
        rc, out = self.run_check("README.md")
        self.assertEqual(1, rc)
        self.assertIn("README.md:1: link `sampling.md` names no file in the tree", out)
        self.assertIn("link `../x.md`", out)

    def test_braces_expand_every_alternative(self):
        self.assertEqual(
            ["a/b-x.txt", "a/b-y.txt", "a/c-x.txt", "a/c-y.txt"], cdr.expand_braces("a/{b,c}-{x,y}.txt")
        )


if __name__ == "__main__":
    unittest.main()
