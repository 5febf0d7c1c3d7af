// Package report turns a simulation report into what people read: the
// per-layer table, CSV and JSON, report.md and plots, written atomically.
//
// It knows the output contract (results.Report) and the config, not how the
// numbers were simulated.
package report
