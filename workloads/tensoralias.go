package workloads

import "github.com/stcsim/stcsim/workloads/tensorfile"

// Tensor is a dense tensor read from a weight file (package tensorfile
// reads and writes them).
type Tensor = tensorfile.Tensor

// MaxTensorElements bounds the size of a tensor read from a file.
const MaxTensorElements = tensorfile.MaxTensorElements
