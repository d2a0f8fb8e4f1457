package table

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"

	"github.com/lakesink/lakesink/schema"
)

// Identity column metadata keys (PROTOCOL.md "Identity Columns").
const (
	metaIdentityStart               = "delta.identity.start"
	metaIdentityStep                = "delta.identity.step"
	metaIdentityHighWaterMark       = "delta.identity.highWaterMark"
	metaIdentityAllowExplicitInsert = "delta.identity.allowExplicitInsert"
)

// ErrIdentityColumn: a write gave a value for a GENERATED ALWAYS AS
// IDENTITY column, or the column's values ran out of the long range. The
// message names the column; nothing is committed.
var ErrIdentityColumn = fmt.Errorf("identity column")

// identityColumn is one top-level identity column of the table schema and
// the values a write assigns to it.
type identityColumn struct {
	index       int
	name        string
	start, step int64
	always      bool // allowExplicitInsert=false: GENERATED ALWAYS
	next        int64
	assigned    bool  // a value was generated
	last        int64 // the last value generated
}

// bindIdentity finds the identity columns of sch (top level, type long, as
// Delta allows them) and the first value each would generate: the
// smallest start + k*step (k >= 0) beyond delta.identity.highWaterMark, or
// start when there is none (PROTOCOL.md "Identity Columns").
func bindIdentity(sch *schema.StructType) ([]*identityColumn, error) {
	var out []*identityColumn
	for i, f := range sch.Fields {
		if _, ok := f.Metadata[metaIdentityStart]; !ok {
			continue
		}
		start, ok1 := metaInt64(f.Metadata[metaIdentityStart])
		step, ok2 := metaInt64(f.Metadata[metaIdentityStep])
		if !ok1 || !ok2 || step == 0 {
			return nil, fmt.Errorf("%w: column %s: invalid identity start %v / step %v", ErrIdentityColumn, f.Name,
				f.Metadata[metaIdentityStart], f.Metadata[metaIdentityStep])
		}
		if f.Type != schema.TypeLong {
			return nil, fmt.Errorf("%w: column %s is %s, Delta's identity columns are bigint", ErrIdentityColumn, f.Name, f.Type.TypeName())
		}
		explicit, _ := f.Metadata[metaIdentityAllowExplicitInsert].(bool)
		c := &identityColumn{index: i, name: f.Name, start: start, step: step, always: !explicit, next: start}
		if hwm, ok := metaInt64(f.Metadata[metaIdentityHighWaterMark]); ok {
			next, err := nextIdentity(start, step, hwm)
			if err != nil {
				return nil, fmt.Errorf("%w: column %s: %w", ErrIdentityColumn, f.Name, err)
			}
			c.next = next
		}
		out = append(out, c)
	}
	return out, nil
}

// nextIdentity is the first start + k*step (k >= 0) strictly beyond hwm in
// the direction of step, or an error when it overflows a long (Delta
// refuses writes whose identity values overflow).
func nextIdentity(start, step, hwm int64) (int64, error) {
	if step > 0 && start > hwm || step < 0 && start < hwm {
		return start, nil
	}
	// k = floor((hwm - start) / step) + 1; both operands have step's sign.
	diff := new(big.Int).Sub(big.NewInt(hwm), big.NewInt(start))
	k := new(big.Int).Quo(diff, big.NewInt(step)) // truncation = floor: the quotient is >= 0
	k.Add(k, big.NewInt(1))
	v := k.Mul(k, big.NewInt(step)).Add(k, big.NewInt(start))
	if !v.IsInt64() {
		return 0, fmt.Errorf("the next value after high-water mark %d overflows a long", hwm)
	}
	return v.Int64(), nil
}

// mulAdd is start + k*step, false on overflow.
func mulAdd(start, k, step int64) (int64, bool) {
	v := new(big.Int).Mul(big.NewInt(k), big.NewInt(step))
	v.Add(v, big.NewInt(start))
	return v.Int64(), v.IsInt64()
}

// fill assigns generated values to the column in rows (table-schema
// layout) where it is null, and refuses a value given for a GENERATED
// ALWAYS column (Delta's DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED).
// A null of a BY DEFAULT column counts as "no value given". Rows are copied
// before they are changed (the batch's own rows are never modified); base
// numbers rows in errors.
func (c *identityColumn) fill(rows [][]any, base int) ([][]any, error) {
	var out [][]any
	for i, row := range rows {
		if c.index < len(row) && row[c.index] != nil {
			if c.always {
				return nil, &schema.RowError{Row: base + i, Field: c.name,
					Err: fmt.Errorf("%w: %s is GENERATED ALWAYS AS IDENTITY: a value cannot be given for it", ErrIdentityColumn, c.name)}
			}
			continue
		}
		if out == nil {
			out = slices.Clone(rows)
		}
		v := c.next
		nr := make([]any, max(len(row), c.index+1))
		copy(nr, row)
		nr[c.index] = v
		out[i] = nr
		c.assigned, c.last = true, v
		next, ok := mulAdd(v, 1, c.step)
		if !ok {
			return nil, &schema.RowError{Row: base + i, Field: c.name,
				Err: fmt.Errorf("%w: %s: the identity value after %d overflows a long", ErrIdentityColumn, c.name, v)}
		}
		c.next = next
	}
	if out == nil {
		return rows, nil
	}
	return out, nil
}

// withHighWaterMarks returns sch with delta.identity.highWaterMark of each
// column that generated values set to the last one, and whether any did.
func withHighWaterMarks(sch *schema.StructType, cols []*identityColumn) (*schema.StructType, bool) {
	changed := false
	out := &schema.StructType{Fields: slices.Clone(sch.Fields)}
	for _, c := range cols {
		if !c.assigned {
			continue
		}
		f := out.Fields[c.index]
		md := make(map[string]any, len(f.Metadata)+1)
		for k, v := range f.Metadata {
			md[k] = v
		}
		md[metaIdentityHighWaterMark] = json.Number(strconv.FormatInt(c.last, 10))
		f.Metadata = md
		out.Fields[c.index] = f
		changed = true
	}
	return out, changed
}

func metaInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case float64:
		return int64(x), x == math.Trunc(x)
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// fillIdentity fills every identity column of rows (fill).
func fillIdentity(cols []*identityColumn, rows [][]any, base int) ([][]any, error) {
	for _, c := range cols {
		var err error
		if rows, err = c.fill(rows, base); err != nil {
			return nil, err
		}
	}
	return rows, nil
}
