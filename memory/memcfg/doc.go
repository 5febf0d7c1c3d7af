// Package memcfg is the memory hierarchy's configuration: the YAML
// sections of shared memory, L1, L2, the crossbar and DRAM, their bounds
// and their consistency checks. It is apart from package memory (the
// Akita components that model the hierarchy) so that the config loader
// and the report layer carry no simulation engine; package memory
// re-exports these types under their old names.
package memcfg
