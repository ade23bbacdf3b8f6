#!/usr/bin/env bash
# Runs a class of the Flink example application on this machine: Flink's jars (target/flink-classpath.txt,
# written by the build), the approx-flink jar with approx-core (what a job jar bundles) and the application jar.
# The examples start their own local Flink cluster (2 TaskManagers x 2 slots in this JVM).
#   examples/flink/run-example.sh <main class> [args...]     e.g. io.netapprox.examples.flink.TaxiStreamExample
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
jar_in() { # the module's main jar (not the shade plugin's original-*, sources or tests jars)
  ls "$1"/target/"$2"-*.jar 2>/dev/null | grep -v -e '/original-' -e sources -e tests | head -n 1 || true
}
PLUGIN_JAR="$(jar_in "$ROOT/approx-flink" approx-flink)"
TAXI_JAR="$(jar_in "$ROOT/examples/taxi" examples-taxi)"
APP_JAR="$(jar_in "$HERE" examples-flink)"
CP_FILE="$HERE/target/flink-classpath.txt"
if [ -z "$PLUGIN_JAR" ] || [ -z "$TAXI_JAR" ] || [ -z "$APP_JAR" ] || [ ! -s "$CP_FILE" ]; then
  echo "approx-flink or example jars missing: run 'mvn -B -q install -DskipTests' at the repository root first" >&2
  exit 1
fi
MAIN="$1"; shift
# shellcheck disable=SC2086
exec java ${JAVA_OPTS:--Xmx2g} -Dlog4j2.configurationFile="$HERE/log4j2.properties" \
  -cp "$PLUGIN_JAR:$TAXI_JAR:$APP_JAR:$(cat "$CP_FILE")" "$MAIN" "$@"
