"""Whole-process delta-rs (and Spark) sides of tests/enginebench_test.go (issue 22, "Against delta-rs").

Run by the Go benchmark as one process per measured run, with the
virtualenv of scripts/install-engines.sh:

  python bench.py write3m FILE TABLE      write_deltalake of the Arrow table read from the Parquet FILE
  python bench.py appends N TABLE         N write_deltalake appends of one row each (mode="append")
  python bench.py open TABLE              DeltaTable(TABLE): replay the log, print version and file count
  python bench.py compact TABLE           DeltaTable(TABLE).optimize.compact()
  python bench.py stream SRC SCHEMA TABLE CHK
                                          Spark Structured Streaming: the NDJSON files of SRC (schema:
                                          the Delta schema JSON file SCHEMA) into the Delta table TABLE,
                                          trigger availableNow, then stop and wait for the JVM to exit
                                          (JVM start and exit included)

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


def stream(src, schema_file, table, chk):
    import time

    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    t0 = time.monotonic()
    phases = {}

    def phase(what):
        # Where the wall time went (JVM start, the query, stop, JVM exit):
        # seconds since the start, in the answer and on stderr.
        phases[what] = round(time.monotonic() - t0, 2)
        print(f"stream {phases[what]:7.2f}s {what}", file=sys.stderr, flush=True)

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
    phase("SparkSession up")
    # The schema lakesink ingest is given (--schema, --timestamp-format):
    # a file stream source needs one, and the same one makes both tables
    # alike (date a timestamp, not a string a batch inference job found).
    with open(schema_file) as f:
        schema = StructType.fromJson(json.load(f))
    q = (
        spark.readStream.schema(schema)
        .option("timestampFormat", "yyyy/MM/dd HH:mm")
        .json(src)
        .writeStream.format("delta")
        .option("checkpointLocation", chk)
        .trigger(availableNow=True)
        .start(table)
    )
    q.awaitTermination()
    phase("query done (availableNow)")
    progress = [p["numInputRows"] for p in q.recentProgress]
    gateway = SparkContext._gateway
    spark.stop()
    phase("SparkSession stopped")
    # The JVM pyspark started exits when its stdin closes (as it would when
    # this process exits); waiting for it here makes its exit part of the
    # run and its CPU time and peak RSS part of this process's children,
    # which the Go side's wait4 reports (else they'd be left out).
    proc = gateway.proc
    gateway.shutdown()
    proc.stdin.close()
    rc = proc.wait()
    phase(f"JVM exited ({rc})")
    return {"batches": len(progress), "rows": sum(progress), "phases": phases}


def main():
    op, args = sys.argv[1], sys.argv[2:]
    fn = {"write3m": write3m, "appends": appends, "open": open_table, "compact": compact, "stream": stream}[op]
    print(json.dumps(fn(*args)), flush=True)


if __name__ == "__main__":
    main()
