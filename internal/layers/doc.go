// Package layers holds no code: its test checks the module's import
// rules (docs/architecture.md), so that a change that makes the report
// layer import the engine, or a lower room of the simulator import a
// higher one, fails.
package layers
