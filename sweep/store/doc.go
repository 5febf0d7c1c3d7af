// Package store is a sweep's SQLite results store: a point's results
// are committed in one transaction, so a store survives interruption, is
// written by several processes at once and merged from shards, and is
// checked (integrity, consistency of its tables, every record readable)
// before it is exported, plotted or merged. It reads a store back as
// rows and totals, their CSV and JSON exports, and the series, scatter
// points and context of sweep plots.
//
// It keeps what package sweep plans and runs (units of sweep/point and
// results' reports) and must not know how a sweep is planned or a result
// simulated: it imports neither sweep nor the simulator.
package store
