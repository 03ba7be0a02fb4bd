//go:build unix

package packer

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// serveVarFile gives packer data (which holds secrets) as a var-file that
// is a named pipe: each open of it reads data, and nothing of it rests on
// disk, so a process killed while packer runs leaves no secret behind (a
// regular file would stay until someone removed it). Packer 1.9.5 reads a
// var-file once, to EOF, when it parses its arguments (each packer
// process gets a pipe of its own): the pipe serves one open, since a
// writer that opened again before that reader closed would add a second
// copy to its stream. stop ends serving and removes the pipe and its
// private directory, made in parent ("" = os.TempDir()).
func serveVarFile(data []byte, parent string) (path string, stop func(), err error) {
	dir, err := os.MkdirTemp(parent, "imgflow-packer-vars-")
	if err != nil {
		return "", nil, fmt.Errorf("create var-file: %w", err)
	}
	path = filepath.Join(dir, "vars.json") // packer reads a .json var-file as JSON
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("create var-file: %w", err)
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		w, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for the reader
		if err != nil {
			return
		}
		defer w.Close()
		select {
		case <-done:
			return
		default:
		}
		_, _ = w.Write(data) // a reader that went away is its own business
	}()
	stop = func() {
		close(done)
		// A reader of our own lets a waiting open return and see done.
		r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			<-stopped
			r.Close()
		}
		_ = os.RemoveAll(dir)
	}
	return path, stop, nil
}
