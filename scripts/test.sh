#!/usr/bin/env bash
# The NetApprox test command: everything CI runs (README, "What scripts/test.sh runs").
#
#   1. setup                 scripts/setup.sh: install what the machine lacks (idempotent)
#   2. format                mvn spotless:check (google-java-format, AOSP style, every module);
#                            scripts/check-native-format.sh (native/, clang-format; NETAPPROX_NATIVE_FORMAT_CHECK=0 skips it);
#                            scripts/check-python.sh (ruff format --check + ruff check, ruff.toml);
#                            scripts/check-doc-names.py (docs/architecture.md quotes only names that exist) + its tests;
#                            scripts/check-doc-results.py (every benchmarks/results path the docs cite, and every relative link, is tracked) + its tests
#   3. maven install         native library (CMake) + approx-core jar + Java tests of every module (approx-core,
#                            examples/taxi, approx-spark on local[2] and local-cluster (Spark 4.1; a subset on Spark
#                            3.5.8, 4.0.4 and 4.2.0 for Scala 2.13, approx-spark-compat/*, and 3.5.8 for 2.12,
#                            approx-spark_2.12), approx-flink on a Flink
#                            MiniCluster of 2 TaskManagers x 2 slots (a subset on Flink 2.0.2, 2.1.3, 2.2.1: approx-flink-compat/*),
#                            approx-kafka on an in-process KRaft broker with relays over loopback ATP (a subset on
#                            Kafka 4.0.2, 4.1.2, 4.2.1: approx-kafka-compat/*), approx-kafka-flink: that broker + a relay + a Flink
#                            MiniCluster)
#                            + native GoogleTest suites
#                            and atp-perf end-to-end tests (ctest, in the Maven test phase) + Jazzer fuzzing of the
#                            control-plane frame decoder for JAVA_FUZZ_SECONDS (approx-core execution control-fuzz)
#   4. approx-core jar       ships META-INF/native/linux-{x86_64,aarch64}/libnetapprox.so, each portable (needs only
#                            libc/libm/libpthread/libdl, glibc <= 2.17, exports only the C API + JNI entry points)
#                            and passing its C test (capi_smoke; aarch64 under qemu-user)
#   5. approx-spark jars     the spark-submit --jars jars (approx-spark, Scala 2.13; approx-spark_2.12): self-contained,
#                            and only the plugin (no examples); a real spark-submit of the 2.12 jar on the pinned
#                            pyspark 3.5.9 wheel and of the 2.13 jar on pyspark 4.3.0, 4.2.1, 4.1.3, 4.0.5 (spark-submit-smoke.sh,
#                            local-cluster[2,1,1024]); README's supported-platforms table = what ran (platforms.py);
#                            approx-kafka-relay.jar runs (--version) and refuses bad arguments (exit 2);
#                            approx-kafka-flink's jar holds ApproxKafkaSource and no Flink/Kafka classes
#   6. approx-flink jar      the Flink job-jar / lib/ jar: self-contained, no Flink classes, only the plugin
#   7. network lab           benchmarks/netlab/test_netlab.py (lab tests skip without root / namespaces), the
#                            benchmark summarizers' tests and benchmarks/test_benchrun.py (benchmarks/run entries)
#   8. ASan + UBSan          second native build in native/build-asan, ctest on it
#   9. ns-3 simulation       benchmarks/sim/run.sh ci: pinned ns-3 wheel into build/sim-ns3, atp-sim build, its
#                            tests, the smoke preset and a check of its summary.json (docs/simulation.md)
#  10. libFuzzer             native/build-fuzz (clang), fuzz_datagram for FUZZ_SECONDS (default 60)
#  11. PyTorch               scripts/torch-test.sh: python/netapprox-torch installed with pip, its tests on 3 ranks
#                            (CPU torch wheel, pinned, into build/torch-<version>; docs/pytorch.md)
#
# Exits non-zero on the first failure. Environment knobs (all optional):
#   FUZZ_SECONDS=60                  libFuzzer run time
#   JAVA_FUZZ_SECONDS=30             Jazzer run time (control-plane frame decoder)
#   NETAPPROX_JOBS=2                 parallel build/test jobs for the sanitizer and fuzz builds
#   NETAPPROX_NATIVE_FORMAT_CHECK=0  skip the native/ format check (clang-format-14; on by default)
#   SKIP_SETUP=1                     do not run scripts/setup.sh
#   MAVEN_ARGS="..."                 extra arguments for the Maven runs (e.g. -o)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
JAVA_FUZZ_SECONDS="${JAVA_FUZZ_SECONDS:-30}"
JOBS="${NETAPPROX_JOBS:-2}"
CTEST_TIMEOUT="${CTEST_TIMEOUT:-900}"

