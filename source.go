// Package stcsim carries the module's Go source into every executable that
// imports it: internal/modelid hashes the simulator's packages from it to
// name the model a build runs (the simulation cache's key). The files are
// embedded when the executable is compiled, so `go run`, `go build` and
// `go install` of one tree carry the same bytes, and a change to any file
// is in the next build.
package stcsim

import "embed"

// Source is every Go file of the module up to three directories deep (the
// deepest package today is workloads/onnx/onnxpb; internal/modelid's test
// fails if a simulator package lies deeper). internal/modelid picks the
// simulator's packages out of it.
//
//go:embed *.go */*.go */*/*.go */*/*/*.go
var Source embed.FS
