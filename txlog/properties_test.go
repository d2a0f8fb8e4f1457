package txlog

import (
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