STEP="start"
T0=$SECONDS
TIMES=()
log() { echo "[test] $*"; }
begin() { STEP="$1"; STEP_T0=$SECONDS; echo; log "=== $1"; }
end() { local dt=$((SECONDS - STEP_T0)); TIMES+=("$STEP ${dt}s"); log "=== $STEP: ok (${dt}s)"; }
on_exit() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    echo
    echo "NetApprox tests: FAILED in step '$STEP' (exit $rc) after $((SECONDS - T0))s"
  fi
}
trap on_exit EXIT

# ---------------------------------------------------------------------------------------------------------
begin "setup"
if [ "${SKIP_SETUP:-0}" = "1" ]; then
  log "SKIP_SETUP=1: not running scripts/setup.sh"
else
  bash "$ROOT/scripts/setup.sh"
fi
end

# ---------------------------------------------------------------------------------------------------------
begin "format (spotless:check, native clang-format, ruff, doc names)"
# shellcheck disable=SC2086
mvn -B -ntp ${MAVEN_ARGS:-} spotless:check
if [ "${NETAPPROX_NATIVE_FORMAT_CHECK:-1}" = "1" ]; then
  bash "$ROOT/scripts/check-native-format.sh"
else
  log "native format check skipped (NETAPPROX_NATIVE_FORMAT_CHECK=0)"
fi
bash "$ROOT/scripts/check-python.sh"
# every code name docs/architecture.md quotes still exists in the tree (the checker's own tests first)
python3 "$ROOT/scripts/test_check_doc_names.py"
python3 "$ROOT/scripts/check-doc-names.py"
# every benchmarks/results path the README and docs cite is in the tree (the checker's own tests first)
python3 "$ROOT/scripts/test_check_doc_results.py"
python3 "$ROOT/scripts/check-doc-results.py"
end

# ---------------------------------------------------------------------------------------------------------
begin "maven install (native build, jar, Java tests, native ctest)"
# shellcheck disable=SC2086
mvn -B -ntp ${MAVEN_ARGS:-} -Dfuzz.java.duration="${JAVA_FUZZ_SECONDS}s" install
# one record per module of what ran (versions from the test class path, result from surefire's reports), for the
# README's "Supported platforms and versions" table (checked after the spark-submit smokes)
rm -rf "$ROOT/target/platforms"
python3 "$ROOT/scripts/platforms.py" record-maven --dir "$ROOT/target/platforms" \
  approx-spark approx-spark_2.12 approx-spark-compat/approx-spark-compat-* approx-flink approx-flink-compat/approx-flink-compat-* \
  approx-kafka approx-kafka-compat/approx-kafka-compat-* approx-kafka-flink
end

# ---------------------------------------------------------------------------------------------------------
begin "jar contents"
JAR=""
for j in "$ROOT"/approx-core/target/approx-core-*.jar; do
  case "$j" in *-sources.jar|*-javadoc.jar|*-tests.jar) continue ;; esac
  [ -f "$j" ] && JAR="$j"
done
if [ -z "$JAR" ]; then
  log "ERROR: no approx-core jar in approx-core/target" >&2
  exit 1
