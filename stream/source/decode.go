package source

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lakesink/lakesink/schema"
)

// rawRecord is one input record before conversion: a JSON value or a CSV
// row, the 1-based line it starts on, and (json) the text of its line, or
// its own text for an element of a top-level array.
type rawRecord struct {
	line   int
	json   []byte   // format json
	fields []string // format csv; reused by the next row
	raw    []byte   // format json: see text
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// splitJSON yields the records of a JSON file: NDJSON (one value per line;
// blank lines skipped; a line holding an array yields its elements), or a
// file whose first non-blank character is '[' holding one top-level array of
// records, and then NDJSON again (lines after the array's last are not
// dropped: a file of arrays one a line). A line that is not JSON, or text
// after the array on its last line, is reported through bad. It stops when
// emit or bad returns false.
func splitJSON(data []byte, emit func(rawRecord) bool, bad func(line int, text string, err error) bool) {
	data = bytes.TrimPrefix(data, utf8BOM)
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		start := len(data) - len(trimmed)
		dec := json.NewDecoder(bytes.NewReader(data))
		// lineAt counts lines forward from the last offset asked for (the
		// offsets only grow), so a file costs one pass.
		lineOff, lineNo := int64(0), 1
		lineAt := func(off int64) int {
			if off < lineOff {
				lineOff, lineNo = 0, 1
			}
			lineNo += bytes.Count(data[lineOff:off], []byte("\n"))
			lineOff = off
			return lineNo
		}
		if _, err := dec.Token(); err != nil {
			bad(lineAt(int64(start)), "", err)
			return
		}
		for dec.More() {
			off := dec.InputOffset()
			// Skip the separator and blanks to find the element's own line.
			for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
				off++
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				bad(lineAt(off), abbreviate(data[off:min(int(off)+200, len(data))]), fmt.Errorf("malformed JSON array element: %w", err))
				return
			}
			if !emit(rawRecord{line: lineAt(off), json: v, raw: v}) {
				return
			}
		}
		if _, err := dec.Token(); err != nil {
			bad(lineAt(dec.InputOffset()), "", fmt.Errorf("malformed JSON array: %w", err))
			return
		}
		// What follows the array is read as NDJSON lines (a file of one
		// array a line starts like an array file), not dropped: the rest
		// of the array's last line must be blank.
		end := dec.InputOffset()
		rest := data[end:]
		line := lineAt(end)
		tail := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			tail, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if t := bytes.TrimSpace(tail); len(t) > 0 {
			if !bad(line, string(t), errors.New("data after the JSON array")) {
				return
			}
		}
		if len(rest) > 0 {
			splitJSONLines(rest, line+1, emit, bad)
		}
		return
	}
	splitJSONLines(data, 1, emit, bad)
}

// splitJSONLines yields the records of NDJSON data whose first line is line
// first (see splitJSON).
func splitJSONLines(data []byte, first int, emit func(rawRecord) bool, bad func(line int, text string, err error) bool) {
	line := first - 1
	for len(data) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		if !json.Valid(l) {
			if !bad(line, string(l), errors.New("malformed JSON")) {
				return
			}
			continue
		}
		if l[0] == '[' {
			var elems []json.RawMessage
			_ = json.Unmarshal(l, &elems) // valid JSON checked above
			for _, e := range elems {
				if !emit(rawRecord{line: line, json: e, raw: l}) {
					return
				}
			}
			continue
		}
		if !emit(rawRecord{line: line, json: l, raw: l}) {
			return
		}
	}
}

// lineText finds the text of a line of a file, for the records reported
// bad: forward from the line asked for last (one pass over the file when
// the lines asked for only grow).
type lineText struct {
	data []byte
	off  int // where line no starts
	no   int
}

// text is line n (1-based) without its line end, or "" past the end.
func (t *lineText) text(n int) string {
	if t.no == 0 || n < t.no {
		t.off, t.no = 0, 1
	}
	for t.no < n {
		i := bytes.IndexByte(t.data[t.off:], '\n')
		if i < 0 {
			return ""
		}
		t.off += i + 1
		t.no++
	}
	if n < 1 {
		return ""
	}
	l := t.data[t.off:]
	if i := bytes.IndexByte(l, '\n'); i >= 0 {
		l = l[:i]
	}
	return strings.TrimSuffix(string(l), "\r")
}

