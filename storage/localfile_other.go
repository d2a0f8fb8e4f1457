//go:build !unix

package storage

import "os"

// openLocal is os.OpenFile (see localfile_unix.go).
func openLocal(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// renameLocal is os.Rename (see localfile_unix.go).
func renameLocal(from, to string) error { return os.Rename(from, to) }
