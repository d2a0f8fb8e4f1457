//go:build unix

package storage

import (
	"io/fs"
	"os"
	"syscall"
)

// openLocal is os.OpenFile for the local backend's regular files and
// directories, without the poller: os.OpenFile offers every descriptor to
// the runtime's epoll (refused for a regular file or directory: EPERM) and
// sets and clears O_NONBLOCK around it, an epoll_ctl and 4 fcntl per open
// that a commit (about 8 opens) pays for nothing; os.NewFile of a blocking
// descriptor costs one fcntl. The file reads and writes as an os.File
// does; errors are *fs.PathError as os.OpenFile's.
func openLocal(name string, flag int, perm os.FileMode) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// renameLocal is os.Rename of a temporary file onto its final name
// without os.Rename's lstat of the target (which only lets a directory
// replace an empty directory; the temporary is always a file, and
// rename(2) refuses a directory target by itself: EISDIR). Errors are
// *os.LinkError as os.Rename's.
func renameLocal(from, to string) error {
	var err error
	for {
		err = syscall.Rename(from, to)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
