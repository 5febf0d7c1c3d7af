// Package sweep runs a declared grid of GPU configs over workloads and
// keeps the results in one SQLite store that survives interruption,
// shards across machines and merges back.
//
// A sweep file (Spec) names the base config and overlays, fixed
// overrides, the workloads, the modes, and the grid: config keys with the
// values to try, plus optional zipped axes whose lists vary together.
// Every grid value becomes a --set override of configs.Load, so a sweep
// accepts exactly the keys and values the command line does.
//
// It owns the sweep file, the grid and its points, shards, running each
// unit through sim.Run and committing it to a results store
// (sweep/store), and refining a fast sweep; it must not know the model's
// insides, nor how the store keeps its results.
package sweep
