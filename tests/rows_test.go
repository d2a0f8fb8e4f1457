package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/lakesink/lakesink/reader"
)

// flightKey is a flight row rendered with all its columns.
func flightKey(date string, delay, distance int64, origin, dest string) string {
	return fmt.Sprintf("%s|%d|%d|%s|%s", date, delay, distance, origin, dest)
}

// sourceKeys reads the flight NDJSON files and returns key -> count.
func sourceKeys(t *testing.T, files []string) map[string]int {
	t.Helper()
	keys := map[string]int{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var r struct {
				Date        string `json:"date"`
				Delay       int64  `json:"delay"`
				Distance    int64  `json:"distance"`
				Origin      string `json:"origin"`
				Destination string `json:"destination"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			keys[flightKey(r.Date, r.Delay, r.Distance, r.Origin, r.Destination)]++
		}
		fh.Close()
	}
	return keys
}

// tableKeys reads every live row of the Delta table or file-sink directory
// at dir through the reader (the log decides which files are live) and
// returns key -> count.
func tableKeys(t *testing.T, dir string) map[string]int {
	t.Helper()
	ctx := context.Background()
	snap, err := reader.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	keys := map[string]int{}
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Columns: []string{"date", "delay", "distance", "origin", "destination"}}) {
		if err != nil {
			t.Fatal(err)
		}
		ts, _ := rec.Values[0].(time.Time)
		delay, _ := rec.Values[1].(int64)
		dist, _ := rec.Values[2].(int64)
		origin, _ := rec.Values[3].(string)
		dest, _ := rec.Values[4].(string)
		keys[flightKey(ts.UTC().Format("2006/01/02 15:04"), delay, dist, origin, dest)]++
	}
	return keys
}

// compareKeys fails the test unless got holds each key of want exactly as often.
func compareKeys(t *testing.T, got, want map[string]int) {
	t.Helper()
	var missing, extra []string
	for k, n := range want {
		if got[k] < n {
			missing = append(missing, k)
		} else if got[k] > n {
			extra = append(extra, fmt.Sprintf("%s x%d", k, got[k]))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing)+len(extra) > 0 {
		t.Fatalf("table differs from the source: %d rows missing (first: %v), %d duplicated or unknown (first: %v)",
			len(missing), head(missing), len(extra), head(extra))
	}
}

func head(s []string) []string {
	if len(s) > 3 {
		return s[:3]
	}
	return s
}

func flightFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../testdata/flights/flights-*.json")
	if err != nil || len(files) != 20 {
		t.Fatalf("want the 20 committed flight files in testdata/flights, found %d (%v)", len(files), err)
	}
	sort.Strings(files)
	return files
}
