package tests

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/lakesink/lakesink/internal/testutil/benchproc"
	"github.com/lakesink/lakesink/internal/testutil/corpus"
)

// Whole-process benchmarks of the CLI (make bench): each figure is the wall
// time and peak RSS (getrusage ru_maxrss of the finished child) of
// bin/lakesink run as a subprocess, against a baseline that is also a whole
// process (this test binary re-executed, see baselineEnv) doing the same work
// with raw parquet-go, measured in the same run: the two alternate, A B A B,
// LAKESINK_BENCH_PAIRS pairs (default 3; internal/testutil/benchproc.AB), and the medians are printed with
// the median of the pairwise ratios (so the ratio holds when the machine's
// speed drifts). Each row names the goroutines either side uses: parquet-go's
// reader and writer are one goroutine; lakesink's writer splits a file's
// columns into one lane per CPU.
//
// The input is ../shared/data/flights-3m.parquet (3M rows: date TIMESTAMP,
// delay, distance INT64, origin, destination BYTE_ARRAY); without it the
// benchmarks skip with a message.

// baselineEnv makes this test binary run one baseline (see runBaseline)
// instead of its tests: an init function notices it (init runs before
// TestMain, so the child does not rebuild the CLI).
const baselineEnv = "LAKESINK_BENCH_BASELINE"

