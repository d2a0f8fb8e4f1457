"""One engine process for a Go test package: JSON requests on stdin, JSON answers on stdout.

Started once by interop/engines's TestMain with the virtualenv that
scripts/install-engines.sh made. Each request is one line, {"op": NAME, ...};
each answer is one line, {"ok": true, "result": ...} or {"ok": false,
"error": "..."}. Spark (local[2], Delta's session extension and catalog,
session time zone UTC, the jars of LAKESINK_DELTA_JARS) starts on the first
request that needs it, so the JVM starts once per test package; delta-rs
(deltalake) runs in the same process. Spark's own log goes to stderr.

Rows are answered normalised, so that the Go side compares multisets of
values rather than counts (norm_table):
  integers          decimal strings        "42"
  float, double     "f:" + the IEEE-754 binary64 bits in hex, any NaN is "NaN"
  decimal(p,s)      plain string with s digits after the point
  date              days since 1970-01-01 as a decimal string
  timestamp(_ntz)   microseconds since 1970-01-01 (UTC, or the wall clock for
                    timestamp_ntz) as a decimal string
  binary            "x:" + hex
  string, boolean   themselves
  struct            object by field name; array: list; map: object keyed by
                    the normalised key (JSON text of it when not a string)
"""

import datetime
import decimal
import json
import math
import os
import struct
import sys
import traceback

import pyarrow as pa

# decimal(38, s) values need 38 significant digits (the default context has 28).
decimal.getcontext().prec = 80

EPOCH_DATE = datetime.date(1970, 1, 1)
EPOCH_NAIVE = datetime.datetime(1970, 1, 1)
EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
MICRO = datetime.timedelta(microseconds=1)


def norm_float(v):
    if math.isnan(v):
        return "NaN"
    return "f:" + struct.pack(">d", v).hex()


