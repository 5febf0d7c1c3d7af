package workloads

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

const csvHeader = "name,m,n,k,precision,sparsity,count,batch\n"

func TestParseCSV(t *testing.T) {
	tr, err := ParseCSV(strings.NewReader("# a comment\n\n"+
		"name,m,n,k,precision,sparsity,count,batch,weights,note,unpadded_m\n"+
		"fc,1024,32,2048,fp16,2:4,1,1,w.npy,\"padded, M\",1000\n"+
		"# another\n"+
		"scores,128,128,64,bf16,dense,24,16,,,\n"), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := &Trace{Name: "t.csv", GEMMs: []GEMM{
		{Name: "fc", M: 1024, N: 32, K: 2048, Precision: tensorcore.FP16,
			Sparsity: "2:4", Count: 1, Batch: 1, Weights: "w.npy",
			Note: "padded, M", UnpaddedM: 1000},
		{Name: "scores", M: 128, N: 128, K: 64, Precision: tensorcore.BF16,
			Sparsity: "dense", Count: 24, Batch: 16},
	}, Lines: &RowLines{File: "t.csv", Line: map[string]int{"fc": 4, "scores": 6}}}
	if !reflect.DeepEqual(tr, want) {
		t.Errorf("got %+v\nwant %+v", tr, want)
	}
	// The layout column, empty or named.
	tr, err = ParseCSV(strings.NewReader(csvHeader[:len(csvHeader)-1]+",layout\n"+
		"a,16,16,16,fp16,2:4,1,1,nt\nb,16,16,16,fp16,2:4,1,1,\n"), "l.csv")
	if err != nil || tr.GEMMs[0].Layout != LayoutNT || tr.GEMMs[1].RowLayout() != LayoutTN {
		t.Errorf("layout column: %+v, %v", tr, err)
	}
	// Columns in any order.
	tr, err = ParseCSV(strings.NewReader("k,n,m,batch,count,sparsity,precision,name\n"+
		"3,2,1,1,1,dense,int8,x\n"), "o.csv")
	if err != nil || tr.GEMMs[0].M != 1 || tr.GEMMs[0].K != 3 {
		t.Errorf("reordered columns: %+v, %v", tr, err)
	}
}

func TestParseCSVErrors(t *testing.T) {
	row := "a,16,16,16,fp16,2:4,1,1\n"
	cases := []struct {
		name, in  string
		line, col int
		want      string
	}{
		{"empty", "", 1, 1, "empty file"},
		{"comments only", "# x\n", 1, 1, "empty file"},
		{"no rows", csvHeader, 1, 1, "no GEMM rows"},
		{"unknown column", "name,m,n,k,precision,sparsity,count,batch,flops\n" + row,
			1, 43, `unknown column "flops"`},
		{"duplicate column", "name,m,m,n,k,precision,sparsity,count,batch\n", 1, 8, `"m" given twice`},
		{"missing column", "name,m,n,k,precision,sparsity,count\n" + row, 1, 1, `missing required column "batch"`},
		{"field count", csvHeader + "a,16,16\n", 2, 1, "wrong number of fields: expected 8 (the header's columns), got 3"},
		{"bad quote", csvHeader + "\"a,16\n", 2, 7, "extraneous or missing"},
		{"not a number", csvHeader + "a,16,1x6,16,fp16,2:4,1,1\n", 2, 6, `"1x6" is not a whole number`},
		{"float", csvHeader + "a,16,16,16.0,fp16,2:4,1,1\n", 2, 9, "not a whole number"},
		{"zero m", csvHeader + row + "b,0,16,16,fp16,2:4,1,1\n", 3, 3, "m: must be in 1.."},
		{"negative count", csvHeader + "a,16,16,16,fp16,2:4,-2,1\n", 2, 21, "count: must be in"},
		{"empty required", csvHeader + "a,16,16,16,,2:4,1,1\n", 2, 12, "precision: empty value"},
		{"precision", csvHeader + "a,16,16,16,fp8,2:4,1,1\n", 2, 12, `unknown precision "fp8"`},
		{"sparsity", csvHeader + "a,16,16,16,fp16,4:4,1,1\n", 2, 17, `unknown sparsity "4:4"`},
		{"huge", csvHeader + "a,1073741824,1073741824,1073741824,fp16,2:4,1,1\n", 2, 45, "above the limit"},
		{"too big dim", csvHeader + "a,16,16,1073741825,fp16,2:4,1,1\n", 2, 9, "k: must be in"},
		{"k not in groups", csvHeader + "a,16,16,1030,fp16,2:4,1,1\n", 2, 9,
			"k: K=1030 is not a whole number of the 4-wide groups of sparsity 2:4 (pad K to 1032"},
		{"k not in 1:2 groups", csvHeader + "a,16,16,15,tf32,1:2,1,1\n", 2, 9, "K=15 is not a whole number of the 2-wide"},
		{"unpadded above padded", "name,m,n,k,precision,sparsity,count,batch,unpadded_k\n" +
			"a,16,16,16,fp16,2:4,1,1,17\n", 2, 25, "unpadded_k: must be 0"},
		{"control char", csvHeader + "\"a\nb\",16,16,16,fp16,2:4,1,1\n", 2, 1, "name: control character"},
		{"hash name", csvHeader + "\"#a\",16,16,16,fp16,2:4,1,1\n", 2, 1, "name: must not start with '#'"},
		{"duplicate name", csvHeader + row + "b,32,16,16,fp16,2:4,1,1\n" + row, 4, 1,
			`name: layer name "a" is already used by line 2`},
		{"layout", "name,m,n,k,precision,sparsity,count,batch,layout\n" +
			"a,16,16,16,fp16,2:4,1,1,nx\n", 2, 25, `layout: unknown layout "nx" (want one of nn, nt, tn, tt`},
		{"int8 layout", "name,m,n,k,precision,sparsity,count,batch,layout\n" +
			"a,16,16,16,int8,dense,1,1,nn\n", 2, 27, "layout: layout nn at int8: CUTLASS's sm80 int8 tensor-op kernels (dense and sparse) are tn only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseCSV(strings.NewReader(c.in), "bad.csv")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a *ParseError", err)
			}
			if pe.File != "bad.csv" || pe.Line != c.line || pe.Column != c.col ||
				!strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q at %d:%d, want %q at %d:%d", err, pe.Line,
					pe.Column, c.want, c.line, c.col)
			}
		})
	}
}

