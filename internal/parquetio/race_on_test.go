//go:build race

package parquetio

// raceEnabled: the tests run under the race detector, where sync.Pool
// drops about a quarter of what is put back (runtime: sync.Pool.Put under
// race), so pooled buffers are allocated anew more often.
const raceEnabled = true