// splitCSV yields the rows of a CSV file with a header line. Rows whose
// field count differs from the header's are reported through bad. The
// fields of a row are reused by the next one. text gives the text of the
// row's first line. It stops when emit or bad returns false.
func splitCSV(data []byte, delim rune, emit func(header []string, r rawRecord, text func() string) bool, bad func(line int, text string, err error) bool) {
	data = bytes.TrimPrefix(data, utf8BOM)
	lines := &lineText{data: data}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = delim
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	header, err := r.Read()
	if err == io.EOF {
		return
	}
	if err != nil {
		bad(1, lines.text(1), fmt.Errorf("malformed CSV header: %w", err))
		return
	}
	header = append([]string(nil), header...)
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			var pe *csv.ParseError
			line := 0
			if errors.As(err, &pe) {
				line = pe.StartLine
			}
			bad(line, lines.text(line), fmt.Errorf("malformed CSV: %w", err))
			return // the reader cannot resynchronise reliably
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			if !bad(line, lines.text(line), fmt.Errorf("%d fields, header has %d", len(rec), len(header))) {
				return
			}
			continue
		}
		if !emit(header, rawRecord{line: line, fields: rec}, func() string { return lines.text(line) }) {
			return
		}
	}
}

// csvRow converts one CSV row to a row of schema (into row, one value a
// field, all nil), mapping columns by header name (cols: csvColumns). An
// empty cell is null (Spark's default nullValue ""); schema fields without a
// column are null. extra lists the header columns that no schema field maps
// to (see csvExtra): when c.strict, a non-empty cell in one is an
// unknown-field error; else it is ignored.
func (c *converter) csvRow(header, fields []string, sch *schema.StructType, cols, extra []int, row []any) ([]any, error) {
	if c.strict {
		for _, j := range extra {
			if fields[j] != "" {
				return nil, atField(header[j], unknownFieldError{})
			}
		}
	}
	for i, f := range sch.Fields {
		j := cols[i]
		if j < 0 || fields[j] == "" {
			if !f.Nullable {
				return nil, atField(f.Name, errNull)
			}
			continue
		}
		v, err := c.stringValue(fields[j], f.Type)
		if err != nil {
			return nil, atField(f.Name, err)
		}
		row[i] = v
	}
	return row, nil
}

// plainCSVRecords yields the records of CSV data holding no quote
// character (whole lines, the last may lack its '\n'), as encoding/csv's
// Reader reads them: a line's "\r\n" (at the end of data a lone '\r') is
// its end, empty lines are skipped, fields are cut at each delim. line is
// the record's line in data, from 1; fields (reused by the next record)
// alias data. It stops when emit returns false.
func plainCSVRecords(data []byte, delim rune, emit func(line int, fields [][]byte) bool) {
	var fields [][]byte
	var sep []byte // a delim of more than a byte
	w := 1
	if delim >= utf8.RuneSelf {
		sep = utf8.AppendRune(nil, delim)
		w = len(sep)
	}
	for line := 1; len(data) > 0; line++ {
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		l = bytes.TrimSuffix(l, []byte{'\r'})
		if len(l) == 0 {
			continue
		}
		fields = fields[:0]
		for {
			var i int
			if sep == nil {
				i = bytes.IndexByte(l, byte(delim))
			} else {
				i = bytes.Index(l, sep)
			}
			if i < 0 {
				break
			}
			fields = append(fields, l[:i])
			l = l[i+w:]
		}
		if fields = append(fields, l); !emit(line, fields) {
			return
		}
	}
}

// csvInterned is how many distinct texts a textInterner keeps, and
// csvInternedLen the longest it keeps.
const (
	csvInterned    = 1 << 12
	csvInternedLen = 32
)

// textInterner hands out boxed strings, one box for repeated short texts
// (a CSV string column of codes and names), so that a row of them costs no
// allocation; and for a timestamp field the value of the previous row's
// text when the text is the same (rows in time order: 14 rows a timestamp
// in the 3M flights), neither parsed nor boxed again. One worker's; zero
// until first used.
type textInterner struct {
	texts map[string]any
	last  []lastValue // by field
	longs []any       // boxed int64 n at n-minInternedLong, for n in [minInternedLong, maxInternedLong)
}

// The int64 values a textInterner boxes once each (delays, distances,
// counts): 8,192 boxes, 128 KiB a worker.
const (
	minInternedLong = -1 << 10
	maxInternedLong = 7 << 10
)

