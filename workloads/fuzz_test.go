package workloads

import (
	"bytes"
	"reflect"
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

// FuzzParseCSV: no input panics, and an accepted trace survives a
// write-and-parse round trip unchanged.
func FuzzParseCSV(f *testing.F) {
	for _, s := range csvSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := ParseCSV(bytes.NewReader([]byte(in)), "f.csv")
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
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := ParseJSON(bytes.NewReader([]byte(in)), "f.json")
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
		if !reflect.DeepEqual(back, tr) {
			t.Fatalf("round trip differs:\n%+v\n%+v", tr, back)
		}
	})
}

// FuzzReadNPY: no .npy input panics.
func FuzzReadNPY(f *testing.F) {
	var b bytes.Buffer
	WriteNPY(&b, []int{2, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(b.Bytes())
	f.Add([]byte("\x93NUMPY\x01\x00\x10\x00{'descr': '<f2'}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		ReadNPY(bytes.NewReader(in), "f.npy")
	})
}

// FuzzReadSafetensors: no safetensors input panics.
func FuzzReadSafetensors(f *testing.F) {
	var b bytes.Buffer
	WriteSafetensors(&b, []Tensor{{Name: "w", Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}}})
	f.Add(b.Bytes(), "")
	f.Add(b.Bytes(), "w")
	f.Add([]byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":{\"dtype\":1}}"), "a")
	f.Fuzz(func(t *testing.T, in []byte, tensor string) {
		ReadSafetensors(bytes.NewReader(in), "f.safetensors", tensor)
	})
}