func TestParseJSONErrors(t *testing.T) {
	g := `{"name":"a","m":16,"n":16,"k":16,"precision":"fp16","sparsity":"2:4","count":1,"batch":1}`
	cases := []struct {
		name, in  string
		line, col int
		want      string
	}{
		{"empty", ``, 1, 1, "unexpected end"},
		{"not object", `[]`, 1, 1, "want '{'"},
		{"unknown top key", `{"gemm": []}`, 1, 2, "gemm: unknown key"},
		{"missing gemms", `{"name": "x"}`, 1, 1, "gemms: missing required key"},
		{"NUL in the trace name", `{"name": "t\u0000x", "gemms": [` + g + `]}`, 1, 10, `name: control character or invalid UTF-8 in "t\x00x"`},
		{"empty list", `{"gemms": []}`, 1, 11, "no GEMMs"},
		{"trailing", `{"gemms": [` + g + `]} x`, 1, 104, "trailing data"},
		{"syntax", "{\"gemms\": [\n" + g + ",]}", 2, 91, "invalid character"},
		{"dup key", `{"gemms": [{"name":"a","name":"b"}]}`, 1, 24, "name: key given twice"},
		{"unknown field", "{\"gemms\": [\n  {\"flops\": 3}]}", 2, 4, "flops: unknown key"},
		{"missing field", "{\"gemms\": [\n  {\"name\": \"a\"}]}", 2, 3, "m: missing required key"},
		{"null", `{"gemms": [{"m": null}]}`, 1, 18, "m: null is not allowed"},
		{"float", `{"gemms": [{"m": 1.5}]}`, 1, 18, "m: want a whole number"},
		{"string number", `{"gemms": [{"m": "16"}]}`, 1, 18, "m: want a whole number"},
		{"bad value", strings.Replace(`{"gemms": [`+g+`]}`, `"k":16`, `"k":-4`, 1), 1, 42, "k: must be in"},
		{"bad sparsity", strings.Replace(`{"gemms": [`+g+`]}`, `"2:4"`, `"3:2"`, 1), 1, 75, `unknown sparsity "3:2"`},
		{"duplicate name", "{\"gemms\": [\n" + g + ",\n" + g + "]}", 3, 1,
			`name: layer name "a" is already used by the GEMM on line 2`},
		{"k not in groups", strings.Replace(`{"gemms": [`+g+`]}`, `"k":16`, `"k":18`, 1), 1, 42, "k: K=18 is not a whole number"},
		{"bad layout", strings.Replace(`{"gemms": [`+g+`]}`, `"batch":1`, `"batch":1,"layout":"TN"`, 1), 1, 110, `layout: unknown layout "TN"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseJSON(strings.NewReader(c.in), "bad.json")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a *ParseError", err)
			}
			if pe.File != "bad.json" || pe.Line != c.line || pe.Column != c.col ||
				!strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q at %d:%d, want %q at %d:%d", err, pe.Line,
					pe.Column, c.want, c.line, c.col)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "my-net.csv")
	os.WriteFile(csvPath, []byte(csvHeader+"a,16,16,16,fp16,2:4,1,1\n"+
		"name,m,n,k,precision,sparsity,count,batch\n"), 0o644)
	if _, err := Load(csvPath); err == nil || !strings.Contains(err.Error(), csvPath+":3:") {
		t.Errorf("Load with a repeated header: %v, want an error at %s:3", err, csvPath)
	}
	os.WriteFile(csvPath, []byte("name,m,n,k,precision,sparsity,count,batch,weights\n"+
		"a,16,16,16,fp16,2:4,1,1,w/a.npy\nb,16,16,16,fp16,2:4,1,1,/abs/b.npy\n"), 0o644)
	if _, err := Load(csvPath); err == nil || !strings.Contains(err.Error(), "column weights") {
		t.Errorf("Load with missing weights: %v, want an error naming column weights", err)
	}
	tr, _, err := loadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Name != "my-net" || tr.GEMMs[0].Weights != filepath.Join(dir, "w/a.npy") ||
		tr.GEMMs[1].Weights != "/abs/b.npy" {
		t.Errorf("Load = %+v", tr)
	}
	jsPath := filepath.Join(dir, "net.JSON")
	f, _ := os.Create(jsPath)
	tr.Name = "named"
	tr.WriteJSON(f)
	f.Close()
	back, _, err := loadFile(jsPath)
	if err != nil || back.Name != "named" || len(back.GEMMs) != 2 {
		t.Errorf("Load(json) = %+v, %v", back, err)
	}
	for _, p := range []string{filepath.Join(dir, "x.yaml"), filepath.Join(dir, "missing.csv")} {
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("Load(%s) error %v, want one naming the file", p, err)
		}
	}
}

func TestParseGEMM(t *testing.T) {
	cases := []struct {
		in      string
		m, n, k int
		want    string
	}{
		{"4096x4096x4096", 4096, 4096, 4096, ""},
		{"1x2x3", 1, 2, 3, ""},
		{"4096x4096", 0, 0, 0, "want MxNxK"},
		{"0x16x16", 0, 0, 0, "M must be > 0"},
		{"16x-1x16", 0, 0, 0, "N must be > 0"},
		{"16x16xk", 0, 0, 0, `K "k" is not a whole number`},
		{"16x16x1.5", 0, 0, 0, "not a whole number"},
		{"16X16X16", 0, 0, 0, "want MxNxK"},
		{"16x16x99999999999", 0, 0, 0, "above the limit"},
		{"", 0, 0, 0, "want MxNxK"},
	}
	for _, c := range cases {
		m, n, k, err := ParseGEMM(c.in)
		if c.want == "" {
			if err != nil || m != c.m || n != c.n || k != c.k {
				t.Errorf("ParseGEMM(%q) = %d,%d,%d,%v", c.in, m, n, k, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseGEMM(%q) error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestSparseApplied(t *testing.T) {
	g := func(m, k int, sp string) GEMM { return GEMM{M: m, K: k, Sparsity: sp} }
	cases := []struct {
		g    GEMM
		want bool
	}{
		{g(64, 576, "2:4"), true},
		{g(1000, 2048, "2:4"), true},
		{g(1001, 2048, "2:4"), false},
		{g(64, 147, "2:4"), false},
		{g(64, 40, "2:4"), false}, // 40 % 16 != 0
		{g(64, 64, "dense"), false},
		{g(64, 64, "1:2"), true},
	}
	for _, c := range cases {
		if got := c.g.SparseApplied(ASPOutMultiple, ASPInMultiple); got != c.want {
			t.Errorf("%+v.SparseApplied(8, 16) = %v, want %v", c.g, got, c.want)
		}
	}
	if !g(64, 40, "2:4").SparseApplied(0, 0) || g(64, 42, "2:4").SparseApplied(0, 0) {
		t.Error("SparseApplied(0, 0) should check only whole 2:4 groups")
	}
}
