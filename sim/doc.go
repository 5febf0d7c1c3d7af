// Package sim is the GPU: it builds SMs (sub-partitions with warp
// schedulers and tensor cores, shared memory) from a config, wires them to
// the memory hierarchy, and runs GEMMs on it as CUTLASS-style dense and
// 2:4-sparse kernels on an Akita serial engine. Run turns workloads into
// per-layer results.
//
// It owns the kernel model (tiles, multistage cp.async pipeline, barriers,
// epilogue, split-K), the CTA scheduler and kernel selection. It must not
// know how a tensor core or a cache works inside: it calls tensorcore.Unit
// and memory.Hierarchy through their public APIs, and knows nothing of
// output formats or workload files.
package sim
