"""The PySpark job of scripts/spark-submit-smoke.sh: SQL WITH ERROR through spark-submit.

Run by spark-submit with the plugin jar (--jars), ApproxShuffleManager and ApproxExtensions on a
local-cluster (two executor JVMs). First the pass-through: the plain query (no WITH ERROR) shuffles through
ApproxShuffleManager, which hands it to Spark's sort shuffle; its counts and sums must equal what the driver
computes from the rows themselves (no shuffle). Then it checks the approximate answer against Spark SQL's exact one (counts and
populations exactly, avg/sum/median within e_max in >= 90% of the checks, the median from a real sample) and
that the approximate path ran (with the default exact partials avg/sum/count alone would be Spark's own
aggregation; the median is sampled): the shuffle's "ATP packets sent" accumulator (from Spark's status REST API,
what the UI shows) is > 0 and tasks ran in both executors. Prints one summary line; exit 1 on a
failed check.
"""

import json
import sys
import urllib.request

from pyspark.sql import SparkSession

E_MAX = 0.05
GROUPS = 8


def fail(msg):
    print(f"[smoke] FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def rest(spark, path):
    url = f"{spark.sparkContext.uiWebUrl}/api/v1/applications/{spark.sparkContext.applicationId}/{path}"
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def main():
    spark = SparkSession.builder.appName("netapprox-spark-submit-smoke").getOrCreate()
    # 400k rows in 4 partitions, 8 groups, values from a hash of the id (deterministic)
    spark.range(0, 400_000, 1, 4).selectExpr(
        f"cast(id % {GROUPS} as int) AS g",
        "cast(pmod(xxhash64(id), 10000) as double) / 100.0 AS x",
    ).createOrReplaceTempView("t")
    query = "SELECT g, avg(x), sum(x), count(*), median(x) FROM t GROUP BY g"
    exact = {r[0]: r for r in spark.sql(query).collect()}
    passed = pass_through(spark, exact)
    rows = spark.sql(f"{query} WITH ERROR {E_MAX} CONFIDENCE 0.95 REPEATABLE (7)").collect()
    approx = {(r["group"], r["aggregate"]): r for r in rows}
    if len(exact) != GROUPS or len(approx) != 4 * GROUPS:
        fail(f"{len(exact)} exact groups, {len(approx)} approximate rows (expected {GROUPS}, {4 * GROUPS})")
    checks = within = sampled = population = 0
    for g, x in exact.items():
        count = approx[(f"g={g}", "count")]
        if int(count["estimate"]) != x[3] or count["population_rows"] != x[3]:
            fail(f"g={g}: count {count['estimate']} / population {count['population_rows']}, exact {x[3]}")
        for agg, truth in (("avg(x)", x[1]), ("sum(x)", x[2]), ("median(x)", x[4])):
            a = approx[(f"g={g}", agg)]
            if not a["approximate"] or a["e_max"] != E_MAX:
                fail(f"g={g} {agg}: approximate={a['approximate']} e_max={a['e_max']}")
            checks += 1
            within += abs(a["estimate"] - truth) <= E_MAX * abs(truth)
        median = approx[(f"g={g}", "median(x)")]
        sampled += median["sample_rows"]
        population += median["population_rows"]
    if within < 0.9 * checks:
        fail(f"{within}/{checks} within e_max")
    if sampled >= population:
        fail(f"the median sampled {sampled} of {population} rows: not a sample")
    packets = 0
    for stage in rest(spark, "stages?details=false"):
        for acc in stage.get("accumulatorUpdates", []):
            if acc["name"].startswith("NetApprox shuffle ") and acc["name"].endswith(": ATP packets sent"):
                packets += int(acc["value"])
    busy = [e["id"] for e in rest(spark, "executors") if e["id"] != "driver" and e["totalTasks"] > 0]
    if packets <= 0:
        fail("no 'ATP packets sent' on any stage: the approximate shuffle did not pull over ATP")
    if len(busy) < 2:
        fail(f"tasks ran on executors {busy}, expected both")
    print(
        f"[smoke] Spark {spark.version} (Scala {scala_version(spark)}), {spark.sparkContext.master}:"
        f" pass-through {passed} groups exact, {within}/{checks} within e_max, {100.0 * sampled / population:.1f}% of rows sampled (median),"
        f" {packets} ATP packets sent, tasks on executors {sorted(busy)}"
    )
    spark.stop()


def pass_through(spark, exact):
    """The plain query's counts and sums against the driver's own, from the rows (no shuffle)."""
    counts, sums = {}, {}
    for r in spark.table("t").toLocalIterator():
        counts[r["g"]] = counts.get(r["g"], 0) + 1
        sums[r["g"]] = sums.get(r["g"], 0.0) + r["x"]
    if sorted(exact) != sorted(counts):
        fail(f"pass-through: groups {sorted(exact)}, the rows have {sorted(counts)}")
    for g, x in exact.items():
        if x[3] != counts[g] or abs(x[2] - sums[g]) > 1e-9 * abs(sums[g]):
            fail(f"pass-through g={g}: count {x[3]} sum {x[2]!r}, the rows give {counts[g]} / {sums[g]!r}")
    return len(exact)


def scala_version(spark):
    return spark.sparkContext._jvm.scala.util.Properties.versionNumberString()


if __name__ == "__main__":
    main()
