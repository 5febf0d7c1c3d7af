// Command stcsim is the cycle-level simulator of NVIDIA Ampere sparse tensor
// cores: it runs GEMM workloads dense and 2:4-sparse on a configured GPU and
// reports cycles, throughput, traffic and where time goes.
//
// It owns the flags, the subcommands (one file each) and the exit codes;
// it must not hold model logic: every number comes from the packages.
package main