def norm_value(v, t):
    """Normalises one Python value (as pyarrow's to_pylist gives it) of arrow type t."""
    if v is None:
        return None
    if pa.types.is_boolean(t):
        return bool(v)
    if pa.types.is_integer(t):
        return str(int(v))
    if pa.types.is_floating(t):
        return norm_float(float(v))
    if pa.types.is_decimal(t):
        return format(v.quantize(decimal.Decimal(1).scaleb(-t.scale)), "f")
    if pa.types.is_date(t):
        return str((v - EPOCH_DATE).days)
    if pa.types.is_timestamp(t):
        if t.unit != "us":
            raise ValueError(f"timestamp unit {t.unit} (want us)")
        base = EPOCH_UTC if v.tzinfo is not None else EPOCH_NAIVE
        return str((v - base) // MICRO)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "x:" + bytes(v).hex()
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return str(v)
    if pa.types.is_struct(t):
        return {t.field(i).name: norm_value(v.get(t.field(i).name), t.field(i).type) for i in range(t.num_fields)}
    if pa.types.is_map(t):
        out = {}
        for k, x in v:
            nk = norm_value(k, t.key_type)
            key = nk if isinstance(nk, str) else json.dumps(nk, sort_keys=True)
            out[key] = norm_value(x, t.item_type)
        return out
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
        return [norm_value(x, t.value_type) for x in v]
    if pa.types.is_dictionary(t):
        return norm_value(v, t.value_type)
    raise ValueError(f"unsupported arrow type {t}")


def norm_table(tbl):
    """Rows of a pyarrow Table as normalised objects by column name."""
    cols = []
    for i, f in enumerate(tbl.schema):
        cols.append((f.name, f.type, tbl.column(i).to_pylist()))
    return [{name: norm_value(vals[r], t) for name, t, vals in cols} for r in range(tbl.num_rows)]


def plain(v):
    """A JSON-able form of a Spark Row value (history, detail, ...)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, datetime.datetime):
        base = EPOCH_UTC if v.tzinfo is not None else EPOCH_NAIVE
        return (v - base) // MICRO
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return "x:" + bytes(v).hex()
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if hasattr(v, "asDict"):
        return {k: plain(x) for k, x in v.asDict().items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return str(v)


class Server:
    def __init__(self):
        self._spark = None
        self._queries = {}

    # ---- Spark -------------------------------------------------------------

    def spark(self):
        if self._spark is None:
            from pyspark.sql import SparkSession

            b = (
                SparkSession.builder.master("local[2]")
                .appName("lakesink-engines")
                .config("spark.jars", os.environ["LAKESINK_DELTA_JARS"])
                .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.default.parallelism", "2")
                .config("spark.databricks.delta.snapshotPartitions", "2")
                # VACUUM lists the table in this many tasks (default 10000:
                # a Spark VACUUM took 22 minutes on local[2] under load).
                .config("spark.sql.sources.parallelPartitionDiscovery.parallelism", "2")
                .config("spark.databricks.delta.retentionDurationCheck.enabled", "false")
                .config("spark.driver.memory", "2g")
                # The JIT's C2 compiler was the largest CPU user of a cold
                # engine server (24 s of 71 s before a first streaming batch
                # on a 2-core machine at load ~36): C1 only, and one GC thread.
                .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
                # A loaded 2-core machine: missed heartbeats made the local
                # executor re-register and fail (BlockManager NPE).
                .config("spark.network.timeout", "900s")
                .config("spark.executor.heartbeatInterval", "300s")
                .config("spark.sql.warehouse.dir", os.environ.get("LAKESINK_SPARK_WAREHOUSE", "spark-warehouse"))
            )
            for k, v in json.loads(os.environ.get("LAKESINK_SPARK_CONF", "{}")).items():
                b = b.config(k, v)
            self._spark = b.getOrCreate()
            self._spark.sparkContext.setLogLevel("ERROR")
        return self._spark

    def op_spark_version(self, req):
        import importlib.metadata as m

        s = self.spark()
        return {"spark": s.version, "delta": m.version("delta-spark"), "pyspark": m.version("pyspark")}

    def op_spark_conf(self, req):
        """Sets session confs (copied into every Hadoop conf of a read: s3a
        settings); a null value unsets the conf."""
        for k, v in req["conf"].items():
            if v is None:
                self.spark().conf.unset(k)
            else:
                self.spark().conf.set(k, str(v))
        return True

    def _delta_log(self, path):
        s = self.spark()
        return s._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(s._jsparkSession, path)

    def op_spark_checksum(self, req):
        """Delta's view of version N's checksum: Snapshot.checksumOpt (the
        N.crc Delta read, or null), Snapshot.validateChecksum() (Delta's
        ValidateChecksum: the .crc against Delta's own state reconstruction;
        with spark.databricks.delta.checksum.mismatch.fatal=true a mismatch
        raises DeltaChecksumException, answered as "error"), and
        Snapshot.computeChecksum() as Delta writes it (from the .crc when
        there is one, else from the state reconstruction), both as the
        JSON of Delta's JsonUtils.mapper.
        """
        s = self.spark()
        jvm = s._jvm
        none = jvm.scala.Option.empty()
        log = self._delta_log(req["path"])
        snap = log.getSnapshotAt(int(req["version"]), none, none, False)
        mapper = jvm.org.apache.spark.sql.delta.util.JsonUtils.mapper()
        ck = snap.checksumOpt()
        out = {"version": snap.version(), "checksum": None, "valid": None, "error": None}
        if ck.isDefined():
            out["checksum"] = json.loads(mapper.writeValueAsString(ck.get()))
        try:
            out["valid"] = bool(snap.validateChecksum(getattr(snap, "validateChecksum$default$1")()))
        except Exception as e:  # DeltaChecksumException under checksum.mismatch.fatal
            out["error"] = str(e)
        out["computed"] = json.loads(mapper.writeValueAsString(snap.computeChecksum()))
        return out

    def _reader(self, req):
        r = self.spark().read.format(req.get("format", "delta"))
        for k, v in req.get("options", {}).items():
            r = r.option(k, str(v))
        if req.get("schema"):
            r = r.schema(req["schema"])
        return r

    def op_spark_read(self, req):
        """Rows of spark.read.format(format).load(path) with the Spark schema."""
        df = self._reader(req).load(req["path"])
        if req.get("where"):
            df = df.where(req["where"])
        return {"schema": json.loads(df.schema.json()), "rows": norm_table(df.toArrow()), "files": sorted(df.inputFiles())}

    def op_spark_sql(self, req):
        """Rows of a SQL statement, as plain JSON (not normalised)."""
        df = self.spark().sql(req["sql"])
        return [plain(r.asDict(recursive=True)) for r in df.collect()]

    def op_spark_sql_rows(self, req):
        """Rows of a SQL query, normalised as spark_read's."""
        df = self.spark().sql(req["sql"])
        return {"schema": json.loads(df.schema.json()), "rows": norm_table(df.toArrow())}

    def op_spark_append(self, req):
        """Appends rows given as JSON objects (with a DDL schema) to a Delta table."""
        s = self.spark()
        df = s.createDataFrame(self._rows_from_json(req), req["schema"])
        w = df.write.format(req.get("format", "delta")).mode(req.get("mode", "append"))
        for k, v in req.get("options", {}).items():
            w = w.option(k, str(v))
        if req.get("partition_by"):
            w = w.partitionBy(*req["partition_by"])
        w.save(req["path"])
        return True

    def _rows_from_json(self, req):
        from pyspark.sql.types import _parse_datatype_string

        st = _parse_datatype_string(req["schema"])
        conv = []
        for f in st.fields:
            n = f.dataType.typeName()
            if n == "timestamp":
                conv.append(lambda v: None if v is None else EPOCH_UTC + v * MICRO)
            elif n == "timestamp_ntz":
                conv.append(lambda v: None if v is None else EPOCH_NAIVE + v * MICRO)
            elif n == "date":
                conv.append(lambda v: None if v is None else EPOCH_DATE + datetime.timedelta(days=v))
            elif n == "decimal":
                conv.append(lambda v: None if v is None else decimal.Decimal(v))
            elif n == "binary":
                conv.append(lambda v: None if v is None else bytes.fromhex(v))
            elif n in ("double", "float"):
                conv.append(lambda v: None if v is None else float(v))
            else:
                conv.append(lambda v: v)
        return [tuple(c(r.get(f.name)) for c, f in zip(conv, st.fields)) for r in req["rows"]]

    def op_spark_stream_start(self, req):
        """Starts a streaming query: a source (rate or json files) into a sink.

        req: name, source ("rate": rows_per_second; "json": path, schema),
        sink_format ("delta", "parquet", "json"), path, checkpoint,
        trigger_ms, partition_by, options (sink), txn (foreachBatch with
        txnAppId/txnVersion instead of the Delta sink).
        """
        s = self.spark()
        src = req["source"]
        if src["kind"] == "rate":
            df = (
                s.readStream.format("rate")
                .option("rowsPerSecond", src.get("rows_per_second", 10))
                .option("numPartitions", 1)
                .load()
            )
            df = df.selectExpr("CAST(value AS STRING) AS id", "'spark' AS writer")
        else:
            r = s.readStream.format(src["kind"])
            if src.get("schema"):  # file sources; the delta source takes the table's
                r = r.schema(src["schema"])
            for k, v in src.get("options", {}).items():
                r = r.option(k, str(v))
            df = r.load(src["path"])
        if req.get("txn_app_id"):
            path, app = req["path"], req["txn_app_id"]

            def write_batch(bdf, bid):
                bdf.write.format("delta").mode("append").option("txnAppId", app).option("txnVersion", bid).save(path)

            w = df.writeStream.foreachBatch(write_batch)
        else:
            w = df.writeStream.format(req.get("sink_format", "delta")).outputMode("append")
            for k, v in req.get("options", {}).items():
                w = w.option(k, str(v))
            if req.get("partition_by"):
                w = w.partitionBy(*req["partition_by"])
            w = w.option("path", req["path"])
        w = w.option("checkpointLocation", req["checkpoint"])
        if req.get("available_now"):
            w = w.trigger(availableNow=True)
        else:
            w = w.trigger(processingTime=f"{req.get('trigger_ms', 1000)} milliseconds")
        q = w.start()
        self._queries[req["name"]] = q
        if req.get("available_now"):
            q.awaitTermination()
            return self._query_report(q)
        return {"id": str(q.id), "runId": str(q.runId)}

    def _query_report(self, q):
        exc = q.exception()
        return {
            "id": str(q.id),
            "runId": str(q.runId),
            "progress": [json.loads(p.json) for p in q.recentProgress],
            "exception": None if exc is None else str(exc),
        }

    def op_spark_stream_stop(self, req):
        q = self._queries.pop(req["name"])
        q.stop()
        return self._query_report(q)

    def op_spark_stream_status(self, req):
        """A running query's state without stopping it: active, status, last progress, exception."""
        q = self._queries[req["name"]]
        exc = q.exception()
        last = q.lastProgress  # a StreamingQueryProgress (pyspark 4) or None
        if last is not None and hasattr(last, "json"):
            last = json.loads(last.json)
        return {
            "active": q.isActive,
            "status": dict(q.status),
            "lastProgress": last,
            "exception": None if exc is None else str(exc),
        }

    def op_spark_stream_process_all(self, req):
        self._queries[req["name"]].processAllAvailable()
        return True

    def op_spark_offsets(self, req):
        """Spark's parse of a checkpoint's offsets: every offsets/N read by
        Spark's OffsetSeqLog, source 0's offset by Delta's
        DeltaSourceOffset.apply(reservoirId, offset) (which also refuses an
        offset of another table), answered with the fields Delta holds in
        memory and its json (the text Delta would write back).
        """
        s = self.spark()
        jvm = s._jvm
        cls = jvm.org.apache.spark.sql.execution.streaming.checkpointing.OffsetSeqLog
        log = cls(s._jsparkSession, req["checkpoint"] + "/offsets", getattr(cls, "$lessinit$greater$default$3")())
        dso = jvm.org.apache.spark.sql.delta.sources.DeltaSourceOffset
        latest = log.getLatestBatchId()
        out = []
        if not latest.isDefined():
            return out
        for b in range(int(latest.get()) + 1):
            seq = log.get(b)
            if not seq.isDefined():
                continue
            off = seq.get().offsets().apply(0)
            if not off.isDefined():
                out.append({"batchId": b, "offset": None})
                continue
            o = dso.apply(req["reservoir_id"], off.get())
            out.append({
                "batchId": b,
                "serialized": off.get().json(),
                "reservoirId": o.reservoirId(),
                "reservoirVersion": o.reservoirVersion(),
                "index": o.index(),
                "isInitialSnapshot": o.isInitialSnapshot(),
                "json": o.json(),
                "baseIndex": dso.BASE_INDEX(),
            })
        return out

    def op_spark_delta(self, req):
        """DeltaTable maintenance: optimize, vacuum (retain hours), checkpoint."""
        from delta.tables import DeltaTable

        s = self.spark()
        what = req["what"]
        if what == "optimize":
            return [plain(r.asDict(recursive=True)) for r in DeltaTable.forPath(s, req["path"]).optimize().executeCompaction().collect()]
        if what == "vacuum":
            DeltaTable.forPath(s, req["path"]).vacuum(float(req.get("retain_hours", 0)))
            return True
        if what == "checkpoint":
            jvm = s._jvm
            log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(s._jsparkSession, req["path"])
            log.checkpoint()
            return True
        raise ValueError(f"unknown delta op {what}")

    # ---- delta-rs ----------------------------------------------------------

    def op_rs_version(self, req):
        import deltalake

        return {"deltalake": deltalake.__version__}

    def op_rs_read(self, req):
        """delta-rs: rows, schema, protocol, history and add actions of a table."""
        from deltalake import DeltaTable

        path = req["path"]
        out = {"is_deltatable": DeltaTable.is_deltatable(path, req.get("storage_options"))}
        dt = DeltaTable(path, version=req.get("version"), storage_options=req.get("storage_options"))
        tbl = dt.to_pyarrow_table()
        out["rows"] = norm_table(tbl)
        out["schema"] = json.loads(dt.schema().to_json())
        p = dt.protocol()
        out["protocol"] = {
            "minReaderVersion": p.min_reader_version,
            "minWriterVersion": p.min_writer_version,
            "readerFeatures": p.reader_features,
            "writerFeatures": p.writer_features,
        }
        out["version"] = dt.version()
        out["history"] = [plain(h) for h in dt.history()]
        aa = dt.get_add_actions(flatten=True)
        aa = pa.table(aa) if not isinstance(aa, pa.Table) else aa
        out["add_actions"] = [{k: plain_arrow(v) for k, v in row.items()} for row in aa.to_pylist()]
        out["files"] = sorted(dt.file_uris())
        return out

    def op_rs_write(self, req):
        """delta-rs: append a table given as normalised JSON rows with a Spark DDL schema."""
        from deltalake import write_deltalake

        s = self.spark()
        df = s.createDataFrame(self._rows_from_json(req), req["schema"])
        write_deltalake(req["path"], df.toArrow(), mode=req.get("mode", "append"))
        return True

    def op_rs_maintain(self, req):
        from deltalake import DeltaTable

        dt = DeltaTable(req["path"])
        what = req["what"]
        if what == "compact":
            return plain(dt.optimize.compact())
        if what == "checkpoint":
            dt.create_checkpoint()
            return True
        if what == "vacuum":
            return dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
        raise ValueError(f"unknown delta-rs op {what}")

    def op_seed_recovery(self, req):
        """py/seed_recovery.py's story with this process's Spark session."""
        import seed_recovery

        return seed_recovery.run(self.spark(), req["input"], req["output"], req["checkpoint"])

    def op_seed_outputs(self, req):
        """The seed check's four outputs for a run someone else (lakesink) made."""
        import seed_recovery

        return seed_recovery.outputs(self.spark(), req["output"], req["checkpoint"])

    def op_corpus(self, req):
        """py/corpus.py: writes the generated corpus's cases under root and answers each."""
        import corpus

        return corpus.run(self.spark, req["root"], req.get("cases"), req.get("storage_options"))

    def op_corpus_cases(self, req):
        import corpus

        return {"spark": corpus.SPARK_CASES, "delta-rs": corpus.RS_CASES}

    def op_quit(self, req):
        for q in list(self._queries.values()):
            q.stop()
        if self._spark is not None:
            self._spark.stop()
        return True


def plain_arrow(v):
    return plain(v)


def main():
    srv = Server()
    # Answers go to a copy of fd 1; fd 1 itself becomes stderr, so that what
    # Spark and py4j print (Delta's VACUUM prints "Deleted N files ...")
    # cannot interleave with the answers.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        try:
            res = {"ok": True, "result": getattr(srv, "op_" + req["op"])(req)}
        except Exception as e:  # the answer names the failure; the server goes on
            traceback.print_exc(file=sys.stderr)
            res = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        try:
            line = json.dumps(res, sort_keys=True)
        except (TypeError, ValueError) as e:  # an answer that is not JSON: say so, go on
            line = json.dumps({"ok": False, "error": f"answer of {req['op']} is not JSON: {e}"})
        out.write(line + "\n")
        out.flush()
        if req["op"] == "quit":
            break


if __name__ == "__main__":
    main()
