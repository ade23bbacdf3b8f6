"""Tests of scripts/platforms.py (the README's supported-platforms table): run by scripts/test.sh."""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import platforms  # noqa: E402

M2 = "/m2/org/apache"


def report(module_dir, name, tests, failures=0, errors=0, class_path=""):
    d = Path(module_dir, "target", "surefire-reports")
    d.mkdir(parents=True, exist_ok=True)
    (d / f"TEST-{name}.xml").write_text(
        f'<?xml version="1.0"?><testsuite name="{name}" tests="{tests}" failures="{failures}" errors="{errors}">'
        f'<properties><property name="surefire.test.class.path" value="{class_path}"/></properties></testsuite>'
    )


def spark_cp(scala, version):
    return (
        f"/x/target/classes:{M2}/spark/spark-core_{scala}/{version}/spark-core_{scala}-{version}.jar:/y/z.jar"
    )


class PlatformsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_versions_come_from_the_test_class_path(self):
        m = self.root / "approx-spark-compat-40"
        report(m, "A", 2, class_path=spark_cp("2.13", "4.0.4"))
        report(m, "B", 3, class_path=spark_cp("2.13", "4.0.4"))
        r = platforms.maven_record(m)
        self.assertEqual(
            (r["framework"], r["version"], r["scala"], r["passed"]), ("Spark", "4.0.4", "2.13", True)
        )
        self.assertIn("2 test classes", r["ran"])

    def test_a_failure_or_no_test_is_not_passed(self):
        m = self.root / "approx-spark"
        report(m, "A", 2, errors=1, class_path=spark_cp("2.13", "4.1.3"))
        self.assertFalse(platforms.maven_record(m)["passed"])
        m2 = self.root / "approx-flink"
        report(m2, "A", 0, class_path=f"{M2}/flink/flink-runtime/2.3.0/flink-runtime-2.3.0.jar")
        r = platforms.maven_record(m2)
        self.assertEqual((r["version"], r["scala"], r["passed"]), ("2.3.0", None, False))
        self.assertIn("FAILED", platforms.render([r]))

    def test_kafka_and_kafka_flink(self):
        kafka = f"{M2}/kafka/kafka-clients/4.3.1/kafka-clients-4.3.1.jar"
        flink = f"{M2}/flink/flink-runtime/2.3.0/flink-runtime-2.3.0.jar"
        report(self.root / "approx-kafka", "A", 1, class_path=kafka)
        report(self.root / "approx-kafka-flink", "A", 1, class_path=f"{kafka}:{flink}")
        self.assertEqual(platforms.maven_record(self.root / "approx-kafka")["version"], "4.3.1")
        self.assertEqual(platforms.maven_record(self.root / "approx-kafka-flink")["version"], "4.3.1 + 2.3.0")

    def test_flink_and_kafka_compat_children(self):
        report(
            self.root / "approx-flink-compat-20",
            "A",
            2,
            class_path=f"{M2}/flink/flink-runtime/2.0.2/flink-runtime-2.0.2.jar",
        )
        report(
            self.root / "approx-kafka-compat-40",
            "A",
            3,
            class_path=f"{M2}/kafka/kafka-clients/4.0.2/kafka-clients-4.0.2.jar",
        )
        f = platforms.maven_record(self.root / "approx-flink-compat-20")
        k = platforms.maven_record(self.root / "approx-kafka-compat-40")
        self.assertEqual((f["framework"], f["version"], f["scala"]), ("Flink", "2.0.2", None))
        self.assertEqual((k["framework"], k["version"]), ("Kafka", "4.0.2"))
        self.assertIn("`approx-flink-compat-20`", f["ran"])
        self.assertIn("`approx-kafka-relay.jar`", k["jar"])

    def test_missing_reports_framework_or_mixed_class_paths_fail(self):
        with self.assertRaisesRegex(ValueError, "no target/surefire-reports"):
            platforms.maven_record(self.root / "approx-spark")
        report(self.root / "approx-spark", "A", 1, class_path="/y/z.jar")
        with self.assertRaisesRegex(ValueError, "no Spark jar"):
            platforms.maven_record(self.root / "approx-spark")
        m = self.root / "approx-spark-compat-42"
        report(m, "A", 1, class_path=spark_cp("2.13", "4.2.0"))
        report(m, "B", 1, class_path=spark_cp("2.13", "4.1.3"))
        with self.assertRaisesRegex(ValueError, "different class paths"):
            platforms.maven_record(m)
        with self.assertRaisesRegex(ValueError, "unknown module"):
            platforms.describe("approx-other")

    def test_smoke_record_parses_the_job_line(self):
        line = "[smoke] Spark 4.3.0 (Scala 2.13.17), local-cluster[2,1,1024]: 24/24 within e_max, ..."
        r = platforms.smoke_record("4.3.0", "/a/approx-spark_2.13-0.1.0-SNAPSHOT.jar", line)
        self.assertEqual((r["version"], r["scala"], r["jar"]), ("4.3.0", "2.13", "`approx-spark_2.13`"))
        r = platforms.smoke_record(
            "3.5.9",
            "/a/approx-spark_2.12-0.1.0-SNAPSHOT.jar",
            line.replace("4.3.0 (Scala 2.13", "3.5.9 (Scala 2.12"),
        )
        self.assertEqual((r["version"], r["scala"], r["jar"]), ("3.5.9", "2.12", "`approx-spark_2.12`"))
        with self.assertRaises(ValueError):
            platforms.smoke_record("4.3.0", "x.jar", "[smoke] FAILED: no packets")

    def test_render_orders_by_framework_then_newest_version(self):
        rec = lambda fw, v, src: dict(
            framework=fw, version=v, scala=None, jar="j", ran="r", passed=True, source=src
        )  # noqa: E731
        table = platforms.render(
            [rec("Flink", "2.3.0", "f"), rec("Spark", "3.5.8", "a"), rec("Spark", "4.10.0", "b")]
        )
        rows = table.splitlines()[2:]
        self.assertEqual([r.split(" | ")[1] for r in rows], ["4.10.0", "3.5.8", "2.3.0"])

    def test_check_fails_on_a_claimed_version_that_did_not_run_and_write_fixes_it(self):
        d = self.root / "records"
        platforms.write(
            platforms.smoke_record(
                "4.3.0", "approx-spark-0.1.jar", "[smoke] Spark 4.3.0 (Scala 2.13.1), local[2]: x"
            ),
            d / "s.json",
        )
        readme = self.root / "README.md"
        claimed = "| Spark | 9.9.9 | 2.13 | x | y | passed |\n"
        readme.write_text(f"intro\n{platforms.BEGIN}\n{claimed}{platforms.END}\nrest\n")
        self.assertEqual(platforms.main(["check", str(readme), "--dir", str(d)]), 1)
        self.assertEqual(platforms.main(["check", str(readme), "--dir", str(d), "--write"]), 0)
        text = readme.read_text()
        self.assertNotIn("9.9.9", text)
        self.assertIn("| Spark | 4.3.0 | 2.13 |", text)
        self.assertTrue(text.startswith("intro\n") and text.endswith(f"{platforms.END}\nrest\n"))
        self.assertEqual(platforms.main(["check", str(readme), "--dir", str(d)]), 0)
        self.assertEqual(json.loads((d / "s.json").read_text())["source"], "spark-submit-4.3.0")

    def test_no_records_or_no_markers_fail(self):
        readme = self.root / "README.md"
        readme.write_text("no table\n")
        self.assertEqual(platforms.main(["check", str(readme), "--dir", str(self.root / "none")]), 1)
        platforms.write(
            platforms.smoke_record("3.5.9", "a.jar", "[smoke] Spark 3.5.9 (Scala 2.12.18), l: x"),
            self.root / "r" / "a.json",
        )
        self.assertEqual(platforms.main(["check", str(readme), "--dir", str(self.root / "r")]), 1)


if __name__ == "__main__":
    unittest.main()
