package tests

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/internal/testutil/benchproc"
	"github.com/lakesink/lakesink/internal/testutil/corpus"
)

// flightsTextSchema is the Delta schema the JSON and CSV ingest rows give
// lakesink (--schema): the flights columns, date as a timestamp written in
// RFC 3339 (UTC).
const flightsTextSchema = `{"type":"struct","fields":[` +
	`{"name":"date","type":"timestamp","nullable":true,"metadata":{}},` +
	`{"name":"delay","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"distance","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"origin","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"destination","type":"string","nullable":true,"metadata":{}}]}`

// flightRecord is one flight as the "json" and "csv" baselines decode it
// (encoding/json and encoding/csv into this typed struct) and write it
// (parquet-go's GenericWriter: required columns, PLAIN, snappy).
type flightRecord struct {
	Date        time.Time `json:"date" parquet:"date,timestamp(microsecond)"`
	Delay       int64     `json:"delay" parquet:"delay"`
	Distance    int64     `json:"distance" parquet:"distance"`
	Origin      string    `json:"origin" parquet:"origin"`
	Destination string    `json:"destination" parquet:"destination"`
}

// flightsTextVersion names the generated files' layout: bump it when
// writeFlightsText changes, so a stale cache is not reused.
const flightsTextVersion = "v1"

// flightsText returns a source directory holding only flights-3m.<ext>
// (ext "ndjson" or "csv"), the 3M rows of flights-3m.parquet as NDJSON (one
// object per line, keys in column order, date RFC 3339) or as CSV with a
// header line. The file is generated once into the user cache directory
// (~/.cache/lakesink/bench, never the repository) and hard-linked or copied
// into a temporary directory; without ../shared the benchmark skips.
func flightsText(b *testing.B, ext string) (srcDir, file string) {
	b.Helper()
	p, err := corpus.Find(corpus.Data, "flights-3m.parquet")
	if err != nil {
		b.Skipf("skipped: %v", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	cache = filepath.Join(cache, "lakesink", "bench")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		b.Fatal(err)
	}
	cached := filepath.Join(cache, "flights-3m-"+flightsTextVersion+"."+ext)
	if _, err := os.Stat(cached); err != nil {
		tmp := cached + ".tmp"
		if err := writeFlightsText(p, tmp, ext); err != nil {
			b.Fatalf("generate %s: %v", cached, err)
		}
		if err := os.Rename(tmp, cached); err != nil {
			b.Fatal(err)
		}
	}
	srcDir = filepath.Join(b.TempDir(), "src")
	if err := os.MkdirAll(srcDir, 0o755); err != nil {
		b.Fatal(err)
	}
	file = filepath.Join(srcDir, "flights-3m."+ext)
	if err := os.Link(cached, file); err != nil {
		in, err := os.Open(cached)
		if err != nil {
			b.Fatal(err)
		}
		defer in.Close()
		out, err := os.Create(file)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			b.Fatal(err)
		}
		if err := out.Close(); err != nil {
			b.Fatal(err)
		}
	}
	return srcDir, file
}

