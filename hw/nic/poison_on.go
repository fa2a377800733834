//go:build nicpoison

package nic

// poisonBuild: see poison_off.go.
const poisonBuild = true
