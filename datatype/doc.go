// Package datatype implements MPI derived datatypes.
package datatype
