// Package configs is the GPU configuration: the schema of the SM, kernel
// library and simulation controls (the tensor-core and memory sections are
// typed by their packages), the embedded YAML configs (a100-40gb, the
// default; a100-80gb; a100-pcie-40gb; a100-pcie-80gb; h100-sxm), and strict loading: overlays, base:
// chains, key=value overrides, and errors naming file, line and key.
//
// It must not know how anything is simulated.
package configs
