// Package area is the silicon-area model of the parts of an SM that the
// exploration keys change: per sub-partition tensor core (multipliers and
// adder tree, the A, B and metadata operand paths as width x distance,
// the selector muxes, the accumulators) and per SM (register-file storage
// and ports, shared-memory/L1 storage and bank ports, the rest of the SM),
// then the GPU (every SM on the die and the uncore). Each figure comes from
// the config's area section, where each value names its public source and
// the scaling to 7 nm, or says it is estimated (docs/area.md).
//
// The same layout gives the energy an MMA spends on its way through the
// datapath (MMAPaths): the wires its operand and metadata bits cross, the
// staging registers clocked while it holds the operand stage and the
// selector mux levels it passes, so the energy model and the area model
// read one description of the datapath: the tensorcore section's widths,
// fan-in and multipliers, laid out by this one.
package area
