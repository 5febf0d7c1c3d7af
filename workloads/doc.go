// Package workloads describes what stcsim runs: GEMM traces (one GEMM per
// row, read from CSV or JSON files or generated from ResNet and BERT layer
// descriptions) and the weights whose 2:4 masks a replay uses.
//
// Orientation (see docs/workloads.md): A is the M x K weight operand, the
// one that may be 2:4-sparse, with the 2:4 groups running along K; B is the
// K x N activation operand. A convolution is an implicit GEMM with M =
// output channels, N = batch x P x Q, K = C x R x S; a linear layer has M =
// out_features, N = tokens, K = in_features.
//
// It owns the trace format and its strict parsers, the model generators,
// the ASP pruning rule and library padding, and the weight-file readers.
// It must not know about timing: nothing here depends on the simulator.
package workloads
