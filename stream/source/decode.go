package source

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/lakesink/lakesink/schema"
)

// rawRecord is one input record before conversion: a JSON object or a CSV
// row, the 1-based line it starts on, and its text.
type rawRecord struct {
	line   int
	json   json.RawMessage // format json
	fields []string        // format csv
	text   string
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// splitJSON yields the records of a JSON file: NDJSON (one value per line;
// blank lines skipped; a line holding an array yields its elements), or a
// file whose first non-blank character is '[' holding one top-level array of
// records. A line that is not JSON is reported through bad.
func splitJSON(data []byte, emit func(rawRecord), bad func(line int, text string, err error)) {
	data = bytes.TrimPrefix(data, utf8BOM)
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		start := len(data) - len(trimmed)
		dec := json.NewDecoder(bytes.NewReader(data))
		lineAt := func(off int64) int { return 1 + bytes.Count(data[:off], []byte("\n")) }
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
			emit(rawRecord{line: lineAt(off), json: v, text: string(v)})
		}
		if _, err := dec.Token(); err != nil {
			bad(lineAt(dec.InputOffset()), "", fmt.Errorf("malformed JSON array: %w", err))
		}
		return
	}
	line := 0
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
			bad(line, string(l), errors.New("malformed JSON"))
			continue
		}
		if l[0] == '[' {
			var elems []json.RawMessage
			_ = json.Unmarshal(l, &elems) // valid JSON checked above
			for _, e := range elems {
				emit(rawRecord{line: line, json: e, text: string(l)})
			}
			continue
		}
		emit(rawRecord{line: line, json: json.RawMessage(l), text: string(l)})
	}
}

// splitCSV yields the rows of a CSV file with a header line. Rows whose
// field count differs from the header's are reported through bad.
func splitCSV(data []byte, delim rune, emit func(header []string, r rawRecord), bad func(line int, text string, err error)) {
	data = bytes.TrimPrefix(data, utf8BOM)
	lines := bytes.Split(data, []byte("\n"))
	textOf := func(line int) string {
		if line >= 1 && line <= len(lines) {
			return strings.TrimSuffix(string(lines[line-1]), "\r")
		}
		return ""
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = delim
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err == io.EOF {
		return
	}
	if err != nil {
		bad(1, textOf(1), fmt.Errorf("malformed CSV header: %w", err))
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
			bad(line, textOf(line), fmt.Errorf("malformed CSV: %w", err))
			return // the reader cannot resynchronise reliably
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			bad(line, textOf(line), fmt.Errorf("%d fields, header has %d", len(rec), len(header)))
			continue
		}
		emit(header, rawRecord{line: line, fields: rec, text: textOf(line)})
	}
}

// csvRow converts one CSV row to a row of schema, mapping columns by header
// name (exact, then case-insensitive). An empty cell is null (Spark's default
// nullValue ""); schema fields without a column are null. extra lists the
// header columns that no schema field maps to (see csvExtra): when c.strict,
// a non-empty cell in one is an unknown-field error; else it is ignored.
func (c *converter) csvRow(header, fields []string, sch *schema.StructType, extra []int) ([]any, error) {
	if c.strict {
		for _, j := range extra {
			if fields[j] != "" {
				return nil, atField(header[j], unknownFieldError{})
			}
		}
	}
	row := make([]any, len(sch.Fields))
	for i, f := range sch.Fields {
		j := indexOf(header, f.Name)
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
