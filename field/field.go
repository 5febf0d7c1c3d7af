// Package field is how library packages name the option at fault in an
// error: by the field the Go API exposes (onnx.Options.Inputs is
// "inputs"), never by a command-line flag. A command renders the same
// error with its own spelling of each field (stcsim's table in
// cmd/stcsim/fields.go turns "inputs" into "--input"), so that a Go caller
// reads the API's names and a user of the command reads its flags.
//
// Two shapes carry names. Error is a bad value of one option: its field,
// the value as given and what is wrong with it. Errorf is fmt.Errorf whose
// arguments may include Names, for messages that name options elsewhere
// than at their head (a remedy: "or raise max_work"). Render re-renders
// either, wrapped in any chain of %w errors, with another spelling of the
// names.
package field

import (
	"errors"
	"fmt"
	"strings"
)

// Name is an option as a library's Go API names it (for example
// "weights_out"). Packages declare theirs as typed constants, so that a
// command's table of spellings can list them and a test can hold the
// table complete.
type Name string

// Error is a bad value of one option.
type Error struct {
	Field Name   // the option at fault
	Value string // its value as given (quoted where it needs to be); "" for none
	Err   error  // what is wrong with it; may itself name fields (Errorf)
}

func (e *Error) Error() string { return e.render(func(n Name) string { return string(n) }) }

// Unwrap is what is wrong with the value.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) render(spell func(Name) string) string {
	head := spell(e.Field)
	if e.Value != "" {
		head += " " + e.Value
	}
	return head + ": " + Render(e.Err, spell)
}

// Errorf is fmt.Errorf (with %w wrapping as there) whose arguments may be
// Names, which Render spells as its caller asks.
func Errorf(format string, args ...any) error {
	return &message{format: format, args: args, err: fmt.Errorf(format, args...)}
}

// message is Errorf's error: the format and arguments kept to render
// again, and fmt.Errorf's error for its text and its wrapped errors.
type message struct {
	format string
	args   []any
	err    error
}

func (m *message) Error() string { return m.err.Error() }

// Unwrap is the error the format wrapped with %w, as fmt.Errorf's.
func (m *message) Unwrap() error { return errors.Unwrap(m.err) }

func (m *message) render(spell func(Name) string) string {
	args := make([]any, len(m.args))
	for i, a := range m.args {
		switch v := a.(type) {
		case Name:
			args[i] = spell(v)
		case error:
			args[i] = Render(v, spell)
		default:
			args[i] = a
		}
	}
	return fmt.Sprintf(strings.ReplaceAll(m.format, "%w", "%v"), args...)
}

// renderer is an error that names fields: Error and Errorf's message.
type renderer interface {
	error
	render(spell func(Name) string) string
}

// Render is err's message with every field it names spelled by spell (a
// Name spell does not know, where it returns "", keeps its own). The
// outermost Error or Errorf message in err's chain is rendered again,
// with those inside it, and put in place of the last occurrence of its
// text in err's message; wrapping errors around it (fmt.Errorf's %w)
// keep their words. A nil err renders as "<nil>", as fmt prints it.
func Render(err error, spell func(Name) string) string {
	if err == nil {
		return "<nil>"
	}
	known := func(n Name) string {
		if s := spell(n); s != "" {
			return s
		}
		return string(n)
	}
	var r renderer
	if !errors.As(err, &r) {
		return err.Error()
	}
	msg, text := err.Error(), r.Error()
	i := strings.LastIndex(msg, text) // wrapping puts words around it, mostly before
	if i < 0 {
		return msg
	}
	return msg[:i] + r.render(known) + msg[i+len(text):]
}

// Names says whether err's chain holds an Error or an Errorf message.
func Names(err error) bool {
	var r renderer
	return errors.As(err, &r)
}
