// Package tensorcore models the NVIDIA Ampere tensor core of one SM
// sub-partition, dense and 2:4 sparse, functionally and in time.
//
// Functional model: magnitude pruning to N:M patterns (PruneMagnitude,
// PrunePairwise for int4's pair-wise 4:8), pattern checks, compression to
// the hardware format with PTX mma.sp::ordered_metadata metadata
// (Compress, Metadata, UnpackMetadata), the per-lane register layout of
// mma.sp (SparseLayout), and instruction-level MMA / MMASp where the sparse
// path muxes B through the metadata indices as the hardware does.
//
// Timing description: each precision's and mode's datapath (Derive: the
// stages, their fill and issue interval) from the config. The timing
// model that runs MMAs through those stages, an Akita component, is
// package tensorcore/unit. See docs/tensorcore.md.
package tensorcore
