package main

import (
	"errors"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/report"
	"github.com/stcsim/stcsim/sweep"
	"github.com/stcsim/stcsim/sweep/store"
	"github.com/stcsim/stcsim/validation"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/onnx"
	"github.com/stcsim/stcsim/workloads/tensorfile"
)

// flags is the command's spelling of every option field the library's
// errors name (package field): the flag that sets it.
// TestEveryLibraryFieldHasAFlag holds it complete.
var flags = map[field.Name]string{
	onnx.FieldBatch:             "--batch",
	onnx.FieldInputs:            "--input",
	tensorfile.FieldTensor:      "--tensor",
	workloads.FieldWorkload:     "--workload",
	workloads.FieldWeightsDir:   "--weights-out",
	workloads.FieldPruneInput:   "--in",
	workloads.FieldPruneDir:     "--out",
	validation.FieldRows:        "--rows",
	validation.FieldKinds:       "--kind",
	validation.FieldMaxWork:     "--max-work",
	sweep.FieldRefine:           "--refine",
	sweep.FieldShard:            "--shard",
	store.FieldStore:            "--db",
	store.FieldX:                "--x",
	store.FieldY:                "--y",
	store.FieldBy:               "--by",
	store.FieldWhere:            "--where",
	report.FieldOutDir:          "--out",
	workloads.OptionPass:        "--pass",
	workloads.OptionActivations: "--activation-sparsity",
}

// flagged is err as the command prints it: every option field the
// library named spelled as its flag. The result wraps err, so that
// errors.Is and errors.As (the exit status's tests) see what err holds.
func flagged(err error) error {
	var done *flaggedError
	if err == nil || !field.Names(err) || errors.As(err, &done) {
		return err // no field, or spelled already
	}
	return &flaggedError{msg: field.Render(err, func(n field.Name) string { return flags[n] }), err: err}
}

// flaggedError is an error with the library's field names spelled as
// flags.
type flaggedError struct {
	msg string
	err error
}

func (e *flaggedError) Error() string { return e.msg }

func (e *flaggedError) Unwrap() error { return e.err }
