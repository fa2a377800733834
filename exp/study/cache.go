package study

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
)

// cacheFormat names the layout of cache entries; a change of layout
// changes every key. v2 added the format and the result's checksum to
// every entry; v1 entries live under other keys and are never read.
const cacheFormat = "gpunetsim point cache v2"

// maxEntryBytes bounds what is read of one cache entry: a point's result
// is kilobytes (the largest, a sweep's whole table, well under a MiB), so
// a larger file is damage, not a result, and is not read into memory.
const maxEntryBytes = 64 << 20

// keyExcluded reports the parameters that cannot change a point's result
// and so stay out of its key: run.parallel only sets how many simulations
// run at once (results are identical for any value; exp tests check it);
// run.mem_limit only decides whether a run may start.
func keyExcluded(name string) bool {
	return name == "run.parallel" || name == "run.mem_limit" || name == "run.mem_budget"
}

// ErrCache reports a cache directory that cannot be used.
var ErrCache = errors.New("result cache")

// Cache stores point results on disk, one file per point under
// dir/<first two hex digits of the key>/<key>.json. It is safe for
// concurrent use by goroutines and by processes sharing the directory.
type Cache struct {
	dir      string
	version  string
	readOnly bool
	// Warn, when non-nil, is told in one line about each entry the cache
	// refuses (damaged, foreign, not a regular file) or cannot store; the
	// cache then behaves as if the entry were absent.
	Warn func(msg string)

	mu     sync.Mutex
	closed bool            // Close was called: no more entries are written
	made   map[string]bool // shard directories this Cache created, removed again while empty
	// beforeRename, when non-nil, runs between a write's temporary file
	// and its rename (tests: a Close there, as an interrupt does).
	beforeRename func()
}

// entry is the JSON form of a cache file: the format, the key's text and
// the SHA-256 of the result's bytes (both checked on read, so a damaged or
// foreign file is reported and ignored, never taken for a result), and the
// point's result.
type entry struct {
	Format string          `json:"format"`
	Key    string          `json:"key"`
	SHA256 string          `json:"sha256"`
	Result json.RawMessage `json:"result"`
}

// OpenCache opens (creating it if needed) the cache in dir for results of
// the program version. It fails, wrapping ErrCache, when dir cannot be
// created or written.
func OpenCache(dir, version string) (*Cache, error) {
	if version == "" {
		return nil, fmt.Errorf("%w: no program version to key results with", ErrCache)
	}
	if ro := ReadOnlyDir(dir); ro != "" {
		return nil, fmt.Errorf("%w %s: directory %s is read-only", ErrCache, dir, ro)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrCache, dir, err)
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return nil, fmt.Errorf("%w %s: not writable: %w", ErrCache, dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	c := &Cache{dir: dir, version: version}
	c.removeOrphans(time.Now())
	return c, nil
}

// CheckCacheDir finds, without creating anything, what would make
// OpenCache fail on dir at once: a file where it or a parent directory
// should be, or a missing directory whose nearest existing parent is
// read-only. A command checks it before it plans its points (today's
// planning takes a minute); an existing read-only cache may still serve
// a run whose points it holds, so it passes.
func CheckCacheDir(dir string) error {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%w %s: %s is not a directory", ErrCache, dir, d)
			}
			if d != filepath.Clean(dir) && fi.Mode().Perm()&0o222 == 0 {
				return fmt.Errorf("%w %s: directory %s is read-only", ErrCache, dir, d)
			}
			return nil
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// ReadOnlyDir returns dir, or the deepest of its parents that exists,
// when that directory has no write permission bit, else "". Creating or
// writing there fails for every user but root, whom the kernel lets
// through: a cache or output directory made inside a directory its owner
// made read-only is refused for root too, as an output file there is.
func ReadOnlyDir(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			if fi.IsDir() && fi.Mode().Perm()&0o222 == 0 {
				return d
			}
			return ""
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// OpenCacheReadOnly opens the existing cache in dir for reading only (as
// study collect needs it): the directory may be read-only; nothing is ever
// written into it.
func OpenCacheReadOnly(dir, version string) (*Cache, error) {
	if version == "" {
		return nil, fmt.Errorf("%w: no program version to key results with", ErrCache)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrCache, dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w %s: not a directory", ErrCache, dir)
	}
	return &Cache{dir: dir, version: version, readOnly: true}, nil
}

// ReadOnly reports whether the cache was opened for reading only.
func (c *Cache) ReadOnly() bool { return c.readOnly }

// Missing returns the labels of the plan's points (those of slice, when
// non-nil) that have no valid entry in the cache, or all of them with
// fresh: the points a run would simulate and store. A run on a read-only
// cache checks it before any work.
func (c *Cache) Missing(p *Plan, slice *Slice, fresh bool) []string {
	var missing []string
	for i, t := range p.Tasks {
		if t.Point == nil || (slice != nil && i%slice.Count != slice.Index) {
			continue // whole runs are not cached; other slices' points are not this run's
		}
		if fresh {
			missing = append(missing, t.Label(p))
		} else if b, _ := c.get(t.Key, t.KeyText); b == nil {
			missing = append(missing, t.Label(p))
		}
	}
	return missing
}

// Close stops the cache writing entries and removes this process's
// temporary entries (those of writes in progress): an interrupted run
// leaves no temporary file in the cache. Later writes fail.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.readOnly {
		return
	}
	tmps, _ := filepath.Glob(filepath.Join(c.dir, "*", tempPrefix()+"*"))
	for _, f := range tmps {
		os.Remove(f)
	}
	// The shard directories made for the writes just cut short: an
	// interrupted run leaves no new empty directory either (os.Remove
	// takes a directory only while it is empty, so one holding an entry,
	// or another process's temporary, stays).
	for dir := range c.made {
		os.Remove(dir)
	}
}

