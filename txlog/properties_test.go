package txlog

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidateProperties(t *testing.T) {
	good := map[string]string{
		"delta.checkpointInterval":           "5",
		"delta.logRetentionDuration":         "interval 30 days",
		"delta.deletedFileRetentionDuration": "interval 1 week",
		"delta.targetFileSize":               "128mb",
		"delta.dataSkippingNumIndexedCols":   "-1",
		"delta.appendOnly":                   "TRUE",
		"delta.enableExpiredLogCleanup":      "false",
		"my.own.property":                    "anything",
	}
	for _, iv := range []string{"interval 1000000 microseconds", "interval 1.5 seconds", "INTERVAL 1 WEEK", "interval 1 day 12 hours"} {
		if err := ValidateProperties(map[string]string{"delta.logRetentionDuration": iv}); err != nil {
			t.Errorf("%q (Spark accepts it): %v", iv, err)
		}
	}
	if d, err := ParseInterval("interval 1.5 seconds"); err != nil || d != 1500*time.Millisecond {
		t.Errorf("1.5 seconds = %v, %v", d, err)
	}
	if err := ValidateProperties(good); err != nil {
		t.Fatalf("good properties: %v", err)
	}
	for k, v := range map[string]string{
		"delta.checkpointInterval":           "abc",
		"delta.logRetentionDuration":         "30 dayz",
		"delta.deletedFileRetentionDuration": "soon",
		"delta.targetFileSize":               "0",
		"delta.dataSkippingNumIndexedCols":   "-2",
		"delta.appendOnly":                   "yes",
	} {
		err := ValidateProperties(map[string]string{k: v})
		if !errors.Is(err, ErrInvalidProperty) || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%q: %v, want ErrInvalidProperty naming the key", k, v, err)
		}
	}
	// Every bad value is listed.
	err := ValidateProperties(map[string]string{"delta.checkpointInterval": "0", "delta.appendOnly": "maybe"})
	if err == nil || !strings.Contains(err.Error(), "checkpointInterval") || !strings.Contains(err.Error(), "appendOnly") {
		t.Errorf("two bad values: %v", err)
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{"134217728": 128 << 20, "128mb": 128 << 20, "1 GiB": 1 << 30, "64k": 64 << 10, "7b": 7, "1pb": 1 << 50} {
		if got, err := ParseByteSize(in); err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "mb", "12 parsecs", "99999999999999999999", "9000000000t"} {
		if _, err := ParseByteSize(in); !errors.Is(err, ErrInvalidProperty) {
			t.Errorf("ParseByteSize(%q): %v, want ErrInvalidProperty", in, err)
		}
	}
}

