package checkpoint

import (
	"encoding/json"
	"slices"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func sortInt64s(s []int64) { slices.Sort(s) }