fi
# The portable libraries (native/portable/build.sh; docs/architecture.md, "The shipped native library"), one per
# platform: each needs only libc/libm/libpthread/libdl/ld-linux, no glibc symbol newer than 2.17, exports only the C
# API and JNI_OnLoad/JNI_OnUnload (native/portable/check-lib.sh), and passes its C test (capi_smoke, built with the
# same toolchain): linux-x86_64 here, linux-aarch64 under qemu-user. The Java tests of the Maven step loaded the
# linux-x86_64 one (target/classes, as in this jar).
SO_ENTRY="META-INF/native/linux-x86_64/libnetapprox.so"
SO_ARCHES=(x86_64 aarch64)
# No "| grep -q" under pipefail: grep exits at the first match and the writer's SIGPIPE fails the pipeline.
JAR_LISTING="$(unzip -Z1 "$JAR")"
SO_TMP="$ROOT/approx-core/target/jar-native-check"  # kept on failure for a look; mvn clean removes it
rm -rf "$SO_TMP"
QEMU_AARCH64="$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)"
AARCH64_SYSROOT=/usr/aarch64-linux-gnu
for arch in "${SO_ARCHES[@]}"; do
  entry="META-INF/native/linux-$arch/libnetapprox.so"
  if ! grep -qx "$entry" <<<"$JAR_LISTING"; then
    log "ERROR: $JAR does not contain $entry" >&2
    unzip -l "$JAR" >&2
    exit 1
  fi
  unzip -q -o "$JAR" "$entry" -d "$SO_TMP"
  lib="$SO_TMP/$entry"
  bash "$ROOT/native/portable/check-lib.sh" "$lib" "$arch"
  smoke="$ROOT/approx-core/target/native-portable-$arch/capi_smoke"
  if [ ! -x "$smoke" ]; then
    log "ERROR: $smoke was not built (native/portable/build.sh, approx-core's Maven build)" >&2
    exit 1
  fi
  # Next to the jar's library: capi_smoke finds it through its RUNPATH $ORIGIN.
  cp "$smoke" "$(dirname "$lib")/capi_smoke"
  case "$arch" in
    x86_64)
      # The library loads on this machine: every NEEDED library resolves.
      if grep -q 'not found' <<<"$(ldd "$lib")"; then
        log "ERROR: unresolved shared-library dependencies of the linux-x86_64 libnetapprox.so:" >&2
        ldd "$lib" >&2
        exit 1
      fi
      "$(dirname "$lib")/capi_smoke"
      ;;
    aarch64)
      if [ -n "$QEMU_AARCH64" ] && [ -e "$AARCH64_SYSROOT/lib/ld-linux-aarch64.so.1" ]; then
        log "linux-aarch64: capi_smoke under $(basename "$QEMU_AARCH64") -L $AARCH64_SYSROOT"
        "$QEMU_AARCH64" -L "$AARCH64_SYSROOT" "$(dirname "$lib")/capi_smoke"
      else
        log "WARNING: linux-aarch64 capi_smoke NOT run: needs qemu-user-static and libc6-arm64-cross (scripts/setup.sh)"
      fi
      ;;
  esac
  log "$(basename "$JAR") contains $entry: portable, C test passed"
done
rm -rf "$SO_TMP"
end

# ---------------------------------------------------------------------------------------------------------
# approx-spark: its tests (local[2] and local-cluster[2,1,1024]) ran in the Maven step; check the one jar users
# pass to spark-submit --jars: self-contained (native library, approx-core, relocated commons-math3), no Spark,
# Scala or Netty inside (those come from Spark), and nothing but the plugin (the examples live in examples/).
# Both builds of the plugin: approx-spark (Scala 2.13: Spark 4.x, and 3.5 for 2.13) and approx-spark_2.12 (Spark
# 3.5 for Scala 2.12, the default distribution and the PySpark 3.5 wheel), the same sources.
begin "approx-spark jar contents (Scala 2.13 and 2.12 builds)"
# module directory:artifact id (the 2.13 build lives in approx-spark/)
for SPARK_BUILD in approx-spark:approx-spark_2.13 approx-spark_2.12:approx-spark_2.12; do
  SPARK_MODULE="${SPARK_BUILD%%:*}" SPARK_ARTIFACT="${SPARK_BUILD#*:}"
  SPARK_JAR=""
  for j in "$ROOT/$SPARK_MODULE/target/$SPARK_ARTIFACT"-*.jar; do
    case "$j" in *-sources.jar|*-javadoc.jar|*-tests.jar|*/original-*) continue ;; esac
    [ -f "$j" ] && SPARK_JAR="$j"
  done
  if [ -z "$SPARK_JAR" ]; then
    log "ERROR: no $SPARK_MODULE jar in $SPARK_MODULE/target" >&2
    exit 1
  fi
  SPARK_LISTING="$(unzip -Z1 "$SPARK_JAR")"
  for entry in "$SO_ENTRY" "${SO_ENTRY/x86_64/aarch64}" io/netapprox/spark/ApproxShuffleManager.class io/netapprox/core/engine/NativeEngine.class \
               io/netapprox/shaded/commons/math3/distribution/TDistribution.class; do
    if ! grep -qx "$entry" <<<"$SPARK_LISTING"; then
      log "ERROR: $SPARK_JAR lacks $entry" >&2
      exit 1
    fi
  done
  if grep -qE '^(org/apache/spark/|scala/|io/netty/|org/apache/commons/math3/)' <<<"$SPARK_LISTING"; then
    log "ERROR: $SPARK_JAR bundles Spark, Scala, Netty or unrelocated commons-math3 classes" >&2
    exit 1
  fi
  # Only the plugin: our classes are the plugin's, approx-core's and the relocated library's; no example
  # application, generator or logging configuration.
  NOT_PLUGIN="$(grep -E '^io/netapprox/.+\.class$' <<<"$SPARK_LISTING" \
    | grep -vE '^io/netapprox/(spark|core|shaded)/' || true)"
  NOT_PLUGIN+="$(grep -E '(^|/)(examples/|[^/]*log4j2[^/]*\.properties$)' <<<"$SPARK_LISTING" || true)"
  if [ -n "$NOT_PLUGIN" ]; then
    log "ERROR: $SPARK_JAR carries more than the plugin:" >&2
    head -n 20 <<<"$NOT_PLUGIN" >&2
    exit 1
  fi
  log "$(basename "$SPARK_JAR") is self-contained ($(wc -l <<<"$SPARK_LISTING") entries, libnetapprox.so inside)"
