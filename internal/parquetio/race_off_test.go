//go:build !race

package parquetio

// raceEnabled: see race_on_test.go.
const raceEnabled = false
