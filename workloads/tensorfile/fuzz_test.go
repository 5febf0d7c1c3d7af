package tensorfile

import (
	"bytes"
	"strings"
	"testing"
)

// maxMessage bounds every reader's error message, whatever the input:
// each piece of input it quotes is cut (internal/quote), and the lists it
// names (known columns, tensor names) are short.
const maxMessage = 1024

// checkMessage fails t when err's message is longer than maxMessage.
func checkMessage(t *testing.T, err error) {
	t.Helper()
	if err != nil && len(err.Error()) > maxMessage {
		t.Fatalf("a %d-byte message: %.200s...", len(err.Error()), err.Error())
	}
}

// FuzzReadNPY: no .npy input panics.
func FuzzReadNPY(f *testing.F) {
	var b bytes.Buffer
	WriteNPY(&b, []int{2, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(b.Bytes())
	f.Add([]byte("\x93NUMPY\x01\x00\x10\x00{'descr': '<f2'}"))
	long := "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), " + strings.Repeat("'z", 30000) + "}"
	f.Add(append([]byte("\x93NUMPY\x01\x00"), append([]byte{byte(len(long)), byte(len(long) >> 8)}, long...)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		_, err := ReadNPY(bytes.NewReader(in), "f.npy")
		checkMessage(t, err)
	})
}

// FuzzReadSafetensors: no safetensors input panics.
func FuzzReadSafetensors(f *testing.F) {
	var b bytes.Buffer
	WriteSafetensors(&b, []Tensor{{Name: "w", Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}}})
	f.Add(b.Bytes(), "")
	f.Add(b.Bytes(), "w")
	f.Add([]byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":{\"dtype\":1}}"), "a")
	f.Add(b.Bytes(), strings.Repeat("t", 100000))
	f.Fuzz(func(t *testing.T, in []byte, tensor string) {
		_, err := ReadSafetensors(bytes.NewReader(in), "f.safetensors", tensor)
		checkMessage(t, err)
	})
}
