package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// A stream spooled for goal run stops with an error naming the temporary
// directory once it would leave less than spoolReserve free there, checked
// every spoolCheck bytes: yes | gpunetsim goal run - filled the disk.
func TestSpoolGuardStopsBeforeTheDiskFills(t *testing.T) {
	src := io.LimitReader(zeros{}, 4*spoolCheck)
	free := uint64(spoolReserve + spoolCheck + spoolCheck/2)
	g := &spoolGuard{r: src, name: "-", dir: "/tmp", free: func(string) uint64 { return free }, next: spoolCheck}
	var got bytes.Buffer
	buf := make([]byte, 1<<20)
	var err error
	for {
		var n int
		n, err = g.Read(buf)
		got.Write(buf[:n])
		free -= uint64(n) // the spool takes what is read
		if err != nil {
			break
		}
	}
	if err == io.EOF || err == nil || !strings.Contains(err.Error(), "/tmp holds") || !strings.Contains(err.Error(), "give the schedule as a file") {
		t.Fatalf("error %v after %d bytes; want the stream stopped, naming the temporary directory", err, got.Len())
	}
	if n := got.Len(); n != 2*spoolCheck {
		t.Errorf("stopped after %d bytes, want %d (the first look under the reserve)", n, 2*spoolCheck)
	}
	// A nearly full disk: a stream shorter than spoolCheck is not refused.
	small := guardSpool(strings.NewReader("num_ranks 1\n"), "-").(*spoolGuard)
	small.free = func(string) uint64 { return 1 }
	if b, err := io.ReadAll(small); err != nil || len(b) != 12 {
		t.Errorf("a 12-byte stream on a full disk: %q, %v; want it read", b, err)
	}
	// Enough room, or the free space unknown (0): the whole stream.
	for _, f := range []uint64{1 << 40, 0} {
		g := &spoolGuard{r: io.LimitReader(zeros{}, 3*spoolCheck), name: "-", dir: "/tmp", free: func(string) uint64 { return f }}
		if n, err := io.Copy(io.Discard, g); err != nil || n != 3*spoolCheck {
			t.Errorf("free %d: read %d, %v; want the whole %d bytes", f, n, err, 3*spoolCheck)
		}
	}
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
