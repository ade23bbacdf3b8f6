"""Tests of scripts/check-doc-names.py on small trees: names that exist pass, removed ones fail, non-code is ignored."""

import contextlib
import importlib.util
import io
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

_PATH = Path(__file__).resolve().parent / "check-doc-names.py"
_SPEC = importlib.util.spec_from_file_location("check_doc_names", _PATH)
cdn = importlib.util.module_from_spec(_SPEC)
sys.modules["check_doc_names"] = cdn
_SPEC.loader.exec_module(cdn)

SOURCES = {
    "approx-core/src/main/java/io/netapprox/core/transport/OutgoingTransfer.java": """
        package io.netapprox.core.transport;
        public final class OutgoingTransfer {
            static final String KEY = "spark.approx.dscp";
            public OutgoingJob startJob(JobSpec spec) { return null; }
            static final class Handler { void onDataRequest() {} }
        }
        """,
    "approx-core/src/main/java/io/netapprox/core/engine/SendResult.java": """
        package io.netapprox.core.engine;
        public enum SendResult { ACCEPTED, NOT_NEEDED }
        """,
    "native/include/netapprox/netapprox.h": """
        typedef struct na_config { unsigned char dscp_by_class[8]; } na_config;
        int na_job_start(void* eng);
        """,
    "native/src/core/engine.hpp": """
        namespace netapprox::atp {
        struct Transmit { unsigned char dscp; };
        class Engine { public: int start_job(); bool poll_transmit(); };
        }
        """,
    "native/src/core/engine.cpp": "int netapprox::atp::Engine::start_job() { return IP_TOS; }\n",
}

DOC = """
    # Architecture

    ```
     approx-core   OutgoingTransfer, SendResult    native/src/core/engine.cpp
    ```

    `OutgoingTransfer.startJob(spec)` returns; `SendResult.NOT_NEEDED`; `Handler.onDataRequest`;
    `na_job_start` -> `atp::Engine::start_job` (`native/src/core/engine.cpp`, `src/core/engine.hpp`,
    `engine.hpp/.cpp`), `na_config.dscp_by_class`, `atp::Transmit::dscp`, `IP_TOS`, `spark.approx.dscp`,
    `netapprox::atp::Engine::poll_transmit`, the package `io.netapprox.core.transport`.
    """


