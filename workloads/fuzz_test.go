package workloads

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

var csvSeeds = []string{
	csvHeader + "a,16,16,16,fp16,2:4,1,1\n",
	"# c\nname,m,n,k,precision,sparsity,count,batch,weights,note,unpadded_m,unpadded_k\n" +
		"\"x,y\",1024,1,2048,int8,2:4,3,1,w.npy,\"a \"\"note\"\"\",1000,2000\n",
	"k,n,m,batch,count,sparsity,precision,name\n3,2,1,1,1,dense,tf32,z\n",
	csvHeader + "a,0,16,16,fp16,2:4,1,1\n",
	csvHeader + "\"a\nb\",16,16,16,fp16,2:4,1,1\n",
	"\ufeff" + csvHeader + "a,16,16,16,bf16,1:2,1,8\r\n",
	"name,m\n",
	"",
}

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

// longSeeds are inputs whose pieces are far longer than a message may
// quote: a 100 KB name, header, dimension and pattern.
var longSeeds = func() []string {
	big := strings.Repeat("x", 100000)
	hdr := "name,m,n,k,precision,sparsity,count,batch\n"
	return []string{
		hdr + big + "\x01,16,16,16,fp16,2:4,1,1\n",
		hdr + big + ",16,16,16,fp16,2:4,1,1\n" + big + ",16,16,16,fp16,2:4,1,1\n",
		hdr + "a," + strings.Repeat("9", 100000) + ",16,16,fp16,2:4,1,1\n",
		hdr + "a,16,16,16,fp16," + big + ",1,1\n",
		strings.Repeat("garbage,", 12000) + "\n",
	}
}()

// FuzzParseCSV: no input panics, every error message is bounded, and an
// accepted trace survives a write-and-parse round trip unchanged.
func FuzzParseCSV(f *testing.F) {
	for _, s := range append(csvSeeds, longSeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := ParseCSV(bytes.NewReader([]byte(in)), "f.csv")
		checkMessage(t, err)
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := tr.WriteCSV(&b); err != nil {
			t.Fatalf("WriteCSV: %v", err)
		}
		back, err := ParseCSV(&b, "f.csv")
		if err != nil {
			t.Fatalf("re-parse of %q: %v", b.String(), err)
		}
		back.Lines, tr.Lines = nil, nil // a written file's lines are its own
		if !reflect.DeepEqual(back, tr) {
			t.Fatalf("round trip differs:\n%+v\n%+v", tr, back)
		}
	})
}

// FuzzParseJSON: the same for the JSON format.
func FuzzParseJSON(f *testing.F) {
	f.Add(`{"name":"x","gemms":[{"name":"a","m":16,"n":16,"k":16,"precision":"fp16","sparsity":"2:4","count":1,"batch":1}]}`)
	f.Add(`{"gemms":[{"name":"a","m":16,"n":16,"k":16,"precision":"fp16","sparsity":"2:4","count":1,"batch":1,"unpadded_m":3,"weights":"w","note":"n"}]}`)
	f.Add(`{"gemms":[{"m":null}]}`)
	f.Add(`{"gemms":[]} x`)
	f.Add(`[`)
	big := strings.Repeat("y", 100000)
	f.Add(`{"name":"` + big + `\u0001","gemms":[{"name":"a","m":16,"n":16,"k":16,"precision":"fp16","sparsity":"2:4","count":1,"batch":1}]}`)
	f.Add(`{"gemms":[{"name":"` + big + `","m":16,"n":16,"k":16,"precision":"fp16","sparsity":"` + big + `","count":1,"batch":1}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := ParseJSON(bytes.NewReader([]byte(in)), "f.json")
		checkMessage(t, err)
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := tr.WriteJSON(&b); err != nil {
			t.Fatalf("WriteJSON: %v", err)
		}
		back, err := ParseJSON(&b, "f.json")
		if err != nil {
			t.Fatalf("re-parse of %q: %v", b.String(), err)
		}
		back.Lines, tr.Lines = nil, nil // a written file's lines are its own
		if !reflect.DeepEqual(back, tr) {
			t.Fatalf("round trip differs:\n%+v\n%+v", tr, back)
		}
	})
}
