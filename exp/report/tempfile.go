package report

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CreateOutputTemp creates the hidden temporary file that becomes the
// output base in dir when it is renamed into place:
// ".<base>.tmp-<host>-<pid>-<random>". Its name carries its writer's host
// and process, so that a later run can tell the temporaries of a killed
// writer (SIGKILL cannot be caught, so they stay behind) from those of a
// live one; before creating its own it removes the orphans of base in dir:
// those of this host whose process is gone (and the ".old" backups made
// beside them). Errors removing orphans are ignored: an orphan left behind
// costs only space.
func CreateOutputTemp(dir, base string) (*os.File, error) {
	host := tempHost()
	removeOrphanTemps(dir, base, host)
	return os.CreateTemp(dir, fmt.Sprintf(".%s.tmp-%s-%d-*", base, host, os.Getpid()))
}

// OutputPerm returns the permission bits of an output written to path:
// those of the regular file it replaces (a result made private, chmod 600,
// stays private), else 0666 less the process's umask, as a file the shell
// creates. A fixed 0644 ignored a umask of 077 (a shared cluster's): every
// output world-readable.
func OutputPerm(path string) os.FileMode {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return fi.Mode().Perm()
	}
	return 0o666 &^ umask()
}

// tempHost is the host name as temporary names carry it: no '-' (which
// separates the name's fields) and no '/'.
func tempHost() string {
	host, _ := os.Hostname()
	return strings.NewReplacer("-", "_", "/", "_", "*", "_").Replace(host)
}

// removeOrphanTemps removes dir's temporaries of base written by a process
// of this host that no longer exists.
func removeOrphanTemps(dir, base, host string) {
	prefix := "." + base + ".tmp-" + host + "-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		os.Remove(dir + string(os.PathSeparator) + e.Name())
	}
}
