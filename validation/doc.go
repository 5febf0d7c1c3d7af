// Package validation compares the simulator with measured hardware: it
// reads a points file (the format of validation/points/a100-public.csv),
// runs every row it understands on the config matching the row's hardware
// (peak rows through the tensor-core microbenchmark, latency and bandwidth
// rows through the memory microbenchmark, GEMM rows through the full GPU
// model) and reports per-row and per-kind errors.
//
// It knows the points format and which simulator entry point answers
// each kind; it must not adjust any simulated number.
package validation
