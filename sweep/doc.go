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
// It owns the sweep file, the grid and shards, and the results store. It
// runs each point through sim.Run and must not know the model's insides.
package sweep
