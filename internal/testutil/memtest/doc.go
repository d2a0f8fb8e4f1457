// Package memtest gives tests real stores instead of hand-written fakes: a
// fresh in-memory store (storage.Open of a mem:// URL unique to the call),
// the copy of a testdata directory in one, and a local-disk store for tests
// that need chosen modification times (set with os.Chtimes, as the file
// source orders files by them). Faults are added with storage/faultstore.
// Each store is closed when the test ends.
package memtest
