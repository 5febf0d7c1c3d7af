package field

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func flag(n Name) string {
	return map[Name]string{"weights_dir": "--weights-out", "max_work": "--max-work", "rows": "--rows"}[n]
}

func TestRender(t *testing.T) {
	inner := &Error{Field: "weights_dir", Value: "out", Err: fmt.Errorf("mkdir: %w", fs.ErrPermission)}
	cases := []struct {
		err        error
		lib, flags string
	}{
		{inner, "weights_dir out: mkdir: permission denied", "--weights-out out: mkdir: permission denied"},
		{fmt.Errorf("import a.onnx: %w", inner),
			"import a.onnx: weights_dir out: mkdir: permission denied",
			"import a.onnx: --weights-out out: mkdir: permission denied"},
		{Errorf("work %d is above %s %d; raise %s", 7, Name("max_work"), 5, Name("max_work")),
			"work 7 is above max_work 5; raise max_work", "work 7 is above --max-work 5; raise --max-work"},
		{fmt.Errorf("validate: %w", Errorf("row x: %w", &Error{Field: "rows", Value: `"("`,
			Err: Errorf("see %s", Name("max_work"))})),
			`validate: row x: rows "(": see max_work`, `validate: row x: --rows "(": see --max-work`},
		{&Error{Field: "unknown", Err: errors.New("bad")}, "unknown: bad", "unknown: bad"},
		{errors.New("plain"), "plain", "plain"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.lib {
			t.Errorf("Error() = %q, want %q", got, c.lib)
		}
		if got := Render(c.err, flag); got != c.flags {
			t.Errorf("Render = %q, want %q", got, c.flags)
		}
	}
	if !errors.Is(cases[1].err, fs.ErrPermission) {
		t.Error("an Error does not unwrap to its cause")
	}
	if !errors.Is(Errorf("x: %w", inner), fs.ErrPermission) {
		t.Error("an Errorf message does not unwrap to what it wrapped")
	}
	if Names(errors.New("plain")) || !Names(cases[1].err) {
		t.Error("Names is wrong")
	}
}
