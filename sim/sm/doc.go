// Package sm is the instruction-level SM: SMs with their sub-partitions
// (warp schedulers, tensor core, ALU pipe, register file, MIO queue into
// shared memory), the CTAs and warps they run, the calendar of
// sub-partition scans, and the raw account of the tensor cores' busy and
// idle cycles by cause. It sees the GPU only through an Env built once by
// the GPU, and the in-run fast paths only as Hooks; it knows no waves,
// fast-forward, pruning, selection, energy or output types.
package sm