// makeShard creates the shard directory dir of an entry if it is missing,
// noting that this Cache made it. c.mu is held.
func (c *Cache) makeShard(dir string) error {
	err := os.Mkdir(dir, 0o755)
	switch {
	case err == nil:
		if c.made == nil {
			c.made = map[string]bool{}
		}
		c.made[dir] = true
		return nil
	case errors.Is(err, fs.ErrExist):
		return nil
	}
	return os.MkdirAll(dir, 0o755) // the cache directory itself went missing
}

// dropShard removes the shard directory dir again if this Cache made it
// and it is empty: a write that failed leaves no new directory.
func (c *Cache) dropShard(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.made[dir] && os.Remove(dir) == nil {
		delete(c.made, dir)
	}
}

// warn reports a refused entry.
func (c *Cache) warn(format string, args ...any) {
	if c.Warn == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Warn(fmt.Sprintf(format, args...))
}

// tempPrefix names this process's temporary entries: ".tmp-<host>-<pid>-",
// so that a later process can tell the orphans of a killed writer (a
// SIGKILL between writing and renaming) from a live writer's files.
func tempPrefix() string {
	host, _ := os.Hostname()
	host = strings.NewReplacer("-", "_", "/", "_").Replace(host)
	return fmt.Sprintf(".tmp-%s-%d-", host, os.Getpid())
}

// orphanAge is how old a temporary entry of another host must be before
// it counts as orphaned: a write takes milliseconds.
const orphanAge = time.Hour

// removeOrphans deletes the temporary entries of writers that are gone:
// those of this host whose process no longer exists, and any older than
// orphanAge (another host's, or an older layout's). Errors are ignored: a
// file another process removes first is not an error, and an orphan left
// behind costs only space.
func (c *Cache) removeOrphans(now time.Time) {
	host, _ := os.Hostname()
	host = strings.NewReplacer("-", "_", "/", "_").Replace(host)
	tmps, _ := filepath.Glob(filepath.Join(c.dir, "*", ".tmp-*"))
	for _, f := range tmps {
		if orphaned(filepath.Base(f), host, now, f) {
			os.Remove(f)
		}
	}
}

// orphaned reports whether the temporary file name (at path) belongs to a
// writer that is gone.
func orphaned(name, host string, now time.Time, path string) bool {
	if fi, err := os.Stat(path); err == nil && now.Sub(fi.ModTime()) > orphanAge {
		return true
	}
	parts := strings.SplitN(strings.TrimPrefix(name, ".tmp-"), "-", 3)
	if len(parts) < 3 || parts[0] != host {
		return false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return false
	}
	return !processAlive(pid)
}

// processAlive reports whether a process with this pid exists (signal 0
// checks without sending anything).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Dir returns the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// KeyText returns the text a point's key hashes: the cache format, the
// program version, the experiment, the point's label, every parameter of
// its configuration but those keyExcluded names, one per line as printed
// with units, and the configuration in Go syntax (%#v, floats in shortest
// exact form), so two values that print alike still key apart.
func KeyText(version, experiment string, p exp.Point) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nversion %s\nexperiment %s\npoint %s\n", cacheFormat, version, experiment, p.Label)
	for _, in := range params.List(p.Config) {
		if !keyExcluded(in.Name) {
			fmt.Fprintf(&b, "%s = %s\n", in.Name, in.Value)
		}
	}
	exact := p.Config
	exact.Run.Parallel = 0
	exact.Run.MemLimit = 0
	exact.Run.MemBudget = 0
	fmt.Fprintf(&b, "exact %#v\n", exact)
	return b.String()
}

