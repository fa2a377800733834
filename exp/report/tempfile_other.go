//go:build !unix

package report

import "os"

// umask is 022, the common default, where the system has none to read.
func umask() os.FileMode { return 0o022 }

// processAlive cannot ask the system here, so every writer counts as
// alive and no temporary is removed as an orphan.
func processAlive(pid int) bool { return true }
