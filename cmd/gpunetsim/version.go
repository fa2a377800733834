package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
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
