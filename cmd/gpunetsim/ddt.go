package main

import (
	"io"

	"github.com/spf13/cobra"
)

// newDDTCmd builds the "ddt" command group (MPI derived datatypes).
func newDDTCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{Use: "ddt", Short: "MPI derived-datatype engine tools"}
}
