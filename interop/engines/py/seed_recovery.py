"""The recovery check of the streaming guide, as Spark runs it.

Two JSON batches go through a file sink with Trigger.AvailableNow: the first
run reads batch 1 (two rows), the query stops, batch 2 (one row) arrives, and
the query restarts from the same checkpoint. It prints (or returns) four
outputs:

  query_id_reused     the restarted query has the first run's id (the
                      checkpoint's metadata file kept it)
  second_input_rows   rows the restarted run read: 1 (batch 1 is not re-read)
  output_rows         rows spark.read.json(output) returns: 3 (none twice)
  checkpoint_entries  the checkpoint's top-level entries, sorted:
                      commits,metadata,offsets,sources

Standalone: python seed_recovery.py INPUT_DIR OUTPUT_DIR CHECKPOINT_DIR
(INPUT_DIR is created and must not exist). The engine server imports run()
to use its Spark session, and outputs() to score a run made by another
writer (lakesink ingest --file-sink) the same way.
"""

import json
import os
import sys

SCHEMA = "id BIGINT, name STRING"
BATCH1 = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
BATCH2 = [{"id": 3, "name": "c"}]


def write_batch(input_dir, name, rows):
    os.makedirs(input_dir, exist_ok=True)
    tmp = os.path.join(input_dir, "." + name + ".tmp")
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    os.rename(tmp, os.path.join(input_dir, name))


def run_once(spark, input_dir, output_dir, checkpoint):
    q = (
        spark.readStream.format("json").schema(SCHEMA).load(input_dir)
        .writeStream.format("json").option("path", output_dir)
        .option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
    )
    q.awaitTermination()
    if q.exception() is not None:
        raise RuntimeError(str(q.exception()))
    rows = sum(p["numInputRows"] for p in (json.loads(x.json) for x in q.recentProgress))
    return str(q.id), rows


def outputs(spark, output_dir, checkpoint, first_id=None, second_id=None, second_rows=None):
    df = spark.read.schema(SCHEMA).json(output_dir)
    rows = sorted((r["id"], r["name"]) for r in df.collect())
    out = {
        "output_rows": len(rows),
        "rows": [list(r) for r in rows],
        "checkpoint_entries": ",".join(sorted(e for e in os.listdir(checkpoint) if not e.startswith("."))),
    }
    if first_id is not None:
        out["query_id_reused"] = first_id == second_id
        out["second_input_rows"] = second_rows
    return out


def run(spark, input_dir, output_dir, checkpoint):
    write_batch(input_dir, "batch1.json", BATCH1)
    first_id, _ = run_once(spark, input_dir, output_dir, checkpoint)
    write_batch(input_dir, "batch2.json", BATCH2)
    second_id, second_rows = run_once(spark, input_dir, output_dir, checkpoint)
    return outputs(spark, output_dir, checkpoint, first_id, second_id, second_rows)


if __name__ == "__main__":
    from pyspark.sql import SparkSession

    session = SparkSession.builder.master("local[2]").appName("seed-recovery").getOrCreate()
    print(json.dumps(run(session, *sys.argv[1:4]), sort_keys=True))
    session.stop()
