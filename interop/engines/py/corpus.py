"""The generated corpus (issue 17): tables written by the engines themselves, with their answers.

Each case writes one table with Spark + Delta or delta-rs into ROOT/<case>
(a temporary folder of the Go test: nothing here is committed, so bumping an
engine pin tests the new engine) and answers what that engine reads from it:

  rows      per answered version: the engine's own read
            (spark.read.format("delta").option("versionAsOf", v), or
            DeltaTable(path, version=v).to_pyarrow_table() for delta-rs),
            normalised as engine_server.norm_table does; variant columns are
            answered as their JSON text (to_json)
  detail    DESCRIBE DETAIL's numFiles, sizeInBytes, partitionColumns (Spark;
            for delta-rs the same figures from its add actions and metadata)
  protocol  the latest protocol action (minReaderVersion, minWriterVersion,
            readerFeatures, writerFeatures)

Answered versions: the latest, the one before it and the middle one
(versionAsOf). run() is called by the engine server
(op corpus) with one batch of cases, so one JVM writes the whole corpus.
"""

import contextlib
import datetime
import decimal
import json
import os
import traceback

import pyarrow as pa

from engine_server import norm_table, plain

SPARK_CASES = []
RS_CASES = []
S3_CASES = []  # delta-rs cases written to S3: run only when asked for by name, with storage_options


def spark_case(fn):
    SPARK_CASES.append(fn.__name__)
    return fn


def rs_case(fn):
    RS_CASES.append(fn.__name__)
    return fn


@contextlib.contextmanager
def session_conf(spark, **conf):
    """Sets Spark session confs for the duration of one case."""
    old = {}
    for k, v in conf.items():
        k = k.replace("__", ".")
        old[k] = spark.conf.get(k, None)
        spark.conf.set(k, str(v))
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def t(p):
    return f"delta.`{p}`"


# ---- Spark cases -------------------------------------------------------------


@spark_case
def spark_partitioned_types(spark, p):
    """Partitioned by date, timestamp, decimal, boolean and a string with special characters."""
    spark.sql(
        f"CREATE TABLE {t(p)} (id BIGINT, d DATE, ts TIMESTAMP, dec DECIMAL(10,2), b BOOLEAN, s STRING, v DOUBLE) "
        "USING delta PARTITIONED BY (d, ts, dec, b, s)"
    )
    spark.sql(
        f"INSERT INTO {t(p)} VALUES "
        "(1, DATE'2024-01-31', TIMESTAMP'2024-01-31 10:00:00.123456', 12.34, true, 'a b/c=d%e', 1.5), "
        "(2, DATE'1969-12-31', TIMESTAMP'1969-12-31 23:59:59.999999', -0.01, false, 'ünï ✓ 漢字', 2.5), "
        "(3, NULL, NULL, NULL, NULL, NULL, 3.5)"
    )
    spark.sql(
        f"INSERT INTO {t(p)} VALUES "
        "(4, DATE'2024-02-29', TIMESTAMP'2024-02-29 00:00:00', 99999999.99, true, '#?&{a,b}''q''', 4.5), "
        "(5, DATE'0001-01-01', TIMESTAMP'2000-01-01 00:00:00', 0, false, '', 5.5), "
        "(6, DATE'9999-12-31', TIMESTAMP'9999-12-31 23:59:59.999999', 1, true, '%2F :x', 6.5)"
    )
    spark.sql(f"DELETE FROM {t(p)} WHERE id = 2")