// writeFlightsText writes the rows of the Parquet file in to out as NDJSON
// or CSV (see flightsText).
func writeFlightsText(in, out, ext string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	r := parquet.NewGenericReader[flightRecord](f)
	defer r.Close()
	of, err := os.Create(out)
	if err != nil {
		return err
	}
	defer of.Close()
	w := bufio.NewWriterSize(of, 1<<20)
	var cw *csv.Writer
	if ext == "csv" {
		cw = csv.NewWriter(w)
		if err := cw.Write([]string{"date", "delay", "distance", "origin", "destination"}); err != nil {
			return err
		}
	}
	buf := make([]flightRecord, 1024)
	var line []byte
	for {
		n, err := r.Read(buf)
		for _, rec := range buf[:n] {
			date := rec.Date.UTC().Format(time.RFC3339Nano)
			if cw != nil {
				if err := cw.Write([]string{date, strconv.FormatInt(rec.Delay, 10), strconv.FormatInt(rec.Distance, 10), rec.Origin, rec.Destination}); err != nil {
					return err
				}
				continue
			}
			line = append(line[:0], `{"date":"`...)
			line = append(line, date...)
			line = append(line, `","delay":`...)
			line = strconv.AppendInt(line, rec.Delay, 10)
			line = append(line, `,"distance":`...)
			line = strconv.AppendInt(line, rec.Distance, 10)
			line = append(line, `,"origin":`...)
			line = strconv.AppendQuote(line, rec.Origin)
			line = append(line, `,"destination":`...)
			line = strconv.AppendQuote(line, rec.Destination)
			line = append(line, "}\n"...)
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if cw != nil {
		if cw.Flush(); cw.Error() != nil {
			return cw.Error()
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return of.Close()
}

// baselineText is the "json" and "csv" baselines: decode the file in with
// the standard library (encoding/json's Decoder, or encoding/csv's Reader
// with strconv and time.Parse) into flightRecord values, and write them,
// 1024 at a time, with parquet-go's GenericWriter (snappy, lakesink's
// default compression) to out/part-0.parquet; fsync the file and the
// directory. One goroutine.
func baselineText(format, in, outDir string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	of, err := os.Create(filepath.Join(outDir, "part-0.parquet"))
	if err != nil {
		return err
	}
	defer of.Close()
	w := parquet.NewGenericWriter[flightRecord](of, parquet.Compression(&parquet.Snappy))
	buf := make([]flightRecord, 0, 1024)
	flush := func() error {
		if _, err := w.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
		return nil
	}
	br := bufio.NewReaderSize(f, 1<<20)
	switch format {
	case "json":
		dec := json.NewDecoder(br)
		for {
			var rec flightRecord
			if err := dec.Decode(&rec); err == io.EOF {
				break
			} else if err != nil {
				return err
			}
			if buf = append(buf, rec); len(buf) == cap(buf) {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	case "csv":
		cr := csv.NewReader(br)
		cr.ReuseRecord = true
		if _, err := cr.Read(); err != nil { // the header
			return err
		}
		for {
			fields, err := cr.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if len(fields) != 5 {
				return fmt.Errorf("%d fields", len(fields))
			}
			var rec flightRecord
			if rec.Date, err = time.Parse(time.RFC3339Nano, fields[0]); err != nil {
				return err
			}
			if rec.Delay, err = strconv.ParseInt(fields[1], 10, 64); err != nil {
				return err
			}
			if rec.Distance, err = strconv.ParseInt(fields[2], 10, 64); err != nil {
				return err
			}
			rec.Origin, rec.Destination = fields[3], fields[4]
			if buf = append(buf, rec); len(buf) == cap(buf) {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	default:
		return errors.New("unknown text format " + format)
	}
	if err := flush(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := of.Sync(); err != nil {
		return err
	}
	if err := of.Close(); err != nil {
		return err
	}
	return syncDir(outDir)
}

// BenchmarkCLIIngestText: `lakesink ingest --format json` (then csv)
// `--schema <flights> --trigger once` of the 3M flights as one NDJSON (CSV)
// file into a new Delta table (one commit, data files fsynced) against the
// "json" ("csv") baseline: encoding/json (encoding/csv + strconv +
// time.Parse) decode into a typed struct plus parquet-go's GenericWriter
// write of the same rows, snappy, fsynced, one goroutine. Goal (issue 22):
// wall >= 0.8x of the baseline.
func BenchmarkCLIIngestText(b *testing.B) {
	work := b.TempDir()
	schemaFile := filepath.Join(work, "schema.json")
	if err := os.WriteFile(schemaFile, []byte(flightsTextSchema), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, format := range []string{"json", "csv"} {
		ext := map[string]string{"json": "ndjson", "csv": "csv"}[format]
		src, file := flightsText(b, ext)
		a := func(i int) *exec.Cmd {
			dir := filepath.Join(work, fmt.Sprintf("%s-%d", format, i))
			return exec.Command(lakesinkBin, "ingest", "--source", src, "--format", format, "--schema", schemaFile,
				"--trigger", "once", "--checkpoint", filepath.Join(dir, "chk"), "--table", filepath.Join(dir, "t"))
		}
		base := func(i int) *exec.Cmd {
			return baselineCmd(format, file, filepath.Join(work, fmt.Sprintf("%s-base-%d", format, i)))
		}
		desc := map[string]string{
			"json": "encoding/json decode into a struct + parquet-go write, fsync",
			"csv":  "encoding/csv + strconv decode into a struct + parquet-go write, fsync",
		}[format]
		benchproc.AB(b, fmt.Sprintf("ingest --format %s --trigger once, 3M flights (%s), lakesink %d goroutines vs 1",
			format, ext, runtime.GOMAXPROCS(0)), desc, a, base)
	}
}
