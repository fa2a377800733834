//go:build !unix

package main

// limitLeft: no process memory limit is known outside unix.
func limitLeft() (uint64, string, bool) { return 0, "", false }

// capArenas: the C library's arenas are capped only on Linux.
func capArenas() {}
