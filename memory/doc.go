// Package memory is the memory hierarchy below the tensor cores: each SM's
// shared memory (banks, ldmatrix and cp.async patterns, conflicts) and L1,
// the crossbar, the partitioned and sliced L2, and DRAM, in two
// granularities: "fast" (tile-granular transfers through bandwidth and
// latency servers with a line-granular tag model) and "detailed" (every
// sector through Akita caches and DRAM channel components). It accounts
// every byte by level and by operand class (A values, A metadata, B, C,
// D), and provides the latency and bandwidth microbenchmarks.
//
// It owns its config sections (shared_memory, l1, l2, crossbar, dram) and
// their validation. It must not know about tensor cores or kernels: the SM
// model tells it only regions, classes and times.
package memory
