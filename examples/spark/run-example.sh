#!/usr/bin/env bash
# Runs a class of the Spark example application on this machine as spark-submit would: Spark's jars
# (target/spark-classpath.txt, written by the build), the self-contained approx-spark plugin jar (what `--jars`
# ships) and the application jar (examples and taxi generator).
# local-cluster[N,c,m] masters start N executor JVMs on this machine (Spark's test launcher: SPARK_TESTING=1).
#   examples/spark/run-example.sh <main class> [args...]     e.g. io.netapprox.examples.spark.TaxiExample
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
jar_in() { # the module's main jar (not the shade plugin's original-*, sources or tests jars)
  ls "$1"/target/"$2"-*.jar 2>/dev/null | grep -v -e '/original-' -e sources -e tests | head -n 1 || true
}
PLUGIN_JAR="$(jar_in "$ROOT/approx-spark" approx-spark_2.13)"
APP_JAR="$(jar_in "$HERE" examples-spark)"
CP_FILE="$HERE/target/spark-classpath.txt"
if [ -z "$PLUGIN_JAR" ] || [ -z "$APP_JAR" ] || [ ! -s "$CP_FILE" ]; then
  echo "approx-spark or example jars missing: run 'mvn -B -q install -DskipTests' at the repository root first" >&2
  exit 1
fi
SPARK_HOME_DIR="$HERE/target/spark-home"
mkdir -p "$SPARK_HOME_DIR"
OPENS="-XX:+IgnoreUnrecognizedVMOptions --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/sun.nio.cs=ALL-UNNAMED --add-opens=java.base/sun.security.action=ALL-UNNAMED --add-opens=java.base/sun.util.calendar=ALL-UNNAMED -Djdk.reflect.useDirectMethodHandle=false -Dio.netty.tryReflectionSetAccessible=true"
MAIN="$1"; shift
# shellcheck disable=SC2086
SPARK_TESTING=1 SPARK_SCALA_VERSION=2.13 exec java ${JAVA_OPTS:--Xmx2g} $OPENS \
  -Dspark.testing=true -Dspark.test.home="$SPARK_HOME_DIR" \
  -Dlog4j2.configurationFile="$HERE/log4j2.properties" \
  -cp "$PLUGIN_JAR:$APP_JAR:$(cat "$CP_FILE")" "$MAIN" "$@"