// Key returns the hex SHA-256 of KeyText.
func Key(version, experiment string, p exp.Point) string {
	return hashKey(KeyText(version, experiment, p))
}

func hashKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

func (c *Cache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".json")
}

// get returns the result stored under key, if a valid entry answering
// text holds it. problem is "" for a valid or absent entry, else why the
// entry was refused. The entry is checked with Lstat before it is opened,
// and opened non-blocking: a FIFO, a directory or a link to a device where
// an entry should be is refused without reading (and without hanging).
func (c *Cache) get(key, text string) (result []byte, problem string) {
	path := c.path(key)
	li, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	if err != nil {
		return nil, fmt.Sprintf("unreadable (%v)", unwrap(err))
	}
	if !li.Mode().IsRegular() {
		return nil, "not a regular file (" + li.Mode().Type().String() + ")"
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Sprintf("unreadable (%v)", unwrap(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, "not a regular file"
	}
	b, err := io.ReadAll(io.LimitReader(f, maxEntryBytes+1))
	if err != nil {
		return nil, fmt.Sprintf("unreadable (%v)", unwrap(err))
	}
	if len(b) > maxEntryBytes {
		return nil, fmt.Sprintf("larger than %d MiB, more than any result", maxEntryBytes>>20)
	}
	return checkEntry(b, text)
}

// checkEntry decodes an entry's bytes and checks that they answer text
// (format, key and checksum); it returns the result or the problem.
func checkEntry(b []byte, text string) (result []byte, problem string) {
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, "damaged (not a whole JSON entry: " + err.Error() + ")"
	}
	switch {
	case e.Format != cacheFormat:
		return nil, fmt.Sprintf("foreign (format %q, want %q)", e.Format, cacheFormat)
	case e.Key != text:
		return nil, "foreign (it answers another point's key)"
	case len(e.Result) == 0 || string(e.Result) == "null":
		return nil, "damaged (no result)"
	case e.SHA256 != checksum(e.Result):
		return nil, "damaged (its result does not match its checksum)"
	}
	return e.Result, ""
}

// checksum is the hex SHA-256 of b.
func checksum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// encodeEntry returns the bytes of the entry holding result under text:
// the result compacted (exactly the bytes the checksum covers and a read
// returns), with HTML characters left as they are.
func encodeEntry(text string, result []byte) ([]byte, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, result); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(entry{Format: cacheFormat, Key: text, SHA256: checksum(compact.Bytes()), Result: compact.Bytes()}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// createTemp makes an entry's temporary file in its shard directory dir,
// creating the directory if missing; nothing is created once the cache is
// closed. A directory another process removed while empty between the
// two (its own failed write) is made again.
func (c *Cache) createTemp(dir string) (*os.File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.readOnly {
		return nil, fmt.Errorf("%w %s: closed", ErrCache, c.dir)
	}
	var f *os.File
	var err error
	for range 2 {
		if err = c.makeShard(dir); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCache, err)
		}
		if f, err = os.CreateTemp(dir, tempPrefix()+"*"); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		if c.made[dir] && os.Remove(dir) == nil {
			delete(c.made, dir)
		}
		return nil, fmt.Errorf("%w: %w", ErrCache, err)
	}
	return f, nil
}

// unwrap drops the path from a *fs.PathError (the caller names the entry).
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// put stores result under key atomically: a temporary file in the entry's
// directory, synced, then renamed over the entry (replacing whatever was
// there: a damaged entry, a FIFO, a link). A directory in the way is
// reported and the result not stored; the run goes on.
func (c *Cache) put(key, text string, result []byte) (err error) {
	b, err := encodeEntry(text, result)
	if err != nil {
		return fmt.Errorf("%w: encoding an entry: %w", ErrCache, err)
	}
	path := c.path(key)
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		c.warn("cache entry %s: a directory is in the way; the result is not stored", path)
		return nil
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		// A file where the shard directory should be: its entries read
		// as unreadable and were simulated again; failing the store
		// here failed the whole run after its work (exit 1).
		c.warn("cache shard %s: not a directory; the result is not stored", dir)
		return nil
	}
	// The shard directory and the temporary file are created, and the
	// file later renamed, under the lock that Close takes, so a closed
	// cache gains no file and no directory; the write and the sync
	// between run unlocked (Close may remove the file meanwhile: the
	// rename then fails, and the directory made for it goes too).
	f, err := c.createTemp(dir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			c.dropShard(dir)
		}
	}()
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	if c.beforeRename != nil {
		c.beforeRename()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fmt.Errorf("%w %s: closed", ErrCache, c.dir)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	return nil
}