// TestTablePropertiesDeltaConfigsRules: each kind of value is parsed as
// Delta's DeltaConfigs.scala parses it (booleans by String.toBoolean,
// integers by Integer.parseInt, neither trimmed; intervals trimmed and
// case-insensitive), and an invalid value holds the default while Err
// names the key.
func TestTablePropertiesDeltaConfigsRules(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		ok         bool
		check      func(TableProperties) bool
	}{
		{PropAppendOnly, "TRUE", true, func(p TableProperties) bool { return p.AppendOnly }},
		{PropAppendOnly, "False", true, func(p TableProperties) bool { return !p.AppendOnly }},
		{PropAppendOnly, " true", false, func(p TableProperties) bool { return !p.AppendOnly }},
		{PropAppendOnly, "1", false, nil},
		{PropEnableExpiredLogCleanup, "false", true, func(p TableProperties) bool { return !p.EnableExpiredLogCleanup }},
		{PropEnableExpiredLogCleanup, "no", false, func(p TableProperties) bool { return p.EnableExpiredLogCleanup }},
		{PropCheckpointInterval, "+5", true, func(p TableProperties) bool { return p.CheckpointInterval == 5 }},
		{PropCheckpointInterval, " 5", false, func(p TableProperties) bool { return p.CheckpointInterval == 10 }},
		{PropCheckpointInterval, "2147483648", false, nil}, // an Int
		{PropCheckpointInterval, "-1", false, nil},
		{PropDataSkippingNumIndexedCols, "-1", true, func(p TableProperties) bool { return p.DataSkippingNumIndexedCols == -1 }},
		{PropDataSkippingNumIndexedCols, "-2", false, func(p TableProperties) bool { return p.DataSkippingNumIndexedCols == 32 }},
		{PropLogRetentionDuration, "  INTERVAL 2 Days ", true, func(p TableProperties) bool { return p.LogRetention == 48*time.Hour }},
		{PropLogRetentionDuration, "interval 1 day -1 hours", true, func(p TableProperties) bool { return p.LogRetention == 23*time.Hour }},
		{PropLogRetentionDuration, "interval 1 hour -2 hours", false, func(p TableProperties) bool { return p.LogRetention == DefaultLogRetention }},
		{PropLogRetentionDuration, "interval 1 month", false, nil},
		{PropDeletedFileRetentionDuration, "interval 1.5 seconds", true, func(p TableProperties) bool { return p.DeletedFileRetention == 1500*time.Millisecond }},
		{PropDeletedFileRetentionDuration, "", false, nil},
		{PropTargetFileSize, "128mb", true, func(p TableProperties) bool { return p.TargetFileSizeBytes == 128<<20 }},
		{PropTargetFileSize, "0", false, func(p TableProperties) bool { return p.TargetFileSizeBytes == DefaultTargetFileSizeBytes }},
		{PropCheckpointPolicy, "v2", true, func(p TableProperties) bool { return p.CheckpointPolicy == CheckpointPolicyV2 }},
		{PropCheckpointPolicy, "V3", false, func(p TableProperties) bool { return p.CheckpointPolicy == CheckpointPolicyClassic }},
		{PropColumnMappingMode, "Name", true, func(p TableProperties) bool { return p.ColumnMappingMode == ColumnMappingName }},
		{PropInCommitTimestampEnablementVersion, "12", true, func(p TableProperties) bool { return p.InCommitTimestampEnablementVersion == 12 }},
	} {
		p, err := ParseTableProperties(map[string]string{tc.key: tc.value, "my.own": "x"})
		if tc.ok != (err == nil) {
			t.Errorf("%s=%q: err %v, want ok=%v", tc.key, tc.value, err, tc.ok)
		}
		if !tc.ok {
			var pe *PropertyError
			if !errors.As(err, &pe) || pe.Key != tc.key || !errors.Is(err, ErrInvalidProperty) || p.Err(tc.key) == nil {
				t.Errorf("%s=%q: %v, want a *PropertyError naming the key", tc.key, tc.value, err)
			}
			if p.Err(PropAppendOnly+"x") != nil {
				t.Errorf("Err of another key is not nil")
			}
		}
		if tc.check != nil && !tc.check(p) {
			t.Errorf("%s=%q: parsed %+v", tc.key, tc.value, p)
		}
	}
	if d := DefaultTableProperties(); d.CheckpointInterval != 10 || !d.EnableExpiredLogCleanup || d.LogRetention != 30*24*time.Hour ||
		d.DeletedFileRetention != 7*24*time.Hour || d.DataSkippingNumIndexedCols != 32 || d.CheckpointPolicy != "classic" {
		t.Errorf("defaults: %+v", d)
	}
}

// TestSnapshotPropertiesNameTheVersion: a snapshot's properties are parsed
// once; an invalid one is reported with the version, and log cleanup,
// which reads delta.logRetentionDuration, fails naming it instead of
// cleaning with the default (Delta's MetadataCleanup throws there).
func TestSnapshotPropertiesNameTheVersion(t *testing.T) {
	ctx := context.Background()
	l := newTestLog(t, newMemStore(), Options{})
	tx := l.Begin(nil)
	p := NewTableProtocol(testSchema)
	tx.Add(Action{Protocol: &p}, Action{MetaData: &Metadata{ID: "tbl", Format: Format{Provider: "parquet"}, SchemaString: testSchema,
		Configuration: map[string]string{PropLogRetentionDuration: "30 dayz", PropCheckpointInterval: "7"}}})
	if _, err := tx.Commit(ctx, "CREATE TABLE", nil, nil); err != nil {
		t.Fatal(err)
	}
	snap, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	props := snap.Properties()
	if props.CheckpointInterval != 7 || props.LogRetention != DefaultLogRetention {
		t.Errorf("properties %+v", props)
	}
	err = props.Err(PropLogRetentionDuration)
	if err == nil || !strings.Contains(err.Error(), "delta.logRetentionDuration") || !strings.Contains(err.Error(), "version 0") {
		t.Errorf("Err: %v, want the key and version 0", err)
	}
	if _, err := l.Cleanup(ctx, CleanupOptions{DryRun: true}); !errors.Is(err, ErrInvalidProperty) {
		t.Errorf("Cleanup (dry run): %v, want ErrInvalidProperty", err)
	}
}