done
end

# A real spark-submit of the Scala 2.12 jar on the PySpark 3.5 wheel's Spark (Scala 2.12), and of the 2.13 jar on the
# newest PySpark of every Spark 4 line, local-cluster[2,1,1024]: the pass-through (the plain query equals the
# driver's own counts and sums) and SQL WITH ERROR checked against Spark SQL's exact answer, the shuffle over ATP
# (scripts/spark-submit-smoke.sh; skips with a message where python3/pip are missing).
begin "spark-submit: PySpark 3.5 (Scala 2.12) + approx-spark_2.12 jar, PySpark 4.0-4.3 (Scala 2.13) + approx-spark_2.13 jar"
bash "$ROOT/scripts/spark-submit-smoke.sh" 3.5.9 "$ROOT/approx-spark_2.12/target/approx-spark_2.12-0.1.0-SNAPSHOT.jar"
# every Spark 4 line a PySpark wheel exists for, with the one 2.13 jar (Spark 4.1 is what it is built against)
for v in 4.3.0 4.2.1 4.1.3 4.0.5; do
  bash "$ROOT/scripts/spark-submit-smoke.sh" "$v" "$ROOT/approx-spark/target/approx-spark_2.13-0.1.0-SNAPSHOT.jar"
done
# README's "Supported platforms and versions" is exactly what ran (scripts/platforms.py, its tests first)
python3 "$ROOT/scripts/test_platforms.py"
python3 "$ROOT/scripts/platforms.py" check --dir "$ROOT/target/platforms" "$ROOT/README.md"
end

# The Kafka relay as users run it: java -jar approx-kafka-relay.jar (its behaviour is tested in the Maven step;
# here: the shaded jar starts, and a missing required option is exit 2 naming it).
begin "approx-kafka relay jar"
RELAY_JAR="$ROOT/approx-kafka/target/approx-kafka-relay.jar"
java -jar "$RELAY_JAR" --version
set +e
RELAY_ERR="$(java -jar "$RELAY_JAR" --listen 127.0.0.1:0 2>&1)"
RELAY_RC=$?
set -e
if [ "$RELAY_RC" -ne 2 ] || ! grep -q -- "--bootstrap" <<<"$RELAY_ERR"; then
  log "ERROR: approx-kafka-relay.jar without --bootstrap exited $RELAY_RC: $RELAY_ERR" >&2
  exit 1
