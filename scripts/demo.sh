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

step "5. streaming made many small files (one per airport per batch); compact them"
echo "   (OPTIMIZE: bin-pack per partition, remove+add with dataChange=false in ONE commit)"
"$BIN" compact "$DEMO/flights" --dry-run > "$DEMO/plan.txt"
head -4 "$DEMO/plan.txt"; echo "  ..."
"$BIN" compact "$DEMO/flights"

step "6. history"
"$BIN" history "$DEMO/flights" --limit 8

step "7. describe"
"$BIN" describe "$DEMO/flights"

step "8. scan: five flights out of SFO delayed by more than an hour"
"$BIN" scan "$DEMO/flights" --where "origin = 'SFO' AND delay > 60" --limit 5 --format table

step "9. time travel: the same question at version 2, before the last batches"
"$BIN" scan "$DEMO/flights" --version 2 --where "origin = 'SFO'" --format csv > "$DEMO/rows.csv"; wc -l < "$DEMO/rows.csv" | xargs echo "   SFO rows at version 2 (+1 header line):"
"$BIN" scan "$DEMO/flights" --where "origin = 'SFO'" --format csv > "$DEMO/rows.csv"; wc -l < "$DEMO/rows.csv" | xargs echo "   SFO rows now          (+1 header line):"

step "done: the table is in $DEMO/flights (Spark, DuckDB, delta-rs can read it)"
