// Package check holds the small vocabulary that config sections use to
// report invalid values. It is a leaf package: the config loader turns each
// Error into a message naming the file, the line and the full key.
package check