@spark_case
def spark_all_types(spark, p):
    """Every primitive type and nested types, nulls at every level."""
    spark.sql(
        f"CREATE TABLE {t(p)} (id BIGINT, by TINYINT, sh SMALLINT, i INT, l BIGINT, f FLOAT, d DOUBLE, "
        "dec38 DECIMAL(38,18), dec5 DECIMAL(5,2), s STRING, bin BINARY, bo BOOLEAN, dt DATE, ts TIMESTAMP, "
        "ntz TIMESTAMP_NTZ, st STRUCT<x: INT, y: STRING, z: STRUCT<q: DOUBLE>>, arr ARRAY<BIGINT>, "
        "arrst ARRAY<STRUCT<a: INT, b: STRING>>, m MAP<STRING, DOUBLE>, mnest MAP<INT, ARRAY<STRING>>) USING delta"
    )
    spark.sql(
        f"INSERT INTO {t(p)} VALUES (1, 1Y, 1S, 1, 1L, 1.5F, 2.25D, 1.000000000000000001BD, 123.45BD, 'plain', "
        "X'62696e', true, DATE'2024-01-31', TIMESTAMP'2024-01-31 10:00:00.123456', TIMESTAMP_NTZ'2024-01-31 10:00:00.123456', "
        "named_struct('x', 7, 'y', 'seven', 'z', named_struct('q', 0.5D)), array(1L, NULL, 3L), "
        "array(named_struct('a', 1, 'b', 'a'), NULL), map('a', 1.0D, 'b', NULL), map(1, array('x', NULL)))"
    )
    spark.sql(
        f"INSERT INTO {t(p)} VALUES (2, 127Y, 32767S, 2147483647, 9223372036854775807L, CAST('Infinity' AS FLOAT), "
        "CAST('NaN' AS DOUBLE), 99999999999999999999.999999999999999999BD, -999.99BD, 'ünïcødé \"q\" \\\\ <&>', X'', false, "
        "DATE'0001-01-01', TIMESTAMP'0001-01-01 00:00:00', TIMESTAMP_NTZ'9999-12-31 23:59:59.999999', "
        "named_struct('x', NULL, 'y', NULL, 'z', NULL), array(), array(), map(), map()), "
        "(3, -128Y, -32768S, -2147483648, -9223372036854775808L, -0.0F, -0.0D, -1.5BD, 0BD, NULL, NULL, NULL, "
        "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
    )


@spark_case
def spark_deletion_vectors(spark, p):
    """DELETE, UPDATE and MERGE writing deletion vectors, then OPTIMIZE, then REORG ... APPLY (PURGE)."""
    spark.sql(
        f"CREATE TABLE {t(p)} (id BIGINT, part STRING, v STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    spark.range(0, 200).selectExpr("id", "CAST(id % 2 AS STRING) AS part", "CONCAT('v', id) AS v").repartition(2).write.format(
        "delta"
    ).mode("append").save(p)
    spark.range(200, 300).selectExpr("id", "CAST(id % 2 AS STRING) AS part", "CONCAT('w', id) AS v").coalesce(1).write.format(
        "delta"
    ).mode("append").save(p)
    spark.sql(f"DELETE FROM {t(p)} WHERE id % 7 = 0")
    spark.sql(f"UPDATE {t(p)} SET v = CONCAT(v, '-u') WHERE id % 5 = 0")
    spark.range(250, 320).selectExpr("id", "CAST(id % 2 AS STRING) AS part", "CONCAT('m', id) AS v").createOrReplaceTempView(
        "corpus_src"
    )
    spark.sql(
        f"MERGE INTO {t(p)} AS t USING corpus_src AS s ON t.id = s.id AND t.part = s.part "
        "WHEN MATCHED AND s.id % 3 = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
    )
    spark.sql(f"OPTIMIZE {t(p)}")
    spark.sql(f"DELETE FROM {t(p)} WHERE id % 11 = 0")
    spark.sql(f"REORG TABLE {t(p)} APPLY (PURGE)")


