// Package readme holds a test that keeps the README's Go snippets true:
// each is a whole program whose main body is an Example function of the
// module (run, with its output checked, by go test), importing only what
// that example's file imports.
package readme
