#!/usr/bin/env bash
# Installs an Apache Kafka broker (KRaft mode, no ZooKeeper) for the
# real-broker tests (names containing "Broker", internal/testutil/kafkatest),
# outside the repo:
#
#   ${XDG_CACHE_HOME:-$HOME/.cache}/lakesink/kafka/
#     jars/     org.apache.kafka:kafka_2.13 and its runtime dependencies, plus
#               log4j2 as the slf4j 1.x binding (the release tarball ships the
#               same), fetched with `mvn dependency:copy-dependencies` from a
#               pom generated in a temp dir
#     complete  a marker written last; when it names the same pins, nothing is
#               fetched again (a second run works offline)
#
# Usage:
#   scripts/install-kafka.sh          install (or check) and print what is installed
#   scripts/install-kafka.sh --env    print shell exports for an installed broker:
#                                     eval "$(scripts/install-kafka.sh --env)"
#                                     (LAKESINK_KAFKA_CLASSPATH, read by kafkatest)
#   LAKESINK_KAFKA_DIR=DIR            install somewhere else
#
# Needs java (17+) and mvn on PATH; fails naming the one missing.
set -euo pipefail

KAFKA_VERSION=4.1.1
LOG4J_VERSION=2.24.3

dir="${LAKESINK_KAFKA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lakesink/kafka}"
jars="$dir/jars"
marker="$dir/complete"
pins="kafka_2.13=$KAFKA_VERSION log4j-slf4j-impl=$LOG4J_VERSION"

complete() { [ -f "$marker" ] && [ "$(cat "$marker")" = "$pins" ]; }

classpath() {
	local out="" f
	for f in "$jars"/*.jar; do
		[ -e "$f" ] || continue
		out="${out:+$out:}$f"
	done
	echo "$out"
}

if [ "${1:-}" = "--env" ]; then
	if ! complete; then
		echo "install-kafka: no complete install in $dir; run scripts/install-kafka.sh" >&2
		exit 1
	fi
	echo "export LAKESINK_KAFKA_CLASSPATH=$(classpath)"
	exit 0
fi
if [ $# -gt 0 ]; then
	echo "usage: scripts/install-kafka.sh [--env]" >&2
	exit 1
fi

need() {
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "install-kafka: '$1' not found on PATH: $2" >&2
		exit 1
	fi
}
need java "the broker needs a Java 17 runtime (e.g. apt-get install openjdk-17-jre-headless)"
need mvn "the Kafka jars are fetched with Maven (e.g. apt-get install maven)"

if complete; then
	echo "install-kafka: already complete in $dir (nothing fetched)"
else
	start=$(date +%s)
	rm -f "$marker"
	mkdir -p "$dir"
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	cat >"$tmp/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.github.lakesink</groupId>
  <artifactId>lakesink-kafka-broker</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
  </dependencies>
</project>
POM
	echo "install-kafka: mvn dependency:copy-dependencies (kafka_2.13 $KAFKA_VERSION) into $jars"
	rm -rf "$jars.tmp"
	mkdir -p "$jars.tmp"
	if ! mvn -B -q -f "$tmp/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory="$jars.tmp" >"$dir/mvn.log" 2>&1; then
		tail -20 "$dir/mvn.log" >&2
		echo "install-kafka: mvn failed (full log: $dir/mvn.log)" >&2
		exit 1
	fi
	rm -rf "$jars"
	mv "$jars.tmp" "$jars"
	echo "$pins" >"$marker"
	echo "install-kafka: installed in $(($(date +%s) - start)) s"
fi

echo "install-kafka: $dir"
echo "  java: $(java -version 2>&1 | head -1)"
echo "  kafka_2.13 $KAFKA_VERSION, $(ls "$jars"/*.jar | wc -l) jars:"
for f in "$jars"/*.jar; do echo "  jar $(basename "$f")"; done