// long returns n boxed.
func (t *textInterner) long(n int64) any {
	if n < minInternedLong || n >= maxInternedLong {
		return n
	}
	if t.longs == nil {
		t.longs = make([]any, maxInternedLong-minInternedLong)
	}
	v := &t.longs[n-minInternedLong]
	if *v == nil {
		*v = n
	}
	return *v
}

// lastValue is a field's previous text and its value.
type lastValue struct {
	text []byte
	v    any
}

// box returns b as a boxed string.
func (t *textInterner) box(b []byte) any {
	if v, ok := t.texts[string(b)]; ok {
		return v
	}
	var v any = string(b)
	if len(b) <= csvInternedLen && len(t.texts) < csvInterned {
		if t.texts == nil {
			t.texts = make(map[string]any)
		}
		t.texts[v.(string)] = v
	}
	return v
}

// lastOf is field i's previous text and value (text nil: none).
func (t *textInterner) lastOf(i, fields int) *lastValue {
	if len(t.last) < fields {
		t.last = make([]lastValue, fields)
	}
	return &t.last[i]
}

// csvRowBytes is csvRow for fields cut from the input (plainCSVRecords):
// the same values and errors, with strings, small longs and repeated
// timestamps boxed through in, and numbers and timestamps parsed without copying their text.
// kinds is csvKinds(sch) (comparing the fields' DataType interfaces for
// each value cost 8% of a CSV row's conversion).
func (c *converter) csvRowBytes(header []string, fields [][]byte, sch *schema.StructType, cols, extra []int, kinds []csvKind, row []any, in *textInterner) ([]any, error) {
	if c.strict {
		for _, j := range extra {
			if len(fields[j]) != 0 {
				return nil, atField(header[j], unknownFieldError{})
			}
		}
	}
	for i, f := range sch.Fields {
		j := cols[i]
		if j < 0 || len(fields[j]) == 0 {
			if !f.Nullable {
				return nil, atField(f.Name, errNull)
			}
			continue
		}
		b := fields[j]
		switch kinds[i] {
		case csvString:
			row[i] = in.box(b)
			continue
		case csvLong:
			if n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err == nil {
				row[i] = in.long(n)
				continue
			}
		case csvTimestamp:
			last := in.lastOf(i, len(sch.Fields))
			if last.text != nil && bytes.Equal(last.text, b) {
				row[i] = last.v
				continue
			}
			if t, ok := c.tp.parseTimestamp(string(b)); ok {
				row[i] = t
				last.text, last.v = append(last.text[:0], b...), row[i]
				continue
			}
		}
		v, err := c.stringValue(string(b), f.Type)
		if err != nil {
			return nil, atField(f.Name, err)
		}
		row[i] = v
	}
	return row, nil
}

// csvKind is how csvRowBytes converts a field's text.
type csvKind uint8

const (
	csvOther     csvKind = iota // stringValue
	csvString                   // the text, interned
	csvLong                     // strconv.ParseInt
	csvTimestamp                // timeParser.parseTimestamp
)

// csvKinds is the csvKind of each field of schema.
func csvKinds(sch *schema.StructType) []csvKind {
	kinds := make([]csvKind, len(sch.Fields))
	for i, f := range sch.Fields {
		switch f.Type {
		case schema.TypeString:
			kinds[i] = csvString
		case schema.TypeLong:
			kinds[i] = csvLong
		case schema.TypeTimestamp, schema.TypeTimestampNTZ:
			kinds[i] = csvTimestamp
		}
	}
	return kinds
}

// csvColumns is, for each field of schema, the index of its header column
// (by indexOf), or -1.
func csvColumns(header []string, sch *schema.StructType) []int {
	cols := make([]int, len(sch.Fields))
	for i, f := range sch.Fields {
		cols[i] = indexOf(header, f.Name)
	}
	return cols
}

// csvExtra returns the indexes of the header columns no field of schema
// maps to (by indexOf).
func csvExtra(header []string, sch *schema.StructType) []int {
	used := make([]bool, len(header))
	for _, f := range sch.Fields {
		if j := indexOf(header, f.Name); j >= 0 {
			used[j] = true
		}
	}
	var extra []int
	for j, u := range used {
		if !u {
			extra = append(extra, j)
		}
	}
	return extra
}

func indexOf(header []string, name string) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	for i, h := range header {
		if strings.EqualFold(h, name) {
			return i
		}
	}
	return -1
}
