// Package lint holds repository-wide checks that run with `go test`: imports
// flow only downward through the layers of the package table in
// docs/design.md (read from the file), no production code
// calls panic, and every package has a doc.go.
package lint
