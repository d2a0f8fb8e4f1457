package table

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/txlog"
)

// writeHonours are the writer features Write honours beyond
// txlog.SupportedWriterFeatures: columnMapping (files by physical names and
// field ids), checkConstraints (every new row is checked, checkRows),
// identityColumns (values generated above the high-water mark, which the
// commit's metaData moves on: identity.go), changeDataFeed (appends and
// overwrites change no row, so no change data files are needed) and
// rowTracking (only new rows; txlog's commit assigns their row ids).
// Generated columns are refused by name: their values would have to be
// computed, and expr has no arithmetic.
var writeHonours = []string{txlog.FeatureColumnMapping, txlog.FeatureCheckConstraints, txlog.FeatureIdentityColumns,
	txlog.FeatureChangeDataFeed, txlog.FeatureRowTracking}

// propConstraintPrefix starts the key of a CHECK constraint in the table
// configuration: delta.constraints.{name} = SQL boolean expression
// (PROTOCOL.md "CHECK Constraints").
const propConstraintPrefix = "delta.constraints."

// constraint is one CHECK constraint bound to the table schema.
type constraint struct {
	name, text string
	pred       *expr.Predicate
}

// bindConstraints binds every CHECK constraint of the table configuration
// to sch, in name order. A constraint that lakesink's predicate language
// (package expr: comparisons of a column with literals, IN, LIKE, IS NULL,
// AND/OR/NOT) cannot parse or bind is refused: a
// *txlog.UnsupportedFeatureError for checkConstraints naming it, since a
// writer that cannot check a constraint must not write
// (PROTOCOL.md "CHECK Constraints").
func bindConstraints(config map[string]string, sch *schema.StructType) ([]constraint, error) {
	var out []constraint
	for _, k := range slices.Sorted(maps.Keys(config)) {
		name, ok := strings.CutPrefix(k, propConstraintPrefix)
		if !ok {
			continue
		}
		text := config[k]
		p, err := expr.ParseAndBind(text, sch)
		if err != nil {
			return nil, &txlog.UnsupportedFeatureError{Feature: txlog.FeatureCheckConstraints, Write: true,
				Detail: fmt.Sprintf("constraint %s CHECK (%s) cannot be evaluated by lakesink: %v", name, text, err)}
		}
		out = append(out, constraint{name: name, text: text, pred: p})
	}
	return out, nil
}

// ConstraintViolationError: a row of a write breaks a CHECK constraint of
// the table (its expression is false or null for the row, as Delta's
// CheckDeltaInvariant fails both). The write commits nothing. It arrives
// inside a *schema.RowError naming the row; errors.Is(err,
// ErrConstraintViolation) holds.
type ConstraintViolationError struct {
	Constraint string // the constraint's name (delta.constraints.{name})
	Expr       string // its expression
	// Values of the columns the expression reads, by name, as the row
	// holds them.
	Values map[string]any
}

// Error implements error.
func (e *ConstraintViolationError) Error() string {
	var vals []string
	for _, k := range slices.Sorted(maps.Keys(e.Values)) {
		vals = append(vals, fmt.Sprintf("%s = %v", k, showValue(e.Values[k])))
	}
	return fmt.Sprintf("CHECK constraint %s (%s) violated by row with values %s", e.Constraint, e.Expr, strings.Join(vals, ", "))
}

func showValue(v any) any {
	if v == nil {
		return "NULL"
	}
	return v
}

// Is makes errors.Is(err, ErrConstraintViolation) hold.
func (e *ConstraintViolationError) Is(target error) bool { return target == ErrConstraintViolation }

// checkRows returns a *schema.RowError (row numbered from base) wrapping a
// *ConstraintViolationError for the first row, in table-schema layout,
// that breaks one of checks.
func checkRows(checks []constraint, rows [][]any, base int) error {
	for _, c := range checks {
		for i, row := range rows {
			if c.pred.EvalRow(row) == expr.True {
				continue
			}
			vals := map[string]any{}
			for _, col := range c.pred.Columns() {
				vals[col.Name()] = expr.ValueAt(row, col.Index)
			}
			return &schema.RowError{Row: base + i, Err: &ConstraintViolationError{Constraint: c.name, Expr: c.text, Values: vals}}
		}
	}
	return nil
}
