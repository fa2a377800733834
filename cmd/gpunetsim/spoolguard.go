package main

import (
	"fmt"
	"io"
	"os"

	"github.com/gpunetsim/gpunetsim/exp"
)

// spoolReserve is the free space a GOAL schedule read from a stream
// (standard input, a pipe) must leave in the temporary directory, where
// goal.Open copies it to read it twice; spoolCheck is how often, in bytes
// read, the free space is looked at.
const (
	spoolReserve = 1 << 30
	spoolCheck   = 64 << 20
)

// spoolGuard reads a stream that goal.Open spools, stopping with an error
// once the temporary directory would keep less than spoolReserve free: a
// stream that does not end (yes | gpunetsim goal run -) filled the disk
// before it failed, for every program on it.
type spoolGuard struct {
	r          io.Reader
	name, dir  string
	free       func(dir string) uint64 // freeDisk; 0 means unknown
	read, next uint64
}

// guardSpool returns in, guarded by a spoolGuard unless it is a regular
// file (read in place, never spooled).
func guardSpool(in io.Reader, name string) io.Reader {
	if f, ok := in.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return in
		}
	}
	// The first look after spoolCheck bytes: a small schedule piped in
	// is never refused for a nearly full disk it fits on.
	return &spoolGuard{r: in, name: name, dir: os.TempDir(), free: freeDisk, next: spoolCheck}
}

func (g *spoolGuard) Read(p []byte) (int, error) {
	if g.read >= g.next {
		if free := g.free(g.dir); free != 0 && free < spoolReserve {
			return 0, fmt.Errorf("%s: after %s read from the stream, %s holds %s free, under the %s it must keep: give the schedule as a file (it is read in place), or set TMPDIR to a larger disk",
				g.name, exp.FormatBytes(float64(g.read)), g.dir, exp.FormatBytes(float64(free)), exp.FormatBytes(spoolReserve))
		}
		g.next = g.read + spoolCheck
	}
	n, err := g.r.Read(p)
	g.read += uint64(n)
	return n, err
}
