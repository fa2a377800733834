package main

import (
	"runtime"
	"strings"
	"testing"
)

func TestCheckMemory(t *testing.T) {
	if err := checkMemory(1024); err != nil {
		t.Errorf("1024 ranks: %v", err)
	}
	err := checkMemory(1 << 40)
	if runtime.GOOS != "linux" {
		return
	}
	if err == nil || !strings.Contains(err.Error(), "1099511627776 ranks need about") {
		t.Errorf("2^40 ranks: err = %v, want a memory error", err)
	}
}
