// Package kernel is what is launched: a GEMM's Shape, its Plan on one tile
// configuration (tiles, grid, split-K, occupancy, stage bytes, the
// shared-memory layouts and ldmatrix patterns, CUTLASS's raster order),
// each CTA's coordinates and the global regions its copies, loads and
// stores cover (CTA), the sm80 program generator (program.go) and the
// dual-side products (dual.go). It knows no engines, cycles, SMs,
// selection or records.
package kernel
