package study

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
)

// cacheFormat names the layout of cache entries; a change of layout
// changes every key.
const cacheFormat = "gpunetsim point cache v1"

// keyExcluded reports the parameters that cannot change a point's result
// and so stay out of its key: run.parallel only sets how many simulations
// run at once (results are identical for any value; exp tests check it);
// run.mem_limit only decides whether a run may start.
func keyExcluded(name string) bool { return name == "run.parallel" || name == "run.mem_limit" }

// ErrCache reports a cache directory that cannot be used.
var ErrCache = errors.New("result cache")

// Cache stores point results on disk, one file per point under
// dir/<first two hex digits of the key>/<key>.json. It is safe for
// concurrent use by goroutines and by processes sharing the directory.
type Cache struct {
	dir     string
	version string
}

// entry is the JSON form of a cache file: the key's text (checked on
// read, so a damaged or foreign file is a miss, never a wrong result) and
// the point's result.
type entry struct {
	Key    string          `json:"key"`
	Result json.RawMessage `json:"result"`
}

// OpenCache opens (creating it if needed) the cache in dir for results of
// the program version. It fails, wrapping ErrCache, when dir cannot be
// created or written.
func OpenCache(dir, version string) (*Cache, error) {
	if version == "" {
		return nil, fmt.Errorf("%w: no program version to key results with", ErrCache)
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

// get returns the result stored under text's key, if a valid entry holds it.
func (c *Cache) get(key, text string) ([]byte, bool) {
	b, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil, false
	}
	var e entry
	if json.Unmarshal(b, &e) != nil || e.Key != text || len(e.Result) == 0 {
		return nil, false
	}
	return e.Result, true
}

// put stores result under key atomically: a temporary file in the entry's
// directory, synced, then renamed over the entry.
func (c *Cache) put(key, text string, result []byte) (err error) {
	b, err := json.Marshal(entry{Key: text, Result: result})
	if err != nil {
		return fmt.Errorf("%w: encoding an entry: %w", ErrCache, err)
	}
	dir := filepath.Dir(c.path(key))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	f, err := os.CreateTemp(dir, tempPrefix()+"*")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(append(b, '\n')); err != nil {
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
	if err := os.Rename(f.Name(), c.path(key)); err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	return nil
}
