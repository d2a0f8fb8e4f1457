#!/usr/bin/env bash
# Installs the real engines the interop tests run against lakesink
# (interop/engines, `make interop`), outside the repo:
#
#   ${XDG_CACHE_HOME:-$HOME/.cache}/lakesink/engines/
#     venv/    a Python virtualenv with pyspark + delta-spark, deltalake
#              (delta-rs), pyarrow and polars at the versions pinned below
#     jars/    Delta's jars for that Spark and hadoop-aws + its AWS SDK bundle
#              for the Hadoop inside pyspark (scripts/engines/pom.xml), fetched
#              with `mvn dependency:copy-dependencies`
#     complete a marker written last; when it names the same pins, nothing is
#              fetched again (a second run works offline)
#
# Usage:
#   scripts/install-engines.sh          install (or check) and print what is installed
#   scripts/install-engines.sh --env    print shell exports for an installed set:
#                                       eval "$(scripts/install-engines.sh --env)"
#   LAKESINK_ENGINES_DIR=DIR            install somewhere else
#
# Needs python3 (3.10+), java (17) and mvn on PATH; fails naming the one missing.
set -euo pipefail

# Pins. delta-spark's own requirement is pyspark>=4.0.1,<=4.2.0 (its METADATA);
# its jar delta-spark_<spark major.minor>_2.13 must have the same version as the
# pip package (delta.pip_utils builds the Maven name that way). delta-spark 4.4.1
# is on PyPI but its jars are not on Maven Central, so 4.4.0 is the newest
# pair. Keep scripts/engines/pom.xml in step.
PYSPARK_VERSION=4.2.0
DELTA_SPARK_VERSION=4.4.0
DELTALAKE_VERSION=1.6.6
PYARROW_VERSION=26.0.1
POLARS_VERSION=2.1.0

here="$(cd "$(dirname "$0")" && pwd)"
pom="$here/engines/pom.xml"
dir="${LAKESINK_ENGINES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lakesink/engines}"
venv="$dir/venv"
jars="$dir/jars"
marker="$dir/complete"
pins="pyspark==$PYSPARK_VERSION delta-spark==$DELTA_SPARK_VERSION deltalake==$DELTALAKE_VERSION pyarrow==$PYARROW_VERSION polars==$POLARS_VERSION pom=$(cksum <"$pom" | cut -d' ' -f1)"

complete() { [ -f "$marker" ] && [ "$(cat "$marker")" = "$pins" ]; }

jar_list() {
	local out="" f
	for f in "$jars"/*.jar; do
		[ -e "$f" ] || continue
		out="${out:+$out,}$f"
	done
	echo "$out"
}

if [ "${1:-}" = "--env" ]; then
	if ! complete; then
		echo "install-engines: no complete install in $dir; run scripts/install-engines.sh" >&2
		exit 1
	fi
	echo "export LAKESINK_ENGINES_PYTHON=$venv/bin/python"
	echo "export LAKESINK_DELTA_JARS=$(jar_list)"
	exit 0
fi
if [ $# -gt 0 ]; then
	echo "usage: scripts/install-engines.sh [--env]" >&2
	exit 1
fi

need() {
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "install-engines: '$1' not found on PATH: $2" >&2
		exit 1
	fi
}
need python3 "the engines are Python packages (Python 3.10+ needed)"
need java "Spark needs a Java 17 runtime (e.g. apt-get install openjdk-17-jre-headless)"
need mvn "the Delta and hadoop-aws jars are fetched with Maven (e.g. apt-get install maven)"

if complete; then
	echo "install-engines: already complete in $dir (nothing fetched)"
else
	start=$(date +%s)
	rm -f "$marker"
	mkdir -p "$dir"
	if [ ! -x "$venv/bin/python" ]; then
		echo "install-engines: creating virtualenv $venv"
		python3 -m venv "$venv"
	fi
	echo "install-engines: pip install $PYSPARK_VERSION pyspark, $DELTA_SPARK_VERSION delta-spark, ... (several hundred MB on a fresh machine)"
	"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
		"pyspark==$PYSPARK_VERSION" "delta-spark==$DELTA_SPARK_VERSION" \
		"deltalake==$DELTALAKE_VERSION" "pyarrow==$PYARROW_VERSION" "polars==$POLARS_VERSION"

	# The Hadoop inside pyspark decides hadoop-aws's version: they must match.
	sparkjars="$("$venv/bin/python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
	hadoop="$(cd "$sparkjars" && ls hadoop-client-api-*.jar | sed 's/^hadoop-client-api-\(.*\)\.jar$/\1/')"
	want="$(sed -n 's:.*<hadoop.version>\(.*\)</hadoop.version>.*:\1:p' "$pom")"
	if [ "$hadoop" != "$want" ]; then
		echo "install-engines: pyspark $PYSPARK_VERSION ships Hadoop $hadoop but $pom asks for hadoop-aws $want; update hadoop.version there" >&2
		exit 1
	fi

	echo "install-engines: mvn dependency:copy-dependencies ($pom) into $jars"
	rm -rf "$jars.tmp"
	mkdir -p "$jars.tmp"
	if ! mvn -B -q -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory="$jars.tmp" >"$dir/mvn.log" 2>&1; then
		tail -20 "$dir/mvn.log" >&2
		echo "install-engines: mvn failed (full log: $dir/mvn.log)" >&2
		exit 1
	fi
	# Drop every jar whose artifact Spark already ships (scala-library,
	# hadoop-client, parquet, jackson, log4j, ...): Spark's own version is the
	# one its classes were built against, as with spark.jars.packages.
	for f in "$jars.tmp"/*.jar; do
		name="$(basename "$f" | sed 's/-[0-9][^-]*\(-[^-]*\)\{0,1\}\.jar$//')"
		if compgen -G "$sparkjars/$name-[0-9]*.jar" >/dev/null; then
			rm -f "$f"
		fi
	done
	rm -rf "$jars"
	mv "$jars.tmp" "$jars"
	echo "$pins" >"$marker"
	echo "install-engines: installed in $(($(date +%s) - start)) s"
fi

echo "install-engines: $dir"
"$venv/bin/python" - <<'EOF'
import importlib.metadata as m
for p in ("pyspark", "delta-spark", "deltalake", "pyarrow", "polars"):
    print(f"  {p} {m.version(p)}")
EOF
echo "  java: $(java -version 2>&1 | head -1)"
for f in "$jars"/*.jar; do echo "  jar $(basename "$f")"; done
