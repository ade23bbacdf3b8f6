#!/usr/bin/env bash
# Runs a class of the approx-spark jar on this machine as spark-submit would: Spark's jars (the module's
# `provided` dependencies, resolved by Maven) + the self-contained approx-spark jar (what `--jars` ships).
# local-cluster[N,c,m] masters start N executor JVMs on this machine (Spark's test launcher: SPARK_TESTING=1).
#   approx-spark/run-example.sh <main class> [args...]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
JAR="$(ls "$HERE"/target/approx-spark-*.jar 2>/dev/null | grep -v -e original -e sources -e tests | head -n 1 || true)"
if [ -z "$JAR" ]; then
  echo "approx-spark jar missing: run 'mvn -B -q install -DskipTests' first" >&2
  exit 1
fi
CP_FILE="$HERE/target/spark-classpath.txt"
if [ ! -s "$CP_FILE" ] || [ "$HERE/pom.xml" -nt "$CP_FILE" ]; then
  # shellcheck disable=SC2086
  (cd "$HERE" && mvn -B -q -ntp ${MAVEN_ARGS:-} dependency:build-classpath -Dmdep.includeScope=provided \
      -Dmdep.outputFile="$CP_FILE" >/dev/null)
fi
SPARK_HOME_DIR="$HERE/target/spark-home"
mkdir -p "$SPARK_HOME_DIR"
OPENS="-XX:+IgnoreUnrecognizedVMOptions --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/sun.nio.cs=ALL-UNNAMED --add-opens=java.base/sun.security.action=ALL-UNNAMED --add-opens=java.base/sun.util.calendar=ALL-UNNAMED -Djdk.reflect.useDirectMethodHandle=false -Dio.netty.tryReflectionSetAccessible=true"
MAIN="$1"; shift
# shellcheck disable=SC2086
SPARK_TESTING=1 SPARK_SCALA_VERSION=2.13 exec java ${JAVA_OPTS:--Xmx2g} $OPENS \
  -Dspark.testing=true -Dspark.test.home="$SPARK_HOME_DIR" \
  -Dlog4j2.configurationFile="$HERE/src/main/resources/netapprox-log4j2.properties" \
  -cp "$JAR:$(cat "$CP_FILE")" "$MAIN" "$@"
