package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Error messages quote at most a few bytes of any input: each of these
// once printed its whole input back (1 MB, 300 KB, 200 KB, 65 KB).
func TestErrorMessagesAreBounded(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hdr := "name,m,n,k,precision,sparsity,count,batch\n"
	big := strings.Repeat("x", 1<<20)
	npyHdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), " + strings.Repeat("'z", 30000) + "}"
	npyHdr += strings.Repeat(" ", (64-(10+len(npyHdr)+1)%64)%64) + "\n"
	npy := "\x93NUMPY\x01\x00" + string([]byte{byte(len(npyHdr)), byte(len(npyHdr) >> 8)}) + npyHdr + strings.Repeat("\x00", 8)
	for name, args := range map[string][]string{
		"1 MB layer name":        {"trace", "check", write("name.csv", hdr+big+"\x01,64,64,64,fp16,2:4,1,1\n")},
		"1 MB duplicate name":    {"trace", "check", write("dup.csv", hdr+big+",64,64,64,fp16,2:4,1,1\n"+big+",64,64,64,fp16,2:4,1,1\n")},
		"100 000-digit M":        {"run", "--gemm", strings.Repeat("9", 100000) + "x64x64"},
		"100 KB --layer regex":   {"run", "--gemm", "64x64x64", "--layer", strings.Repeat("(", 100000)},
		"3 KB header":            {"trace", "check", write("hdr.csv", strings.Repeat("q", 3000)+"\n")},
		"65 KB .npy header":      {"prune", "--in", write("big.npy", npy), "--out", filepath.Join(dir, "o")},
		"100 KB unknown command": {strings.Repeat("c", 100000)},
	} {
		_, errOut, code := capture(t, func() int { return dispatch(args) })
		if code != exitUsage {
			t.Errorf("%s: exit %d", name, code)
		}
		if len(errOut) > 1024 {
			t.Errorf("%s: a %d-byte message: %.160s...", name, len(errOut), errOut)
		}
	}
}
