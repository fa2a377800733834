// Package docrefs holds a test that keeps the product's text standing on
// its own: the README, docs/ and every string the program prints (Go
// string literals and struct tags: CLI output, parameter descriptions,
// notes, HTML) cite the source documents by title (docs/bibliography.md)
// or docs/ sections, never the specification files the project was built
// from, which are not in the repository.
package docrefs
