package parquetio

import (
	"bytes"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// valueLayout mirrors the memory layout of parquet.Value in parquet-go
// v0.32.0 (value.go: ptr, u64, kind, definitionLevel, repetitionLevel,
// columnIndex stored as its complement). The shredder builds the values of a
// top-level column without levels and then sets them in one pass through
// this mirror: parquet.Value.Level is not inlined (it has a panic path) and
// costs about 3x the rest of building a value, which made it the largest
// single cost of writing a flat batch. The mirror is used only when
// levelsMirrorOK confirms that it gives exactly what Level gives; otherwise
// (a parquet-go upgrade changed the layout) setLevels falls back to Level,
// and TestLevelsMirror fails so that the mirror gets updated.
type valueLayout struct {
	ptr   *byte
	u64   uint64
	kind  int8
	def   byte
	rep   byte
	colix uint16
}

// levelsMirrorOK reports whether valueLayout matches parquet.Value: same
// size, and setting levels through it equals Value.Level on values of every
// physical kind.
func levelsMirrorOK() bool {
	if unsafe.Sizeof(parquet.Value{}) != unsafe.Sizeof(valueLayout{}) ||
		unsafe.Alignof(parquet.Value{}) != unsafe.Alignof(valueLayout{}) || layoutMismatch() != "" {
		return false
	}
	samples := []parquet.Value{
		parquet.BooleanValue(true), parquet.Int32Value(-5), parquet.Int64Value(1 << 40),
		parquet.FloatValue(1.5), parquet.DoubleValue(-2.25), parquet.ByteArrayValue([]byte("lakesink")),
		parquet.FixedLenByteArrayValue([]byte{1, 2, 3, 4}), parquet.ByteArrayValue(nil),
	}
	for _, v := range samples {
		for _, l := range [][2]int{{0, 0}, {1, 0}, {3, 7}, {255, 1000}} {
			want := v.Level(0, l[0], l[1])
			got := []parquet.Value{v}
			setLevelsMirror(got, l[0], l[1])
			g := got[0]
			if g.DefinitionLevel() != want.DefinitionLevel() || g.RepetitionLevel() != want.RepetitionLevel() ||
				g.Column() != want.Column() || g.Kind() != want.Kind() || g.IsNull() != want.IsNull() ||
				!bytes.Equal(g.Bytes(), want.Bytes()) {
				return false
			}
		}
	}
	return true
}

// valueFields are parquet.Value's fields as valueLayout mirrors them: name,
// type kind, offset and size, in order.
var valueFields = []struct {
	name string
	kind reflect.Kind
}{
	{"ptr", reflect.Pointer}, {"u64", reflect.Uint64}, {"kind", reflect.Int8},
	{"definitionLevel", reflect.Uint8}, {"repetitionLevel", reflect.Uint8}, {"columnIndex", reflect.Uint16},
}

// layoutMismatch compares parquet.Value's fields (through reflect: names,
// kinds, offsets, sizes) with valueLayout's; "" when they match, else what
// differs.
func layoutMismatch() string {
	pv, ml := reflect.TypeFor[parquet.Value](), reflect.TypeFor[valueLayout]()
	if pv.NumField() != len(valueFields) || ml.NumField() != len(valueFields) {
		return "parquet.Value has " + strconv.Itoa(pv.NumField()) + " fields"
	}
	for i, want := range valueFields {
		f, m := pv.Field(i), ml.Field(i)
		if f.Name != want.name || f.Type.Kind() != want.kind || f.Offset != m.Offset || f.Type.Size() != m.Type.Size() {
			return "parquet.Value field " + f.Name + " (" + f.Type.String() + ") differs from the mirror's " + m.Name + " (" + m.Type.String() + ")"
		}
	}
	return ""
}

// setLevels gives the non-null values in vals definition level def and every
// value column index col (repetition level 0: top-level columns), as
// v.Level(0, def, col) would for each non-null value and v.Level(0, 0, col)
// for each null. fast selects the layout mirror (see levelsMirrorOK).
func setLevels(vals []parquet.Value, def, col int, fast bool) {
	if fast {
		setLevelsMirror(vals, def, col)
		return
	}
	for i, v := range vals {
		if v.IsNull() {
			vals[i] = v.Level(0, 0, col)
		} else {
			vals[i] = v.Level(0, def, col)
		}
	}
}

func setLevelsMirror(vals []parquet.Value, def, col int) {
	if len(vals) == 0 {
		return
	}
	ls := unsafe.Slice((*valueLayout)(unsafe.Pointer(&vals[0])), len(vals))
	d, c := byte(def), ^uint16(col)
	for i := range ls {
		l := &ls[i]
		if l.kind != 0 { // kind 0 is a null (parquet-go stores the Kind's complement)
			l.def = d
		} else {
			l.def = 0
		}
		l.rep = 0
		l.colix = c
	}
}

// withLevels is v.Level(rep, def, col), through the layout mirror when fast
// (see levelsMirrorOK); rep and def are at most 255 and col at most
// parquet.MaxColumnIndex (compilePlan refuses deeper or wider schemas).
func withLevels(v parquet.Value, rep, def, col int, fast bool) parquet.Value {
	if !fast {
		return v.Level(rep, def, col)
	}
	l := (*valueLayout)(unsafe.Pointer(&v))
	l.rep, l.def, l.colix = byte(rep), byte(def), ^uint16(col)
	return v
}
