package schema_test

import (
	"fmt"
	"time"

	"github.com/lakesink/lakesink/schema"
)

// A Go struct becomes a Batch: the columns come from the parquet tags.
func ExampleFromStructs() {
	type event struct {
		ID     int64          `parquet:"id"`
		Day    schema.Date    `parquet:"day"`
		At     time.Time      `parquet:"at"`
		Amount schema.Decimal `parquet:"amount,decimal(10:2)"`
		Note   *string        `parquet:"note"`
	}
	day, _ := schema.ParseDate("2024-01-31")
	amount, _ := schema.ParseDecimal("12.30", 2)
	batch, err := schema.FromStructs([]event{{ID: 1, Day: day, At: time.Unix(0, 0).UTC(), Amount: amount}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range batch.Schema.Fields {
		fmt.Printf("%s %s nullable=%v\n", f.Name, f.Type.TypeName(), f.Nullable)
	}
	fmt.Println(batch.Rows[0][1], batch.Rows[0][3], batch.Rows[0][4])
	// Output:
	// id long nullable=false
	// day date nullable=false
	// at timestamp nullable=false
	// amount decimal(10,2) nullable=false
	// note string nullable=true
	// 2024-01-31 12.30 <nil>
}

// Dates are days since 1970-01-01, in the calendar of the time given.
func ExampleDateOf() {
	d := schema.DateOf(time.Date(2024, 1, 31, 23, 0, 0, 0, time.FixedZone("PST", -8*3600)))
	fmt.Println(d, int32(d), d.Time().Format(time.RFC3339))
	// Output: 2024-01-31 19753 2024-01-31T00:00:00Z
}
