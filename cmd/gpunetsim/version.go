package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gpunetsim/gpunetsim/exp/report"
)

// programVersion returns what keys cached results besides the
// configuration: the module version and VCS revision when the build
// records them, and always the SHA-256 of the running executable, so that
// any change to the program (an uncommitted edit included) misses the
// cache instead of reusing results it might no longer produce. The
// executable (tens of MB) takes tens of milliseconds to hash, once per
// command.
func programVersion() (string, error) {
	v := "gpunetsim"
	if bi, ok := debug.ReadBuildInfo(); ok {
		v += " " + bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				v += " " + s.Key + "=" + s.Value
			}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("program version: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("program version: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("program version: hashing %s: %w", exe, err)
	}
	return v + " exe-sha256=" + hex.EncodeToString(h.Sum(nil)), nil
}

// buildFacts is what the executable knows about its own build.
type buildFacts struct {
	version, commit, commitTime, buildDate, goVersion string
}

// readBuild collects the module version, the VCS revision and its time
// (runtime/debug build info: a build from a git checkout records them), the
// executable's modification time as its build date, and the Go version.
func readBuild() buildFacts {
	b := buildFacts{version: "unknown", commit: "unknown", buildDate: "unknown", goVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.version = bi.Main.Version
		if bi.GoVersion != "" {
			b.goVersion = bi.GoVersion
		}
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.commit = s.Value
			case "vcs.time":
				b.commitTime = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && b.commit != "unknown" {
			b.commit += "+dirty"
		}
	}
	if b.version == "" {
		b.version = "(devel)"
	}
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			b.buildDate = fi.ModTime().UTC().Format(time.RFC3339)
		}
	}
	return b
}

// versionText is what --version prints.
func versionText() string {
	b := readBuild()
	commit := b.commit
	if b.commitTime != "" {
		commit += " (" + b.commitTime + ")"
	}
	if b.commit == "unknown" {
		// Say why, so the reader can fix it: the toolchain stamps the
		// commit only when it builds inside a git checkout with VCS
		// stamping on (go env GOFLAGS may hold -buildvcs=false).
		commit += " (the build recorded no VCS information: build in a git checkout with go build -buildvcs=true ./cmd/gpunetsim)"
	}
	return fmt.Sprintf("gpunetsim %s\ncommit %s\nbuilt %s\n%s %s/%s\n", b.version, commit, b.buildDate, b.goVersion, runtime.GOOS, runtime.GOARCH)
}

// provenance records the build, the command line, the host, the start
// time and the wall time so far, for every output file.
func provenance(args []string, started time.Time) *report.Provenance {
	b := readBuild()
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return &report.Provenance{
		Program: "gpunetsim", Version: b.version, Commit: b.commit, CommitTime: b.commitTime,
		BuildDate: b.buildDate, GoVersion: b.goVersion, Command: commandLine(args), Host: host,
		Started:  started.UTC().Format(time.RFC3339),
		WallTime: time.Since(started).Round(time.Millisecond).String(),
	}
}

// commandLine prints args as a shell would take them back, after
// "gpunetsim": arguments with spaces or shell characters in single quotes.
func commandLine(args []string) string {
	parts := []string{"gpunetsim"}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
