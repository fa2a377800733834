//go:build !unix

package report

// processAlive cannot ask the system here, so every writer counts as
// alive and no temporary is removed as an orphan.
func processAlive(pid int) bool { return true }
