// Package layering holds only a test: it enforces that imports between
// gpunetsim's packages point one way, engine → hardware → programming
// models → strategies → workloads → experiments → cmd, with the datatype
// engine standing alone.
package layering
