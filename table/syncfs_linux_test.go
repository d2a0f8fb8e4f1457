package table_test

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS flushes the file system holding dir (syncfs(2)), so that a timed
// phase does not pay for writing back what an untimed one left dirty.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
