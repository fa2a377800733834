package main

import (
	"io"

	"github.com/spf13/cobra"
)

// addSimCommands registers run, presets and params.
func addSimCommands(root *cobra.Command, stdout, stderr io.Writer) {}

// runDefault runs the default experiment.
func runDefault(cmd *cobra.Command, stdout, stderr io.Writer) error { return nil }
