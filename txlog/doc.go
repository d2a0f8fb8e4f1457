// Package txlog implements the Delta Lake transaction log (delta-io/delta
// PROTOCOL.md): the actions (protocol, metaData, add, remove, txn,
// commitInfo, domainMetadata, cdc and the V2 checkpoint actions), commit
// files _delta_log/%020d.json, checkpoints and _last_checkpoint, log replay
// into an immutable Snapshot ("Action Reconciliation"), optimistic commits
// with Delta's conflict rules, and log cleanup ("Metadata Cleanup").
//
// Lifecycle:
//
//	log, err := txlog.New(store, txlog.DefaultOptions()) // store rooted at the TABLE ROOT
//	snap, err := log.Snapshot(ctx)                       // latest; ErrTableNotFound if none
//	tx := log.Begin(snap)                                // nil snapshot: create the table (version 0)
//	tx.ReadTxn(appID)                                    // what the commit depends on
//	tx.Add(txlog.Action{Add: &txlog.Add{...}}, txlog.Action{Txn: &txlog.Txn{...}})
//	v, err := tx.Commit(ctx, "STREAMING UPDATE", params, metrics)
//	snap = tx.PostCommitSnapshot()                       // version v, built in memory
//	snap, err = log.Update(ctx, snap)                    // before the next write: only the commits after it
//
// A writer that keeps the snapshot its commit produced and brings it up
// to date with Update (Delta's DeltaLog.update, delta-kernel-rs's
// Snapshot::try_new_from) lists nothing and reads only the commits after
// it: a blind append costs a constant number of store calls whatever the
// size of the log. Table properties are parsed once per snapshot
// (Snapshot.Properties, TableProperties, DeltaConfigs.scala's rules).
//
// Reading: Snapshot loads the newest complete checkpoint (classic,
// multi-part with all parts present, or V2 UUID-named JSON/Parquet with
// sidecars) and the commits after it. _last_checkpoint is only a hint: the
// listing starts after its version's key, and a missing, stale or corrupt
// hint falls back to a full listing. Versions after the checkpoint must be
// contiguous (else *CorruptLogError "versions not contiguous"). Paths in
// actions are URIs (RFC 2396): Snapshot.FileKey decodes them to storage keys
// relative to the table root; absolute URIs inside the root are accepted,
// anything outside is ErrPathOutsideTable. Log compaction files are
// recognised but not read (optional for readers).
//
// Writing: Commit writes commitInfo first, then protocol/metaData, then the
// other actions, with put-if-absent. A lost race is checked against every
// winning commit (ConflictChecker rules) and retried at the next version up
// to Options.CommitAttempts. After a commit whose version is a multiple of
// the checkpoint interval (delta.checkpointInterval, default 10) a classic
// V1 checkpoint is written; its failure does not fail the commit.
//
// Version checksums (PROTOCOL.md, "Version Checksum File"): after each
// commit, _delta_log/N.crc is written best effort (a failure never fails
// the commit), derived from the read snapshot, the winning commits the
// commit was rebased over and its own actions, without a replay. Loading a
// version checks the replay state against the newest .crc listed at or
// below it and at or after its checkpoint, as the replay passes that
// version (one .crc read; what the file holds only; an unparseable .crc is ignored, as Spark does); a
// mismatch is a *CorruptLogError naming the .crc and the version, whose
// Err is a *ChecksumMismatchError (Options.SkipChecksumValidation skips the
// check). A commit file with no action (0 bytes) is a *CorruptLogError.
//
// Commit times (History, SnapshotAsOf): the commit files' modification
// times monotonized as Delta's DeltaHistoryManager does, or inCommitTimestamp
// from the enablement version on when in-commit timestamps are enabled.
//
// Table features: CheckReadSupported / CheckWriteSupported (and
// Snapshot.CheckReadSupported) name the first feature lakesink cannot honour.
// Loading a snapshot never refuses a protocol: the log of a column-mapping or
// deletion-vector table replays correctly; readers of rows must call the check.
//
// Hostile input: a commit line longer than Options.MaxLineBytes
// (DefaultMaxLineBytes, 64 MiB) is a *CorruptLogError naming the file,
// version and line, found after reading at most that many bytes; lines are
// split in time linear in the file whatever the store's read size, and an
// accepted line costs a small multiple of its size (a 20 MiB add measured
// 6.8x while decoded). Gaps between versions are computed from the commits
// listed, so a stray file with a 20-digit version is reported, not counted
// through. An action type this package does not know is ignored by replay
// (Snapshot.UnknownAction reports it) but never dropped silently: Checkpoint
// refuses with *UnknownActionError, as it refuses a protocol naming a
// feature or version it does not know. A checkpoint Parquet file is read
// whole into memory; the snapshot of 100,000 small adds opened from one
// measured ~460 B per file.
//
// Concurrency: a Log holds no mutable state and may be shared by goroutines;
// every guarantee rests on the store's put-if-absent, so many processes may
// write one table. A Snapshot never changes. A Transaction belongs to one
// goroutine.
//
// Errors: *CorruptLogError (ErrCorruptLog), *UnsupportedFeatureError
// (ErrUnsupportedFeature), *UnknownActionError (ErrUnknownAction and
// ErrUnsupportedFeature), *ConflictError (ErrConcurrentModification),
// *ChecksumMismatchError (inside a *CorruptLogError),
// ErrVersionAlreadyExists, ErrCommitStateUnknown, ErrTableNotFound,
// ErrTableExists, ErrVersionNotFound, ErrTimestampOutOfRange,
// ErrPathOutsideTable, ErrInvalidTransaction. See errors.go.
package txlog
