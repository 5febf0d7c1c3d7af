// Package energy is stcsim's activity-based energy and power model. It owns
// no timing: a simulation counts its events (tensor-core MMAs, register-file
// bytes, shared-memory wavefronts, cache sectors, crossbar and DRAM bytes,
// issued instructions), and this package turns the counts, the kernel's
// duration and its clock into energy per event class and average board
// power, with dynamic energy scaled by the square of the voltage the
// voltage/frequency table gives the clock.
//
// It also owns the clock policies: the clocks a power-capped board may run
// at (Clocks) and which of them keep a kernel within the board's limit.
//
// Every constant lives in the config's power section with its source or
// the reason for its estimate (docs/calibration.md).
package energy
