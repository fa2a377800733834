package main

import (
	"io"

	"github.com/spf13/cobra"
)

// newGoalCmd builds the "goal" command group (LogGOPS scale mode).
func newGoalCmd(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{Use: "goal", Short: "Run and generate GOAL schedules in the LogGOPS model"}
}
