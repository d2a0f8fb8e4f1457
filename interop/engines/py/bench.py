"""Whole-process delta-rs (and Spark) sides of tests/enginebench_test.go (issue 22, "Against delta-rs").

Run by the Go benchmark as one process per measured run, with the
virtualenv of scripts/install-engines.sh:

  python bench.py write3m FILE TABLE      write_deltalake of the Arrow table read from the Parquet FILE
  python bench.py appends N TABLE         N write_deltalake appends of one row each (mode="append")
  python bench.py open TABLE              DeltaTable(TABLE): replay the log, print version and file count
  python bench.py compact TABLE           DeltaTable(TABLE).optimize.compact()
  python bench.py stream SRC TABLE CHK    Spark Structured Streaming: the NDJSON files of SRC into the
                                          Delta table TABLE, trigger availableNow (JVM start included)

Each prints one line of JSON (what it did) to stdout; the Go side checks
the tables both sides wrote, untimed.
"""

import json
import os
import sys


def write3m(src, table):
    import pyarrow.parquet as pq
    from deltalake import DeltaTable, write_deltalake

    write_deltalake(table, pq.read_table(src))
    dt = DeltaTable(table)
    return {"version": dt.version(), "files": len(dt.file_uris())}


def appends(n, table):
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    for i in range(int(n)):
        write_deltalake(table, pa.table({"id": [i], "v": [f"v{i}"]}, schema=schema), mode="append")
    return {"version": DeltaTable(table).version()}


def open_table(table):
    from deltalake import DeltaTable

    dt = DeltaTable(table)
    return {"version": dt.version(), "files": len(dt.file_uris())}


def compact(table):
    from deltalake import DeltaTable

    m = DeltaTable(table).optimize.compact()
    return {"filesRemoved": m.get("numFilesRemoved"), "filesAdded": m.get("numFilesAdded")}


def stream(src, table, chk):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.jars", os.environ["LAKESINK_DELTA_JARS"])
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    schema = spark.read.json(src).schema
    q = (
        spark.readStream.schema(schema)
        .json(src)
        .writeStream.format("delta")
        .option("checkpointLocation", chk)
        .trigger(availableNow=True)
        .start(table)
    )
    q.awaitTermination()
    progress = [p["numInputRows"] for p in q.recentProgress]
    spark.stop()
    return {"batches": len(progress), "rows": sum(progress)}


def main():
    op, args = sys.argv[1], sys.argv[2:]
    fn = {"write3m": write3m, "appends": appends, "open": open_table, "compact": compact, "stream": stream}[op]
    print(json.dumps(fn(*args)), flush=True)


if __name__ == "__main__":
    main()