func init() {
	what := os.Getenv(baselineEnv)
	if what == "" {
		return
	}
	if err := runBaseline(what, os.Args[len(os.Args)-2], os.Args[len(os.Args)-1]); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runBaseline is one baseline process:
//
//   - "rewrite": read every row of in with parquet-go's row reader and write
//     them to out/part-0.parquet with parquet-go's writer (snappy, the
//     file's schema, parquet-go's default encodings), fsync the file and the
//     directory; one goroutine. What any Parquet-to-Parquet copy must do, with
//     no Delta log, no statistics, no validation.
//   - "rewrite-partitioned": the same, each row to out/origin=X/part-0.parquet
//     by its origin value (the column stays in the file: no projection),
//     1024 rows buffered per origin; one goroutine, one open writer per origin.
//   - "ndjson": read every .parquet file under in (a Delta table's data
//     files, _delta_log excluded) with parquet-go's row reader and print each
//     row as one NDJSON object to out ("-": stdout) with a per-type appender
//     (no encoding/json): the bytes lakesink scan prints for the flights
//     schema. The parallelism of lakesink scan: up to GOMAXPROCS goroutines
//     decode row groups while the main goroutine prints.
//   - "json", "csv": decode the NDJSON or CSV file in with the standard
//     library into a typed struct and write the rows with parquet-go (see
//     baselineText, cli_text_bench_test.go).
func runBaseline(what, in, out string) error {
	switch what {
	case "rewrite", "rewrite-partitioned":
		return baselineRewrite(in, out, what == "rewrite-partitioned")
	case "ndjson":
		return baselineNDJSON(in, out)
	case "json", "csv":
		return baselineText(what, in, out)
	}
	return fmt.Errorf("unknown baseline %q", what)
}

func baselineRewrite(in, outDir string, byOrigin bool) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return err
	}
	type out struct {
		f    *os.File
		w    *parquet.Writer
		rows []parquet.Row // buffered: written 1024 at a time
	}
	outs := map[string]*out{}
	open := func(dir string) (*out, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		of, err := os.Create(filepath.Join(dir, "part-0.parquet"))
		if err != nil {
			return nil, err
		}
		return &out{f: of, w: parquet.NewWriter(of, pf.Schema(), parquet.Compression(&parquet.Snappy))}, nil
	}
	originCol := -1
	if byOrigin {
		leaf, ok := pf.Schema().Lookup("origin")
		if !ok {
			return errors.New("no origin column")
		}
		originCol = leaf.ColumnIndex
	}
	buf := make([]parquet.Row, 1024)
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		for {
			n, err := rows.ReadRows(buf)
			if originCol < 0 && n > 0 {
				o := outs[""]
				if o == nil {
					var oerr error
					if o, oerr = open(outDir); oerr != nil {
						return oerr
					}
					outs[""] = o
				}
				if _, err := o.w.WriteRows(buf[:n]); err != nil {
					return err
				}
				n = 0
			}
			for _, r := range buf[:n] {
				key := ""
				if originCol >= 0 {
					for _, v := range r {
						if v.Column() == originCol {
							key = "origin=" + string(v.ByteArray())
						}
					}
				}
				o := outs[key]
				if o == nil {
					var oerr error
					if o, oerr = open(filepath.Join(outDir, key)); oerr != nil {
						return oerr
					}
					outs[key] = o
				}
				o.rows = append(o.rows, r.Clone())
				if len(o.rows) == cap(buf) {
					if _, err := o.w.WriteRows(o.rows); err != nil {
						return err
					}
					o.rows = o.rows[:0]
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
		}
		rows.Close()
	}
	for key, o := range outs {
		if _, err := o.w.WriteRows(o.rows); err != nil {
			return err
		}
		if err := o.w.Close(); err != nil {
			return err
		}
		if err := o.f.Sync(); err != nil {
			return err
		}
		if err := o.f.Close(); err != nil {
			return err
		}
		if err := syncDir(filepath.Join(outDir, key)); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func baselineNDJSON(tableDir, out string) error {
	w := io.Writer(os.Stdout)
	if out != "-" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var files []string
	err := filepath.WalkDir(tableDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.Contains(p, "_delta_log") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	slices.Sort(files)
	// The same parallelism as lakesink scan: up to GOMAXPROCS goroutines
	// decode row groups (each its own, in batches of 1,024 rows, one batch
	// ahead), this goroutine prints them in file and row-group order and
	// hands the printed batches back to be read into again.
	type unit struct {
		rg      parquet.RowGroup
		fields  []parquet.Field
		names   [][]byte
		batches chan []parquet.Row
		err     error
	}
	var units []*unit
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			return err
		}
		fields := pf.Schema().Fields()
		names := make([][]byte, len(fields))
		for i, fd := range fields {
			names[i] = strconv.AppendQuote(nil, fd.Name())
		}
		for _, rg := range pf.RowGroups() {
			units = append(units, &unit{rg: rg, fields: fields, names: names, batches: make(chan []parquet.Row, 1)})
		}
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	free := make(chan []parquet.Row, 2*runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := make(chan struct{})
	defer close(stop)
	wg.Add(1)
	go func() { // launches the units in order, GOMAXPROCS at a time
		defer wg.Done()
		for _, u := range units {
			select {
			case sem <- struct{}{}:
			case <-stop:
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				defer close(u.batches)
				rows := u.rg.Rows()
				defer rows.Close()
				for {
					var buf []parquet.Row
					select {
					case buf = <-free:
					default:
						buf = make([]parquet.Row, 1024)
					}
					n, err := rows.ReadRows(buf)
					if n > 0 {
						select {
						case u.batches <- buf[:n]:
						case <-stop:
							return
						}
					}
					if err == io.EOF {
						return
					}
					if err != nil {
						u.err = err
						return
					}
				}
			}()
		}
	}()
	var line []byte
	for _, u := range units {
		for batch := range u.batches {
			for _, r := range batch {
				line = append(line[:0], '{')
				for i, v := range r {
					if i > 0 {
						line = append(line, ',')
					}
					line = append(line, u.names[v.Column()]...)
					line = append(line, ':')
					line = appendValue(line, v, u.fields[v.Column()].Type())
				}
				line = append(line, '}', '\n')
				bw.Write(line)
			}
			select { // the batch's rows are printed: read into them again
			case free <- batch[:cap(batch)]:
			default:
			}
		}
		if u.err != nil {
			return u.err
		}
	}
	return bw.Flush()
}

// appendValue appends one value as lakesink scan prints it for the flights
// columns: null, integers, strings, timestamps without a zone
// ("2001-01-01T00:01:00").
func appendValue(b []byte, v parquet.Value, t parquet.Type) []byte {
	switch {
	case v.IsNull():
		return append(b, "null"...)
	case t.Kind() == parquet.Int64 && isTimestamp(t):
		ts := time.UnixMicro(v.Int64()).UTC()
		b = append(b, '"')
		b = ts.AppendFormat(b, "2006-01-02T15:04:05.999999")
		return append(b, '"')
	case t.Kind() == parquet.Int64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case t.Kind() == parquet.Int32:
		return strconv.AppendInt(b, int64(v.Int32()), 10)
	case t.Kind() == parquet.ByteArray:
		return appendJSONString(b, v.ByteArray())
	}
	return append(b, strconv.Quote(v.String())...)
}

func isTimestamp(t parquet.Type) bool {
	lt := t.LogicalType()
	if lt == nil {
		return false
	}
	_, ok := lt.Value.(*format.TimestampType)
	return ok
}

// appendJSONString appends s as a JSON string (escaping as encoding/json
// does with SetEscapeHTML(false)).
func appendJSONString(b, s []byte) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, fmt.Sprintf(`\u%04x`, c)...)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			b = append(b, fmt.Sprintf(`\u%04x`, r)...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// baselineCmd re-executes this test binary as the baseline what.
func baselineCmd(what, in, out string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$", in, out)
	cmd.Env = append(os.Environ(), baselineEnv+"="+what)
	return cmd
}

// flights3M returns a source directory holding only flights-3m.parquet (a
// hard link or copy), or skips.
func flights3M(b *testing.B) (srcDir, file string) {
	b.Helper()
	p, err := corpus.Find(corpus.Data, "flights-3m.parquet")
	if err != nil {
		b.Skipf("skipped: %v", err)
	}
	srcDir = filepath.Join(b.TempDir(), "src")
	if err := os.MkdirAll(srcDir, 0o755); err != nil {
		b.Fatal(err)
	}
	file = filepath.Join(srcDir, "flights-3m.parquet")
	if err := os.Link(p, file); err != nil {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return srcDir, file
}

func ingestCmd(src, dir string, extra ...string) *exec.Cmd {
	args := append([]string{"ingest", "--source", src, "--format", "parquet", "--trigger", "once",
		"--checkpoint", filepath.Join(dir, "chk"), "--table", filepath.Join(dir, "t")}, extra...)
	return exec.Command(lakesinkBin, args...)
}

// BenchmarkCLIIngestParquet: `lakesink ingest --format parquet --trigger
// once` of flights-3m.parquet into a new Delta table (one commit; data files
// fsynced, the checkpoint's offsets and commits written) against the
// "rewrite" baseline (raw parquet-go read + rewrite of the file, fsynced);
// then the same with --partition-by origin against "rewrite-partitioned".
// Goals (issue 22): wall >= 0.9x of the baseline, peak RSS <= 256 MiB,
// partitioned within 0.8x of unpartitioned (the two lakesink runs
// alternated with each other, at least 5 pairs).
func BenchmarkCLIIngestParquet(b *testing.B) {
	src, file := flights3M(b)
	work := b.TempDir()
	run := func(name string, extra ...string) benchproc.Figures {
		a := func(i int) *exec.Cmd {
			return ingestCmd(src, filepath.Join(work, fmt.Sprintf("%s-%d", name, i)), extra...)
		}
		base := func(i int) *exec.Cmd {
			what := "rewrite"
			if len(extra) > 0 {
				what = "rewrite-partitioned"
			}
			return baselineCmd(what, file, filepath.Join(work, fmt.Sprintf("%s-base-%d", name, i)))
		}
		desc := "raw parquet-go read + rewrite, fsync"
		fig := fmt.Sprintf("ingest --format parquet --trigger once, 3M flights, lakesink %d lanes vs 1 goroutine", runtime.GOMAXPROCS(0))
		if len(extra) > 0 {
			desc = "raw parquet-go read + rewrite split by origin, fsync"
			fig = fmt.Sprintf("ingest --partition-by origin, 3M flights, lakesink %d lanes vs 1 goroutine", runtime.GOMAXPROCS(0))
		}
		return benchproc.AB(b, fig, desc, a, base).Lakesink
	}
	run("plain")
	run("part", "--partition-by", "origin")
	// The goal row compares the two lakesink runs alternated with each
	// other (part, plain, part, plain, ...), not the medians of the two runs
	// above: each of those follows its own baseline, and the partitioned
	// baseline (4 s, ~440 MiB) leaves the machine slower for the process
	// after it than the unpartitioned one (1 s, 80 MiB) does (0.70 s
	// against 0.55 s for the same partitioned ingest, measured by hand).
	var partW, plainW, partCPU, plainCPU []time.Duration
	var ratios []float64
	for i := range max(benchproc.Pairs(), 5) {
		fp := benchproc.Run(b, ingestCmd(src, filepath.Join(work, fmt.Sprintf("vs-part-%d", i)), "--partition-by", "origin"))
		fu := benchproc.Run(b, ingestCmd(src, filepath.Join(work, fmt.Sprintf("vs-plain-%d", i))))
		partW, plainW = append(partW, fp.Wall), append(plainW, fu.Wall)
		partCPU, plainCPU = append(partCPU, fp.CPU), append(plainCPU, fu.CPU)
		ratios = append(ratios, fu.Wall.Seconds()/fp.Wall.Seconds())
		b.Logf("partitioned vs unpartitioned pair %d: %v vs %v", i, fp.Wall.Round(time.Millisecond), fu.Wall.Round(time.Millisecond))
	}
	fmt.Printf("BENCHROW\tingest --partition-by origin vs without, 3M flights, the two alternated, wall (s; speed ratio unpartitioned/partitioned, %d pairs, load %s; goal >= 0.8x)\t%.2f\t%.2f (lakesink ingest without --partition-by)\t%.2fx\n",
		len(ratios), benchproc.Load(), benchproc.Median(partW).Seconds(), benchproc.Median(plainW).Seconds(), benchproc.Median(ratios))
	fmt.Printf("BENCHROW\tingest --partition-by origin vs without, CPU (user+sys s)\t%.2f\t%.2f\t%.2f\n",
		benchproc.Median(partCPU).Seconds(), benchproc.Median(plainCPU).Seconds(), benchproc.Median(partCPU).Seconds()/benchproc.Median(plainCPU).Seconds())
	size := func(dir string) int64 {
		var n int64
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.Contains(p, "_delta_log") {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return err
		})
		return n
	}
	st, _ := os.Stat(file)
	fmt.Printf("BENCHROW\tdata files of the 3M flights (MiB), lakesink vs the source file\t%.1f\t%.1f\t%.2f\n",
		float64(size(filepath.Join(work, "plain-0", "t")))/(1<<20), float64(st.Size())/(1<<20), float64(size(filepath.Join(work, "plain-0", "t")))/float64(st.Size()))
}

// BenchmarkCLIScanNDJSON: `lakesink scan T` (NDJSON to a pipe drained by
// this process) of the 3M flights table ingested by lakesink against the
// "ndjson" baseline (raw parquet-go row read of the same data files + a
// per-type appender, to a pipe), both with GOMAXPROCS decoding goroutines
// and one printing; the two outputs must be the same bytes. Goals (issue
// 22): wall >= 0.5x of the baseline, peak RSS <= 256 MiB.
func BenchmarkCLIScanNDJSON(b *testing.B) {
	src, _ := flights3M(b)
	dir := b.TempDir()
	benchproc.Run(b, ingestCmd(src, dir))
	tbl := filepath.Join(dir, "t")
	var aBytes, bBytes hashWriter
	a := func(int) *exec.Cmd {
		cmd := exec.Command(lakesinkBin, "scan", tbl)
		cmd.Stdout = aBytes.reset()
		return cmd
	}
	base := func(int) *exec.Cmd {
		cmd := baselineCmd("ndjson", tbl, "-")
		cmd.Stdout = bBytes.reset()
		return cmd
	}
	benchproc.AB(b, fmt.Sprintf("scan to NDJSON, 3M flights, both %d decoding goroutines + 1 printing", runtime.GOMAXPROCS(0)),
		"raw parquet-go row read + per-type appender", a, base)
	if sa, sb := aBytes.h.Sum(nil), bBytes.h.Sum(nil); !bytes.Equal(sa, sb) {
		b.Fatalf("outputs differ: lakesink %d bytes (sha256 %x), baseline %d (%x)", aBytes.n, sa, bBytes.n, sb)
	}
}

// hashWriter counts and hashes what the last process it was reset for
// printed.
type hashWriter struct {
	n int64
	h hash.Hash
}

func (w *hashWriter) reset() *hashWriter {
	w.n, w.h = 0, sha256.New()
	return w
}

func (w *hashWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	w.h.Write(p)
	return len(p), nil
}
