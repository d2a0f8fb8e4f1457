// Package lint holds repository-wide checks that run with `go test`: imports
// flow only downward through the layers of DESIGN.md, no production code
// calls panic, and every package has a doc.go.
package lint