def _column_mapping(spark, p, mode):
    spark.sql(
        f"CREATE TABLE {t(p)} (id BIGINT, a STRING, b INT, s STRUCT<x: INT, y: STRING>, part STRING) USING delta "
        f"PARTITIONED BY (part) TBLPROPERTIES ('delta.columnMapping.mode' = '{mode}')"
    )
    spark.sql(f"INSERT INTO {t(p)} VALUES (1, 'a1', 10, named_struct('x', 1, 'y', 'y1'), 'p'), (2, 'a2', 20, NULL, 'q')")
    spark.sql(f"ALTER TABLE {t(p)} RENAME COLUMN a TO a_renamed")
    spark.sql(f"INSERT INTO {t(p)} VALUES (3, 'a3', 30, named_struct('x', 3, 'y', 'y3'), 'p')")
    spark.sql(f"ALTER TABLE {t(p)} DROP COLUMN b")
    spark.sql(f"ALTER TABLE {t(p)} RENAME COLUMN s.x TO x_renamed")
    spark.sql(f"ALTER TABLE {t(p)} RENAME COLUMN part TO part_renamed")
    spark.sql(f"ALTER TABLE {t(p)} ADD COLUMNS (b STRING)")
    spark.sql(f"INSERT INTO {t(p)} VALUES (4, 'a4', named_struct('x_renamed', 4, 'y', 'y4'), 'q', 'new b')")


@spark_case
def spark_column_mapping_name(spark, p):
    """Column mapping name mode: RENAME COLUMN, DROP COLUMN, a nested rename, a renamed partition column, re-added name."""
    _column_mapping(spark, p, "name")


@spark_case
def spark_column_mapping_id(spark, p):
    """Column mapping id mode, the same story as name mode."""
    _column_mapping(spark, p, "id")


@spark_case
def spark_in_commit_timestamps(spark, p):
    """delta.enableInCommitTimestamps=true."""
    spark.sql(f"CREATE TABLE {t(p)} (id BIGINT, v STRING) USING delta TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true')")
    for i in range(3):
        spark.sql(f"INSERT INTO {t(p)} VALUES ({i}, 'v{i}')")
    spark.sql(f"UPDATE {t(p)} SET v = 'u' WHERE id = 1")