fi
log "$(basename "$RELAY_JAR") runs ($(unzip -Z1 "$RELAY_JAR" | wc -l) entries)"
# approx-kafka-flink (the Flink source over the approximate consumer): its jar holds the source, nothing of Flink
KF_JAR="$ROOT/approx-kafka-flink/target/approx-kafka-flink-0.1.0-SNAPSHOT.jar"
KF_LISTING="$(unzip -Z1 "$KF_JAR")"
if ! grep -qx io/netapprox/kafka/flink/ApproxKafkaSource.class <<<"$KF_LISTING" \
   || grep -qE '^org/apache/(flink|kafka)/' <<<"$KF_LISTING"; then
  log "ERROR: $KF_JAR lacks ApproxKafkaSource or bundles Flink/Kafka classes" >&2
  exit 1
fi
log "$(basename "$KF_JAR") holds the Flink source ($(wc -l <<<"$KF_LISTING") entries)"
end

# approx-flink: its tests (MiniCluster, 2 TaskManagers x 2 slots, ATP between them) ran in the Maven step; check
# the jar a Flink job bundles (or that goes to Flink's lib/): self-contained (native library, approx-core, Netty,
# relocated commons-math3), no Flink classes (Flink provides them), and nothing but the plugin.
begin "approx-flink jar contents"
FLINK_JAR=""
for j in "$ROOT"/approx-flink/target/approx-flink-*.jar; do
  case "$j" in *-sources.jar|*-javadoc.jar|*-tests.jar|*/original-*) continue ;; esac
  [ -f "$j" ] && FLINK_JAR="$j"
done
if [ -z "$FLINK_JAR" ]; then
  log "ERROR: no approx-flink jar in approx-flink/target" >&2
  exit 1
fi
FLINK_LISTING="$(unzip -Z1 "$FLINK_JAR")"
for entry in "$SO_ENTRY" "${SO_ENTRY/x86_64/aarch64}" io/netapprox/flink/Approx.class io/netapprox/core/engine/NativeEngine.class \
             io/netty/buffer/ByteBuf.class io/netapprox/shaded/commons/math3/distribution/TDistribution.class; do
  if ! grep -qx "$entry" <<<"$FLINK_LISTING"; then
    log "ERROR: $FLINK_JAR lacks $entry" >&2
    exit 1
  fi
done
if grep -qE '^(org/apache/flink/|org/apache/commons/math3/|org/slf4j/)' <<<"$FLINK_LISTING"; then
  log "ERROR: $FLINK_JAR bundles Flink, slf4j or unrelocated commons-math3 classes" >&2
  exit 1
fi
NOT_PLUGIN="$(grep -E '^io/netapprox/.+\.class$' <<<"$FLINK_LISTING" \
  | grep -vE '^io/netapprox/(flink|core|shaded)/' || true)"
if [ -n "$NOT_PLUGIN" ]; then
  log "ERROR: $FLINK_JAR carries more than the plugin:" >&2
  head -n 20 <<<"$NOT_PLUGIN" >&2
  exit 1
fi
log "$(basename "$FLINK_JAR") is self-contained ($(wc -l <<<"$FLINK_LISTING") entries, libnetapprox.so inside)"
end

# ---------------------------------------------------------------------------------------------------------
# The network lab (namespaces, veth, bridge, HTB/bfifo/u32): plan checks always run; the lab tests skip with a
# message where root or network namespaces are unavailable.
begin "network lab smoke test (benchmarks/netlab)"
python3 "$ROOT/benchmarks/netlab/test_netlab.py" -v
# the lab-cluster helper the Spark and Flink lab runners share, and the runners' summaries
PYTHONPATH="$ROOT/benchmarks/netlab" python3 "$ROOT/benchmarks/netlab/test_labcluster.py" -v
# the Spark benchmarks' summarisers: the lab scale runner's, the pass-through CPU verdict's and the e2e summary's
PYTHONPATH="$ROOT/benchmarks/netlab" python3 "$ROOT/benchmarks/spark/netlab/test_scale.py" -v
python3 "$ROOT/benchmarks/spark/test_passthrough_cpu.py" -v
# the packer of raw run data (docs/benchmarks.md)
python3 "$ROOT/benchmarks/test_pack_raw.py" -v
# benchmarks/run (one entry per benchmark: metadata, --dry-run/--quick plumbing, summaries; no harness runs) and the
# analysis its summaries share (netlab.stats: pooling, bootstrap intervals, noise, A/B; seeded)
python3 "$ROOT/benchmarks/test_benchrun.py" -v
PYTHONPATH="$ROOT/benchmarks/netlab" python3 "$ROOT/benchmarks/netlab/test_stats.py" -v
# the Kafka and Flink end-to-end lab benchmarks' summary writers (issue 32)
PYTHONPATH="$ROOT/benchmarks/netlab" python3 "$ROOT/benchmarks/kafka/test_run.py" -v
PYTHONPATH="$ROOT/benchmarks/netlab" python3 "$ROOT/benchmarks/flink/netlab/test_summary.py" -v
# the Spark end-to-end benchmark's summary writer (issue 31)
python3 "$ROOT/benchmarks/spark/test_e2e_summary.py" -v
# the PyTorch lab benchmark's summary writer (issue 37)
python3 "$ROOT/benchmarks/torch/test_summary.py" -v
end

