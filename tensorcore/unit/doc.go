// Package unit is the tensor core's timing model as an Akita component:
// a Unit takes runs of MMAs from the warps of a sub-partition and times
// them through the datapath's stages (operand delivery, metadata decode,
// selector mux, dot product, accumulate) that package tensorcore derives
// from the config. MicroTC is the tensor-core microbenchmark on it.
//
// It is apart from tensorcore so that the datapath's description (types,
// configs, functional MMAs, compression) carries no simulation engine: the
// config loader and the report layer import tensorcore, not this package.
package unit
