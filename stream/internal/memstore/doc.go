// Package memstore is a small in-memory storage.Store used by the stream
// packages' tests until storage ships its own mem:// driver. It keeps
// every object in a map under one lock (check-and-store, as go-cloud's
// memblob does), so PutIfAbsent has exactly one winner, and it can inject
// failures on chosen paths to simulate a crash between two durability steps.
//
// Concurrency: every method is safe for concurrent use; no I/O happens.
package memstore
