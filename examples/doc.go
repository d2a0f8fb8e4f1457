// Package examples shows lakesink used as a library from another Go module:
// it imports only lakesink's exported packages (a replace directive points
// at the repository), so anything here that needs an internal package fails
// to build. Each Example function is run by `go test ./...` inside
// examples/ (and by `make test`), its printed output checked.
package examples