class CheckDocNamesTest(unittest.TestCase):
    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.root = Path(self._dir.name)
        for rel, text in SOURCES.items():
            self.write(rel, text)
        self.write("docs/architecture.md", DOC)

    def tearDown(self):
        self._dir.cleanup()

    def write(self, rel, text):
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))

    def run_check(self, doc=None):
        out = io.StringIO()
        args = ["--root", str(self.root)] + ([str(self.root / doc)] if doc else [])
        with contextlib.redirect_stdout(out):
            rc = cdn.main(args)
        return rc, out.getvalue()

    def test_names_that_exist_pass(self):
        rc, out = self.run_check()
        self.assertEqual(0, rc, out)
        self.assertIn("every code name", out)

    def test_a_removed_class_fails(self):
        (self.root / next(iter(SOURCES))).unlink()  # OutgoingTransfer.java
        rc, out = self.run_check()
        self.assertEqual(1, rc)
        self.assertIn("`OutgoingTransfer`", out)  # in the diagram
        self.assertIn("`OutgoingTransfer.startJob`", out)
        self.assertIn("`Handler.onDataRequest`", out)

    def test_a_renamed_method_fails_naming_its_owner(self):
        self.write(
            "docs/architecture.md", DOC.replace("`na_job_start`", "`na_job_begin`") + "\n`Engine::start`\n"
        )
        rc, out = self.run_check()
        self.assertEqual(1, rc)
        self.assertIn("`na_job_begin`: not found", out)
        self.assertIn("`Engine::start`: start not found in Engine's files", out)
        self.assertNotIn("start_job", out)

    def test_a_member_of_another_class_fails(self):
        # NOT_NEEDED exists, but not in OutgoingTransfer's file
        self.write("docs/architecture.md", "`OutgoingTransfer.NOT_NEEDED`\n")
        rc, out = self.run_check()
        self.assertEqual(1, rc)
        self.assertIn("NOT_NEEDED not found in OutgoingTransfer's files", out)

    def test_a_removed_file_or_key_fails(self):
        (self.root / "native/src/core/engine.cpp").unlink()
        self.write("docs/architecture.md", DOC.replace("spark.approx.dscp", "spark.approx.tos"))
        rc, out = self.run_check()
        self.assertEqual(1, rc)
        self.assertIn("`native/src/core/engine.cpp`: no such file or directory", out)
        self.assertIn("`engine.cpp`: no such file", out)
        self.assertIn("`spark.approx.tos`", out)

    def test_the_checker_and_its_tests_are_not_sources(self):
        self.write("scripts/test_check_doc_names.py", "QuotedOnlyHere = 1\n")
        self.write("scripts/check-doc-names.py", "QuotedOnlyHere = 1\n")
        self.write("docs/architecture.md", "`QuotedOnlyHere`\n")
        rc, out = self.run_check()
        self.assertEqual(1, rc)
        self.assertIn("`QuotedOnlyHere`: not found", out)

    def test_a_name_declared_twice_finds_its_member_on_one_line(self):
        self.write(
            "approx-core/src/test/java/EarlyDataTest.java", "class EarlyDataTest { void pushed() {} }\n"
        )
        self.write("native/tests/early_data_test.cpp", "TEST(EarlyDataTest, ASmallJobNeedsOneRoundTrip) {}\n")
        self.write(
            "docs/architecture.md", "`EarlyDataTest.ASmallJobNeedsOneRoundTrip`, `EarlyDataTest.pushed`\n"
        )
        self.assertEqual(0, self.run_check()[0])
        self.write("docs/architecture.md", "`EarlyDataTest.ASmallJobIsGone`\n")
        self.assertEqual(1, self.run_check()[0])

    def test_a_span_that_wraps_a_line_is_one_span(self):
        self.write("docs/architecture.md", "text `atp::Engine::\nstart_job` and `Gone\nAway`\n")
        rc, out = self.run_check()
        self.assertEqual(1, rc)
        self.assertIn("`Gone`", out)
        self.assertIn("`Away`", out)
        self.assertNotIn("start_job", out)

    def test_non_code_is_ignored(self):
        self.write(
            "docs/architecture.md",
            """
            `auto`, `paper`, `tcp`, `spark.approx.*`, `approx.*`, `N_g`, `MSR_g`, `e_max`, `target_g`,
            `ceil(MSR_g * N_g)`, `(k-1)/8 < TLR <= k/8`, `(i + 0.5) / target_g`, `dscp << 2`, `TLR`, `DONE`,
            `--data-plane`, `-Dio.netapprox.native.disable=true`, `approx-core/target/classes`,
            `build/native-portable/`, `META-INF/native/linux-x86_64/libnetapprox.so`, `libgcc_s.so.1`,
            `mvn install`, `0.95`, `libnetapprox@<package>@...`, `linux-aarch64/`

            ```
             words in a diagram: Linux UDP driver, DSCP-marked, recvmmsg/sendmmsg, e_max -> MSR
            ```
            """,
        )
        rc, out = self.run_check()
        self.assertEqual(0, rc, out)

    def test_names_is_what_is_checked(self):
        chains, paths = cdn.names_in("GroupSpec(g, N_g, MSR_g) and Map<K, V>.get", False)
        self.assertEqual(["GroupSpec", "Map.get"], chains)
        self.assertEqual([], paths)
        self.assertEqual(["slack.hpp", "slack.cpp"], cdn.path_candidates("slack.hpp/.cpp"))


if __name__ == "__main__":
    unittest.main()
