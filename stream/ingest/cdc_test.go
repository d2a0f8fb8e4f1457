package ingest_test

import (
	"errors"
	"testing"

	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/stream/ingest"
)

// TestCheckCDC: the one rule for change-event input, as Options.Validate
// and the CLI's merge apply it; every break is a *ingest.CDCError naming
// the rule, matching ErrInvalidOptions.
func TestCheckCDC(t *testing.T) {
	for _, tc := range []struct {
		name, format, deleteWhen string
		mode                     sink.OutputMode
		want                     []ingest.CDCProblem
	}{
		{"no change events", "", "", sink.Append, nil},
		{"debezium update", ingest.CDCDebezium, "", sink.Update, nil},
		{"unknown format", "maxwell", "", sink.Update, []ingest.CDCProblem{ingest.CDCUnsupportedFormat}},
		{"append", ingest.CDCDebezium, "", sink.Append, []ingest.CDCProblem{ingest.CDCNeedsUpdate}},
		{"delete-when", ingest.CDCDebezium, "op = 'd'", sink.Update, []ingest.CDCProblem{ingest.CDCDeleteWhen}},
		{"both", ingest.CDCDebezium, "op = 'd'", sink.Append, []ingest.CDCProblem{ingest.CDCNeedsUpdate, ingest.CDCDeleteWhen}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ingest.CheckCDC(tc.format, tc.mode, tc.deleteWhen)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ingest.ErrInvalidOptions) {
				t.Fatalf("%v does not match ErrInvalidOptions", err)
			}
			var got []ingest.CDCProblem
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range j.Unwrap() {
					got = append(got, e.(*ingest.CDCError).Problem)
				}
			} else {
				var ce *ingest.CDCError
				if !errors.As(err, &ce) {
					t.Fatalf("%v is not a *CDCError", err)
				}
				got = []ingest.CDCProblem{ce.Problem}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("problems %v, want %v (%v)", got, tc.want, err)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("problems %v, want %v (%v)", got, tc.want, err)
				}
			}
			// Options.Validate applies the same rule.
			o := ingest.Options{CDCFormat: tc.format, OutputMode: tc.mode, DeleteWhen: tc.deleteWhen}
			var ce *ingest.CDCError
			if err := o.Validate(); !errors.As(err, &ce) || ce.Problem != tc.want[0] {
				t.Fatalf("Validate: %v, want the CDC problem %v", err, tc.want[0])
			}
		})
	}
}