# ---------------------------------------------------------------------------------------------------------
begin "native tests under AddressSanitizer + UBSan (native/build-asan)"
ASAN_DIR="$ROOT/native/build-asan"
cmake -S "$ROOT/native" -B "$ASAN_DIR" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNETAPPROX_SANITIZE=ON -DNETAPPROX_TESTS=ON -DNETAPPROX_FUZZ=OFF
cmake --build "$ASAN_DIR" --parallel "$JOBS"
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
  ctest --test-dir "$ASAN_DIR" --output-on-failure --no-tests=error --timeout "$CTEST_TIMEOUT" -j "$JOBS"
end

# ---------------------------------------------------------------------------------------------------------
# The ns-3 simulation driving the real ATP core (docs/simulation.md): the adapter's tests and the smoke preset.
begin "ns-3 simulation: tests + smoke (benchmarks/sim)"
bash "$ROOT/benchmarks/sim/run.sh" ci
end

# ---------------------------------------------------------------------------------------------------------
begin "libFuzzer: fuzz_datagram for ${FUZZ_SECONDS}s (native/build-fuzz)"
FUZZ_DIR="$ROOT/native/build-fuzz"
CC=clang CXX=clang++ cmake -S "$ROOT/native" -B "$FUZZ_DIR" -G Ninja \
  -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNETAPPROX_FUZZ=ON -DNETAPPROX_TESTS=OFF -DNETAPPROX_SANITIZE=OFF
cmake --build "$FUZZ_DIR" --parallel "$JOBS" --target fuzz_datagram
# Working corpus in the build dir (libFuzzer adds new inputs to the first directory); the seeds committed in
# native/fuzz/corpus are read but never modified.
CORPUS="$FUZZ_DIR/corpus"
mkdir -p "$CORPUS" "$FUZZ_DIR/artifacts"
FUZZ_LOG="$FUZZ_DIR/fuzz.log"
(
  cd "$FUZZ_DIR"
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    ./fuzz_datagram -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$FUZZ_DIR/artifacts/" "$CORPUS" "$ROOT/native/fuzz/corpus"
) </dev/null >"$FUZZ_LOG" 2>&1 || {
  rc=$?
  tail -n 60 "$FUZZ_LOG" >&2
  log "ERROR: fuzz_datagram failed (exit $rc); full log $FUZZ_LOG, artifacts in $FUZZ_DIR/artifacts/" >&2
  exit "$rc"
}
tail -n 20 "$FUZZ_LOG"
EXECS="$(sed -n 's/^stat::number_of_executed_units: *//p' "$FUZZ_LOG" | tail -n 1)"
FUZZ_SUMMARY="fuzz: ${EXECS:-?} execs in ${FUZZ_SECONDS}s, no crash"
end

# ---------------------------------------------------------------------------------------------------------
begin "PyTorch: python/netapprox-torch (pip install from the repo, 3-rank all-reduce and DDP tests)"
bash "$ROOT/scripts/torch-test.sh"
end

# ---------------------------------------------------------------------------------------------------------
STEP="summary"
echo
log "step times: $(IFS=';'; echo "${TIMES[*]}")"
echo "NetApprox tests: PASSED (format, maven install + Java tests + native ctest, jars checked (core, spark, flink), network lab, ASan/UBSan ctest, ns-3 simulation tests + smoke, ${FUZZ_SUMMARY}, PyTorch package) in $((SECONDS - T0))s"
