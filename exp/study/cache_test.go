package study

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// storedEntry puts result under the first task's key and returns the
// cache, the task and the entry's bytes.
func storedEntry(t *testing.T, result string) (*Cache, Task, []byte) {
	t.Helper()
	p := expand(t, quickStudy(t))
	c := openCache(t, t.TempDir())
	task := p.Tasks[0]
	if err := c.put(task.Key, task.KeyText, []byte(result)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(c.path(task.Key))
	if err != nil {
		t.Fatal(err)
	}
	return c, task, b
}

// A stored result reads back byte for byte, HTML characters and all, and
// its entry names the format, the key and the checksum.
func TestCacheEntryRoundTrip(t *testing.T) {
	const result = `{"name":"a<b>&c","t":[1.5,2e-7]}`
	c, task, b := storedEntry(t, result)
	got, problem := c.get(task.Key, task.KeyText)
	if problem != "" || string(got) != result {
		t.Fatalf("got %q (%s), want %q", got, problem, result)
	}
	for _, want := range []string{`"format":"` + cacheFormat + `"`, `"sha256":"` + checksum([]byte(result)) + `"`, `"key":"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("entry lacks %s:\n%s", want, b)
		}
	}
	// Whitespace in the result as simulated is compacted before the
	// checksum, so the read returns what the checksum covers.
	if err := c.put(task.Key, task.KeyText, []byte("{\"x\": [1, 2]}\n")); err != nil {
		t.Fatal(err)
	}
	if got, problem := c.get(task.Key, task.KeyText); problem != "" || string(got) != `{"x":[1,2]}` {
		t.Fatalf("got %q (%s)", got, problem)
	}
}

// Every kind of damage and every foreign entry is refused with a reason,
// never returned as a result.
func TestCacheRefusesDamagedAndForeignEntries(t *testing.T) {
	const result = `{"times":[12345,67890]}`
	for _, tc := range []struct {
		name   string
		edit   func(b []byte) []byte
		reason string
	}{
		{"flipped digit in the result", func(b []byte) []byte { return bytes.Replace(b, []byte("12345"), []byte("12845"), 1) }, "checksum"},
		{"flipped digit in the checksum", func(b []byte) []byte {
			sum := checksum([]byte(result))
			flip := "0"
			if sum[0] == '0' {
				flip = "1"
			}
			return bytes.Replace(b, []byte(sum), []byte(flip+sum[1:]), 1)
		}, "checksum"},
		{"null result", func(b []byte) []byte { return bytes.Replace(b, []byte(result), []byte("null"), 1) }, "no result"},
		{"no result", func(b []byte) []byte { return bytes.Replace(b, []byte(`,"result":`+result), nil, 1) }, "no result"},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, "not a whole JSON entry"},
		{"empty", func([]byte) []byte { return nil }, "not a whole JSON entry"},
		{"another point's key", func(b []byte) []byte { return bytes.Replace(b, []byte(`\nversion `), []byte(`\nversion x`), 1) }, "another point"},
		{"the old format", func([]byte) []byte {
			return []byte(`{"key":"gpunetsim point cache v1\nversion x","result":` + result + `}`)
		}, "format"},
		{"another format", func(b []byte) []byte {
			return bytes.Replace(b, []byte(cacheFormat), []byte("gpunetsim point cache v9"), 1)
		}, "format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, task, b := storedEntry(t, result)
			if err := os.WriteFile(c.path(task.Key), tc.edit(bytes.Clone(b)), 0o644); err != nil {
				t.Fatal(err)
			}
			got, problem := c.get(task.Key, task.KeyText)
			if got != nil {
				t.Fatalf("a damaged entry was used: %q", got)
			}
			if !strings.Contains(problem, tc.reason) {
				t.Fatalf("problem %q, want it to mention %q", problem, tc.reason)
			}
		})
	}
}

// Files that are not regular where an entry should be are refused at
// once, without reading them: a FIFO with no writer would block a plain
// open forever, a link to /dev/zero would never end.
func TestCacheRefusesNonRegularEntries(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(path string) error
	}{
		{"fifo", func(path string) error { return syscall.Mkfifo(path, 0o644) }},
		{"directory", func(path string) error { return os.Mkdir(path, 0o755) }},
		{"link to a device", func(path string) error { return os.Symlink("/dev/zero", path) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, task, _ := storedEntry(t, `{"x":1}`)
			path := c.path(task.Key)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(path); err != nil {
				t.Skip(err)
			}
			done := make(chan string, 1)
			go func() {
				got, problem := c.get(task.Key, task.KeyText)
				if got != nil {
					problem = "used: " + string(got)
				}
				done <- problem
			}()
			select {
			case problem := <-done:
				if !strings.Contains(problem, "not a regular file") {
					t.Fatalf("problem %q", problem)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("reading the entry blocked")
			}
		})
	}
}

// Execute reports a damaged entry in one line, simulates the point again
// and stores a good entry over it; the result is the undamaged one.
func TestExecuteRecomputesDamagedEntry(t *testing.T) {
	p := expand(t, quickStudy(t))
	dir := t.TempDir()
	want, err := Execute(context.Background(), p, Options{Cache: openCache(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	task := p.Tasks[3]
	c := openCache(t, dir)
	path := c.path(task.Key)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Flip the first digit of the result (after "result":).
	i := bytes.Index(good, []byte(`"result":`))
	j := i + bytes.IndexAny(good[i:], "123456789")
	bad := bytes.Clone(good)
	bad[j] = "2345678911"[bad[j]-'1']
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var warnings []string
	c.Warn = func(msg string) { mu.Lock(); warnings = append(warnings, msg); mu.Unlock() }
	got, err := Execute(context.Background(), p, Options{Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], path) || !strings.Contains(warnings[0], "simulated again") || strings.Contains(warnings[0], "\n") {
		t.Fatalf("warnings %q, want one line naming %s", warnings, path)
	}
	if got.Progress.Cached != len(p.Tasks)-1 {
		t.Fatalf("cached %d of %d, want all but the damaged one", got.Progress.Cached, len(p.Tasks))
	}
	if a, b := want.Results[0].Tables[0].Rows, got.Results[0].Tables[0].Rows; len(a) != len(b) || a[0][len(a[0])-1] != b[0][len(b[0])-1] {
		t.Fatalf("results differ after recomputing")
	}
	repaired, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(repaired, good) {
		t.Fatalf("the entry was not repaired (%v)", err)
	}
}

// study collect reads a cache it may not write: a read-only cache opens,
// serves its entries and is never written.
func TestReadOnlyCacheCollects(t *testing.T) {
	p := expand(t, quickStudy(t))
	dir := t.TempDir()
	if _, err := Execute(context.Background(), p, Options{Cache: openCache(t, dir)}); err != nil {
		t.Fatal(err)
	}
	c, err := OpenCacheReadOnly(dir, testVersion)
	if err != nil {
		t.Fatal(err)
	}
	o, err := Execute(context.Background(), p, Options{Cache: c, CacheOnly: true})
	if err != nil || o.Progress.Cached != len(p.Tasks) {
		t.Fatalf("collect: %v, %+v", err, o.Progress)
	}
	if err := c.put(p.Tasks[0].Key, p.Tasks[0].KeyText, []byte(`{}`)); err == nil {
		t.Fatal("a read-only cache took a write")
	}
	if _, err := OpenCacheReadOnly(filepath.Join(dir, "none"), testVersion); err == nil {
		t.Fatal("a missing cache opened")
	}
}

// Close removes this process's temporary entries and refuses later writes.
func TestCacheCloseRemovesTemporaries(t *testing.T) {
	c, task, _ := storedEntry(t, `{"x":1}`)
	tmp := filepath.Join(filepath.Dir(c.path(task.Key)), tempPrefix()+"123")
	if err := os.WriteFile(tmp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := os.Stat(tmp); err == nil {
		t.Fatal("the temporary entry is still there")
	}
	if err := c.put(task.Key, task.KeyText, []byte(`{"x":2}`)); err == nil {
		t.Fatal("a closed cache took a write")
	}
}

// shardDirs returns the cache's shard directories (one per key prefix).
func shardDirs(t *testing.T, c *Cache) []string {
	t.Helper()
	var dirs []string
	des, err := os.ReadDir(c.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.IsDir() {
			dirs = append(dirs, de.Name())
		}
	}
	return dirs
}

// A write that the cache refuses or that fails leaves no new directory:
// a write after Close (an interrupted run) made the entry's shard
// directory before it found the cache closed, and a write that Close cut
// short removed its temporary but not the directory made for it, so an
// interrupted study could leave empty shard directories in the cache.
func TestCacheFailedWriteLeavesNoDirectory(t *testing.T) {
	p := expand(t, quickStudy(t))
	c := openCache(t, t.TempDir())
	c.Close()
	if err := c.put(p.Tasks[0].Key, p.Tasks[0].KeyText, []byte(`{}`)); err == nil {
		t.Fatal("a closed cache took a write")
	}
	if dirs := shardDirs(t, c); len(dirs) != 0 {
		t.Fatalf("a refused write left the directories %v", dirs)
	}

	// Close while a write is between its temporary and its rename: the
	// temporary goes, and with it the directory made for it.
	c = openCache(t, t.TempDir())
	c.beforeRename = c.Close
	if err := c.put(p.Tasks[0].Key, p.Tasks[0].KeyText, []byte(`{}`)); err == nil {
		t.Fatal("a write cut short by Close stored its entry")
	}
	if dirs := shardDirs(t, c); len(dirs) != 0 {
		t.Fatalf("a write cut short by Close left the directories %v", dirs)
	}

	// A directory that holds an entry stays.
	c = openCache(t, t.TempDir())
	if err := c.put(p.Tasks[0].Key, p.Tasks[0].KeyText, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if dirs := shardDirs(t, c); len(dirs) != 1 {
		t.Fatalf("after a stored entry and Close, the directories %v, want one", dirs)
	}
}
