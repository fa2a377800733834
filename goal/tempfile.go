package goal

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
)

// tempFile creates a temporary file for spooling. Where the system allows
// it (not Windows) its name is removed at once, so the file lives only as
// long as its descriptor: an interrupted or killed run leaves nothing in
// the temporary directory.
func tempFile(pattern string) (*os.File, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	if runtime.GOOS != "windows" {
		os.Remove(f.Name())
	}
	return f, nil
}

// closeTemp closes a file from tempFile and removes its name if it still
// has one.
func closeTemp(f *os.File) error {
	err := f.Close()
	if rerr := os.Remove(f.Name()); err == nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = rerr
	}
	return err
}
