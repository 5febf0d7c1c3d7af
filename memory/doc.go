// Package memory is the memory hierarchy below the SMs' shared memory
// (package smem): each SM's L1, the crossbar, the partitioned and sliced
// L2, and DRAM, and the cp.async fills that carry lines from it into
// shared memory (fill.go), in two granularities: "fast" (tile-granular
// transfers through bandwidth and latency servers with a line-granular
// tag model: fast.go) and "detailed" (every sector through Akita
// components: detailed*.go). The other files serve both: the L1 model
// (l1.go), tag arrays (tags.go), bandwidth servers and calendars
// (server.go), the DRAM bus's direction (drambus.go), the address hash
// (hash.go) and the parameters both derive from the config
// (hierarchy.go). It accounts
// every byte by level and by operand class (A values, A metadata, B, C,
// D), and provides the latency and bandwidth microbenchmarks.
//
// It owns its config sections (shared_memory, l1, l2, crossbar, dram) and
// their validation. It must not know about tensor cores or kernels: the SM
// model tells it only regions, classes and times.
package memory
