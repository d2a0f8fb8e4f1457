#!/usr/bin/env bash
# make demo: the main job on local disk, on real flight records.
# Streams 18 NDJSON files (18,000 rows) into a Delta table partitioned by
# origin, shows that a rerun ingests nothing, streams two more files,
# compacts, and prints history, describe and a scan for one airport.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=./bin/lakesink
DEMO=./demo
rm -rf "$DEMO"
mkdir -p "$DEMO/source"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. copy 18 of the 20 flight files (1,000 rows each) into $DEMO/source"
cp testdata/flights/flights-0*.json testdata/flights/flights-1[0-7].json "$DEMO/source/"
ls "$DEMO/source" | head -3; echo "... ($(ls "$DEMO/source" | wc -l) files)"

INGEST=("$BIN" ingest --source "$DEMO/source" --format json --schema testdata/flights-schema.json
  --timestamp-format "2006/01/02 15:04" --checkpoint "$DEMO/checkpoint" --table "$DEMO/flights"
  --partition-by origin --trigger available-now --max-files-per-trigger 2)

step "2. ingest them: available-now, 2 files per micro-batch, into a Delta table partitioned by origin"
"${INGEST[@]}"

step "3. run the same ingest again: the checkpoint says every file is done, nothing is re-ingested"
"${INGEST[@]}"

step "4. two new files arrive; ingest picks up only those"
cp testdata/flights/flights-18.json testdata/flights/flights-19.json "$DEMO/source/"
"${INGEST[@]}"

if "$BIN" compact --help >/dev/null 2>&1; then
  step "5. compact the small files (OPTIMIZE: remove+add with dataChange=false, one commit)"
  "$BIN" compact "$DEMO/flights"
else
  step "5. compact: not built yet (compaction issue) - skipped"
fi

step "6. history"
"$BIN" history "$DEMO/flights" --limit 8

step "7. describe"
"$BIN" describe "$DEMO/flights"

step "8. scan: five flights out of SFO"
"$BIN" scan "$DEMO/flights" --where "origin = 'SFO'" --limit 5

step "done: the table is in $DEMO/flights (Spark, DuckDB, delta-rs can read it)"