@spark_case
def spark_change_data_feed(spark, p):
    """delta.enableChangeDataFeed=true: UPDATE/DELETE/MERGE write _change_data files."""
    spark.sql(
        f"CREATE TABLE {t(p)} (id BIGINT, part STRING, v STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"
    )
    spark.sql(f"INSERT INTO {t(p)} VALUES (1, 'a', 'x'), (2, 'a', 'y'), (3, 'b', 'z'), (4, 'b', 'w')")
    spark.sql(f"UPDATE {t(p)} SET v = 'updated' WHERE id = 1")
    spark.sql(f"DELETE FROM {t(p)} WHERE id = 3")
    spark.sql(
        f"MERGE INTO {t(p)} AS t USING (SELECT 2L AS id, 'a' AS part, 'merged' AS v UNION ALL SELECT 9L, 'c', 'new') AS s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )


@spark_case
def spark_v2_checkpoint(spark, p):
    """delta.checkpointPolicy=v2, checkpointInterval 3: UUID-named V2 checkpoints with Parquet sidecars (Delta 4.4 writes the top-level file as JSON)."""
    spark.sql(
        f"CREATE TABLE {t(p)} (id BIGINT, part STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '3')"
    )
    for i in range(7):
        spark.sql(f"INSERT INTO {t(p)} VALUES ({i}, 'p{i % 3}'), ({i + 100}, 'p{i % 2}')")
    spark.sql(f"DELETE FROM {t(p)} WHERE id = 3")


@spark_case
def spark_v2_checkpoint_parquet(spark, p):
    """delta.checkpointPolicy=v2 with the top-level checkpoint file in Parquet (spark.databricks.delta.checkpointV2.topLevelFileFormat=parquet) and Parquet sidecars."""
    with session_conf(spark, spark__databricks__delta__checkpointV2__topLevelFileFormat="parquet"):
        spark.sql(
            f"CREATE TABLE {t(p)} (id BIGINT, part STRING, v STRING) USING delta PARTITIONED BY (part) "
            "TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '3')"
        )
        for i in range(7):
            spark.sql(f"INSERT INTO {t(p)} VALUES ({i}, 'p{i % 3}', 'v{i}'), ({i + 100}, 'p{i % 2}', NULL)")
        spark.sql(f"UPDATE {t(p)} SET v = 'u' WHERE id = 4")
        spark.sql(f"DELETE FROM {t(p)} WHERE id = 102")


@spark_case
def spark_log_compaction(spark, p):
    """Log compaction files (x.y.compacted.json, PROTOCOL.md "Log Compaction Files") written by Delta Kernel 4.4's LogCompactionHook over Spark's commits 1-4 and 5-8; Spark answers with deltaLog.minorCompaction.useForReads=true."""
    spark.sql(f"CREATE TABLE {t(p)} (id BIGINT, part STRING, v STRING) USING delta PARTITIONED BY (part)")
    for i in range(5):
        spark.sql(f"INSERT INTO {t(p)} VALUES ({i}, 'p{i % 2}', 'v{i}'), ({i + 100}, 'p{i % 3}', 'w{i}')")
    spark.sql(f"DELETE FROM {t(p)} WHERE id = 2")
    spark.sql(f"UPDATE {t(p)} SET v = 'u' WHERE id = 101")
    spark.sql(f"INSERT INTO {t(p)} VALUES (9, 'p9', 'nine')")
    jvm = spark._jvm
    engine = jvm.io.delta.kernel.defaults.engine.DefaultEngine.create(spark._jsc.hadoopConfiguration())
    path = jvm.io.delta.kernel.internal.fs.Path
    # Kernel checks that the listed commit files (file:/...) are in the
    # log path it is given: the qualified form.
    root = "file:" + os.path.abspath(p)
    for start, end in ((1, 4), (5, 8)):
        # minFileRetentionTimestampMillis 0: no tombstone is old enough to drop.
        jvm.io.delta.kernel.internal.hook.LogCompactionHook(path(root), path(root + "/_delta_log"), start, end, 0).threadSafeInvoke(engine)
    spark.sql(f"DELETE FROM {t(p)} WHERE id = 103")
    # Spark builds every answered snapshot afresh, listing the compaction files.
    jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()


spark_log_compaction.answer_conf = {"spark.databricks.delta.deltaLog.minorCompaction.useForReads": "true"}


@spark_case
def spark_variant_shredding(spark, p):
    """delta.enableVariantShredding=true: Spark adds the reader feature variantShredding-preview (lakesink may refuse it by name, describe must say so)."""
    spark.sql(f"CREATE TABLE {t(p)} (id BIGINT, v VARIANT) USING delta TBLPROPERTIES ('delta.enableVariantShredding' = 'true')")
    spark.sql(
        f"INSERT INTO {t(p)} SELECT id, parse_json(CONCAT('{{\"a\": ', id, ', \"b\": \"s', id, '\"}}')) FROM range(0, 20)"
    )
    spark.sql(f"INSERT INTO {t(p)} SELECT 100, parse_json('[1, 2]')")


@spark_case
def spark_multipart_checkpoint(spark, p):
    """A multi-part checkpoint (spark.databricks.delta.checkpoint.partSize=3)."""
    with session_conf(spark, spark__databricks__delta__checkpoint__partSize=3):
        spark.sql(f"CREATE TABLE {t(p)} (id BIGINT, part STRING) USING delta PARTITIONED BY (part) TBLPROPERTIES ('delta.checkpointInterval' = '4')")
        for i in range(5):
            spark.range(i * 10, i * 10 + 10).selectExpr("id", "CAST(id % 4 AS STRING) AS part").write.format("delta").mode("append").save(p)
        spark.sql(f"DELETE FROM {t(p)} WHERE id = 13")


@spark_case
def spark_100_commits(spark, p):
    """100 commits with delta.checkpointInterval=7 (checkpoints at 7, 14, ..., 98)."""
    spark.sql(f"CREATE TABLE {t(p)} (id BIGINT, v STRING) USING delta TBLPROPERTIES ('delta.checkpointInterval' = '7')")
    for i in range(1, 100):
        if i % 10 == 0:
            spark.sql(f"DELETE FROM {t(p)} WHERE id = {i - 5}")
        else:
            spark.sql(f"INSERT INTO {t(p)} VALUES ({i}, 'v{i}')")


@spark_case
def spark_restore(spark, p):
    """RESTORE TABLE ... TO VERSION AS OF 1 after a delete and an overwrite."""
    spark.sql(f"CREATE TABLE {t(p)} (id BIGINT, v STRING) USING delta")
    spark.sql(f"INSERT INTO {t(p)} VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"INSERT INTO {t(p)} VALUES (3, 'c')")
    spark.sql(f"DELETE FROM {t(p)} WHERE id = 1")
    spark.sql(f"INSERT OVERWRITE {t(p)} VALUES (9, 'z')")
    spark.sql(f"RESTORE TABLE {t(p)} TO VERSION AS OF 2")


@spark_case
def spark_liquid_clustering(spark, p):
    """CLUSTER BY (liquid clustering), OPTIMIZE clusters."""
    spark.sql(f"CREATE TABLE {t(p)} (id BIGINT, k STRING, v DOUBLE) USING delta CLUSTER BY (k)")
    for i in range(3):
        spark.range(i * 50, i * 50 + 50).selectExpr("id", "CONCAT('k', id % 5) AS k", "CAST(id / 2.0 AS DOUBLE) AS v").write.format("delta").mode("append").save(p)
    spark.sql(f"OPTIMIZE {t(p)}")
    spark.sql(f"INSERT INTO {t(p)} VALUES (1000, 'k9', 0.5)")


@spark_case
def spark_row_tracking(spark, p):
    """delta.enableRowTracking=true: inserts, an UPDATE and OPTIMIZE (materialised row ids)."""
    spark.sql(f"CREATE TABLE {t(p)} (id BIGINT, v STRING) USING delta TBLPROPERTIES ('delta.enableRowTracking' = 'true')")
    spark.sql(f"INSERT INTO {t(p)} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(f"INSERT INTO {t(p)} VALUES (4, 'd')")
    spark.sql(f"UPDATE {t(p)} SET v = 'u' WHERE id = 2")
    spark.sql(f"OPTIMIZE {t(p)}")


@spark_case
def spark_type_widening(spark, p):
    """delta.enableTypeWidening=true: int->long, float->double, decimal(10,2)->decimal(20,2), date->timestamp_ntz."""
    spark.sql(
        f"CREATE TABLE {t(p)} (id INT, f FLOAT, dec DECIMAL(10,2), dt DATE, part INT) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.enableTypeWidening' = 'true', 'delta.feature.timestampNtz' = 'supported')"
    )
    spark.sql(
        f"INSERT INTO {t(p)} VALUES (2147483647, 1.1F, 12345678.91, DATE'2024-01-31', 1), (-5, -0.5F, -0.01, DATE'1969-12-31', 2), (NULL, NULL, NULL, NULL, NULL)"
    )
    spark.sql(f"ALTER TABLE {t(p)} CHANGE COLUMN id TYPE BIGINT")
    spark.sql(f"ALTER TABLE {t(p)} CHANGE COLUMN part TYPE BIGINT")
    spark.sql(f"INSERT INTO {t(p)} VALUES (9223372036854775807, 2.2F, 1.5, DATE'2000-01-01', 9223372036854775807)")
    spark.sql(f"ALTER TABLE {t(p)} CHANGE COLUMN f TYPE DOUBLE")
    spark.sql(f"ALTER TABLE {t(p)} CHANGE COLUMN dec TYPE DECIMAL(20,2)")
    spark.sql(f"ALTER TABLE {t(p)} CHANGE COLUMN dt TYPE TIMESTAMP_NTZ")
    spark.sql(
        f"INSERT INTO {t(p)} VALUES (7, 3.3D, 123456789012345678.99, TIMESTAMP_NTZ'2024-06-01 12:34:56.789', 3)"
    )


@spark_case
def spark_variant(spark, p):
    """variant columns (parse_json) with a checkpoint (checkpointInterval 2)."""
    spark.sql(f"CREATE TABLE {t(p)} (id BIGINT, v VARIANT) USING delta TBLPROPERTIES ('delta.checkpointInterval' = '2')")
    spark.sql(
        f"INSERT INTO {t(p)} SELECT 1, parse_json('{{\"a\": 1, \"b\": [true, null, \"x\"], \"c\": {{\"d\": 1.5}}}}') "
        f"UNION ALL SELECT 2, parse_json('\"just a string\"') UNION ALL SELECT 3, parse_json('12345678901234567890') "
        f"UNION ALL SELECT 4, NULL UNION ALL SELECT 5, parse_json('null') UNION ALL SELECT 6, parse_json('[1, -2.25, 3e10]')"
    )
    spark.sql(f"INSERT INTO {t(p)} SELECT 7, parse_json('{{\"z\": \"ünï\", \"a\": {{}}, \"e\": []}}')")
    spark.sql(
        f"INSERT INTO {t(p)} SELECT 8, CAST(DATE'2024-01-31' AS VARIANT) "
        "UNION ALL SELECT 9, CAST(TIMESTAMP'2024-01-31 10:00:00.5' AS VARIANT) "
        "UNION ALL SELECT 10, CAST(CAST(1.25 AS DECIMAL(30, 10)) AS VARIANT)"
    )


@spark_case
def spark_identity_generated_check(spark, p):
    """An identity column, a generated column and a CHECK constraint."""
    spark.sql(
        f"CREATE TABLE {t(p)} (id BIGINT GENERATED ALWAYS AS IDENTITY, x INT, y INT GENERATED ALWAYS AS (x * 2), v STRING) USING delta"
    )
    spark.sql(f"ALTER TABLE {t(p)} ADD CONSTRAINT x_positive CHECK (x > 0)")
    spark.sql(f"INSERT INTO {t(p)} (x, v) VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"INSERT INTO {t(p)} (x, v) VALUES (3, 'c')")


# ---- delta-rs cases ----------------------------------------------------------


def _arrow(ids, extra=None):
    cols = {
        "id": pa.array(ids, pa.int64()),
        "part": pa.array([f"p{i % 3}" for i in ids], pa.string()),
        "v": pa.array([i / 4 for i in ids], pa.float64()),
        "day": pa.array([datetime.date(2024, 1, 1 + i % 5) for i in ids], pa.date32()),
    }
    if extra:
        cols.update(extra)
    return pa.table(cols)


@rs_case
def rs_append_overwrite_partitioned(p):
    """write_deltalake append and overwrite, partitioned by a string and a date."""
    from deltalake import write_deltalake

    write_deltalake(p, _arrow(range(0, 10)), partition_by=["part", "day"])
    write_deltalake(p, _arrow(range(10, 20)), partition_by=["part", "day"], mode="append")
    write_deltalake(p, _arrow(range(100, 105)), partition_by=["part", "day"], mode="overwrite")
    write_deltalake(p, _arrow(range(200, 203)), partition_by=["part", "day"], mode="append")


@rs_case
def rs_schema_merge(p):
    """write_deltalake with schema_mode="merge" adding a column."""
    from deltalake import write_deltalake

    write_deltalake(p, _arrow(range(0, 5)))
    write_deltalake(p, _arrow(range(5, 10), {"added": pa.array([f"n{i}" for i in range(5, 10)], pa.string())}), mode="append", schema_mode="merge")
    write_deltalake(p, _arrow(range(10, 12)), mode="append", schema_mode="merge")


@rs_case
def rs_merge_delete(p):
    """DeltaTable.merge() upserts and deletes, then delete()."""
    from deltalake import DeltaTable, write_deltalake

    write_deltalake(p, _arrow(range(0, 20)), partition_by=["part"])
    dt = DeltaTable(p)
    src = _arrow(list(range(15, 25)), {"op": pa.array(["d" if i % 4 == 0 else "u" for i in range(15, 25)], pa.string())})
    (
        dt.merge(src, "t.id = s.id", source_alias="s", target_alias="t")
        .when_matched_delete("s.op = 'd'")
        .when_matched_update({"v": "s.v + 1000"})
        .when_not_matched_insert({"id": "s.id", "part": "s.part", "v": "s.v", "day": "s.day"})
        .execute()
    )
    DeltaTable(p).delete("id < 3")


@rs_case
def rs_optimize_z_order(p):
    """optimize.z_order() on a partitioned table: one partition (partition_filters), then all, between appends and a delete."""
    from deltalake import DeltaTable, write_deltalake

    for i in range(8):
        write_deltalake(p, _arrow(range(i * 7, i * 7 + 7)), partition_by=["part"], mode="append")
    DeltaTable(p).optimize.z_order(["id", "v"], partition_filters=[("part", "=", "p1")])
    DeltaTable(p).delete("id % 5 = 0")
    write_deltalake(p, _arrow(range(300, 306)), partition_by=["part"], mode="append")
    DeltaTable(p).optimize.z_order(["v", "day"])
    write_deltalake(p, _arrow(range(400, 402)), partition_by=["part"], mode="append")


@rs_case
def rs_optimize_checkpoint_cleanup(p):
    """optimize.compact(), optimize.z_order(), create_checkpoint(), cleanup_metadata()."""
    from deltalake import DeltaTable, write_deltalake

    for i in range(6):
        write_deltalake(p, _arrow(range(i * 10, i * 10 + 10)), partition_by=["part"], mode="append")
    DeltaTable(p).optimize.compact()
    DeltaTable(p).delete("id = 7")
    DeltaTable(p).optimize.z_order(["id", "v"])
    dt = DeltaTable(p)
    dt.create_checkpoint()
    write_deltalake(p, _arrow(range(100, 103)), partition_by=["part"], mode="append")
    # cleanup_metadata removes commits older than delta.logRetentionDuration
    # that a checkpoint covers.
    dt = DeltaTable(p)
    dt.alter.set_table_properties({"delta.logRetentionDuration": "interval 0 seconds"})
    DeltaTable(p).create_checkpoint()
    DeltaTable(p).cleanup_metadata()
    # Commits after the cleanup, so that earlier versions can be answered.
    write_deltalake(p, _arrow(range(200, 204)), partition_by=["part"], mode="append")
    DeltaTable(p).delete("id = 201")


@rs_case
def rs_s3_conditional_put(p, storage_options):
    """On the local S3 server, delta-rs committing with S3 conditional put (storage option aws_conditional_put=etag: If-None-Match on each commit, no locking provider): appends, an overwrite, delete(), optimize.compact(), a checkpoint."""
    from deltalake import DeltaTable, write_deltalake

    so = storage_options
    write_deltalake(p, _arrow(range(0, 10)), partition_by=["part"], storage_options=so)
    for i in range(1, 4):
        write_deltalake(p, _arrow(range(i * 10, i * 10 + 10)), partition_by=["part"], mode="append", storage_options=so)
    DeltaTable(p, storage_options=so).delete("id % 4 = 0")
    DeltaTable(p, storage_options=so).optimize.compact()
    DeltaTable(p, storage_options=so).create_checkpoint()
    write_deltalake(p, _arrow(range(100, 105)), partition_by=["part"], mode="overwrite", storage_options=so)
    write_deltalake(p, _arrow(range(200, 203)), partition_by=["part"], mode="append", storage_options=so)


S3_CASES.append("rs_s3_conditional_put")


# ---- answers -----------------------------------------------------------------


def answered_versions(latest):
    """The latest version and two earlier ones (the one before it and the middle one)."""
    return sorted({latest, max(latest - 1, 0), latest // 2})


def spark_rows(spark, p, version):
    df = spark.read.format("delta").option("versionAsOf", version).load(p)
    sel = []
    for f in df.schema.fields:
        n = f"`{f.name}`"
        sel.append(f"to_json({n}) AS {n}" if f.dataType.typeName() == "variant" else n)
    df = df.selectExpr(*sel)
    return {"version": version, "schema": json.loads(df.schema.json()), "rows": norm_table(df.toArrow())}


def spark_protocol(spark, p):
    log = spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, p)
    return json.loads(log.unsafeVolatileSnapshot().protocol().json())["protocol"]


def log_files(p):
    """The names under _delta_log/ (subfolders as DIR/NAME), so that the test can check the case has what it is about."""
    out = []
    if "://" in p:
        return out
    log = os.path.join(p, "_delta_log")
    for dirpath, _, names in os.walk(log):
        rel = os.path.relpath(dirpath, log)
        out += sorted(n if rel == "." else f"{rel}/{n}" for n in names if not n.startswith("."))
    return out


def answer_spark(spark, p):
    detail = spark.sql(f"DESCRIBE DETAIL {t(p)}").collect()[0].asDict(recursive=True)
    latest = spark.sql(f"DESCRIBE HISTORY {t(p)} LIMIT 1").collect()[0]["version"]
    return {
        "latest": latest,
        "versions": [spark_rows(spark, p, v) for v in answered_versions(latest)],
        "detail": {k: plain(detail.get(k)) for k in ("numFiles", "sizeInBytes", "partitionColumns", "minReaderVersion", "minWriterVersion", "tableFeatures")},
        "protocol": spark_protocol(spark, p),
    }


def answer_rs(p, storage_options=None):
    from deltalake import DeltaTable

    dt = DeltaTable(p, storage_options=storage_options)
    latest = dt.version()
    versions, unanswered = [], []
    for v in answered_versions(latest):
        try:
            tbl = DeltaTable(p, version=v, storage_options=storage_options).to_pyarrow_table()
        except Exception as e:  # e.g. a version whose commits cleanup_metadata removed
            unanswered.append({"version": v, "error": f"{type(e).__name__}: {e}"})
            continue
        versions.append({"version": v, "schema": None, "rows": norm_table(tbl)})
    aa = dt.get_add_actions(flatten=True)
    aa = pa.table(aa) if not isinstance(aa, pa.Table) else aa
    pr = dt.protocol()
    return {
        "latest": latest,
        "versions": versions,
        "unanswered": unanswered,
        "detail": {
            "numFiles": aa.num_rows,
            "sizeInBytes": int(sum(aa.column("size_bytes").to_pylist())) if aa.num_rows else 0,
            "partitionColumns": list(dt.metadata().partition_columns),
        },
        "protocol": {
            "minReaderVersion": pr.min_reader_version,
            "minWriterVersion": pr.min_writer_version,
            "readerFeatures": pr.reader_features,
            "writerFeatures": pr.writer_features,
        },
    }


def run(spark_fn, root, cases, storage_options=None):
    """Writes and answers each case (None: all, but not the S3 ones); one failing case does not stop the others.

    storage_options (delta-rs's, for a root on S3) are passed to the delta-rs
    cases that take them (S3_CASES)."""
    import importlib.metadata as m

    if cases is None:
        cases = SPARK_CASES + [c for c in RS_CASES if c not in S3_CASES]
    out = []
    for name in cases:
        p = os.path.join(root, name)
        res = {"case": name, "path": p}
        fn = globals()[name]
        res["description"] = (fn.__doc__ or "").strip()
        try:
            if name in SPARK_CASES:
                spark = spark_fn()
                res["engine"] = f"Spark {spark.version} + Delta {m.version('delta-spark')}"
                fn(spark, p)
                with session_conf(spark, **{k.replace(".", "__"): v for k, v in getattr(fn, "answer_conf", {}).items()}):
                    res.update(answer_spark(spark, p))
            else:
                import deltalake

                res["engine"] = f"delta-rs (deltalake) {deltalake.__version__}"
                if storage_options is not None:
                    fn(p, storage_options)
                else:
                    fn(p)
                res.update(answer_rs(p, storage_options))
        except Exception as e:  # the case is answered with its failure, the batch goes on
            traceback.print_exc()
            msg = str(e).strip()
            # A Py4JJavaError's text is the whole Java stack: its first lines say it.
            res["error"] = f"{type(e).__name__}: " + " ".join(msg.splitlines()[:3])[:600]
        res["logFiles"] = log_files(p)
        out.append(res)
    return out
