// Package tensorfile reads and writes the weight tensor files stcsim
// takes (NumPy .npy and safetensors, float16/bfloat16/float32 widened to
// float32) and views a Linear or Conv weight as a GEMM's A operand.
package tensorfile
