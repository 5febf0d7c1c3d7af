// Package smem is one SM's shared memory: the bank array that serves
// warp-wide accesses in wavefronts (SharedMemory, Pattern), and the
// CUTLASS tile layouts that map an operand tile's elements to its banks
// (Layout). It sits below the hierarchy: package memory's cp.async fills
// write into it, and the SM's LDSM, LDS and STS read and write it.
package smem
