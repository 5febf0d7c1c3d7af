package validation

import (
	"strings"
	"testing"
)

const smallPoints = `id,hardware,precision,kind,m,n,k,dense,sparse,unit,speedup,source
peak-fp16,A100-SXM4-40GB,fp16,peak,,,,311.2,,TFLOPS,,test
lat-l1,A100-80GB,,latency,,,,33,,cycles,,test
gemm-small,A100,fp16,gemm,512,512,512,20,15,us,,test
gemm-tflops,A100,fp16,gemm,1024,1024,1024,100,150,TFLOPS,1.5,test
`

func TestValidatorRunsEveryKind(t *testing.T) {
	pts, err := ParsePoints(strings.NewReader(smallPoints), "small.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(pts, Options{Calibrated: []string{"lat-l1"}})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]Summary{}
	for _, s := range rep.Summary {
		kinds[s.Kind] = s
	}
	for _, k := range []string{"peak", "latency", "gemm_dense_time",
		"gemm_sparse_time", "gemm_speedup"} {
		if kinds[k].N == 0 {
			t.Errorf("no %s comparison (summary %+v, skipped %v)", k,
				rep.Summary, rep.Skipped)
		}
	}
	for _, r := range rep.Rows {
		if r.Simulated <= 0 {
			t.Errorf("%s %s: simulated %g", r.ID, r.Kind, r.Simulated)
		}
		if r.ID == "lat-l1" && (r.HeldOut || r.Config != "a100-80gb") {
			t.Errorf("lat-l1: held out %v on %s", r.HeldOut, r.Config)
		}
		if r.ID == "peak-fp16" && (r.Error > 0.02 || r.Error < -0.02) {
			t.Errorf("peak-fp16 error %.3f: the tensor-core peak is off", r.Error)
		}
		if r.ID == "gemm-tflops" && r.Kind == "gemm_dense_time" {
			want := 2.0 * 1024 * 1024 * 1024 / 100e12 * 1e6
			if d := r.Measured - want; d > 1e-9 || d < -1e-9 {
				t.Errorf("TFLOPS row converted to %g us, want %g", r.Measured, want)
			}
		}
	}
	if _, worst := rep.MaxMAPE(); worst <= 0 {
		t.Errorf("max MAPE %g: errors were not computed", worst)
	}
}

func TestBadPointsFiles(t *testing.T) {
	for name, text := range map[string]string{
		"header":  "id,hw\nx,y\n",
		"number":  strings.Replace(smallPoints, "311.2", "abc", 1),
		"missing": strings.Replace(smallPoints, "512,512,512", "512,,512", 1),
		"fields":  smallPoints + "short,row\n",
	} {
		_, err := ParsePoints(strings.NewReader(text), "bad.csv")
		if err == nil || !strings.Contains(err.Error(), "bad.csv") {
			t.Errorf("%s: want an error naming the file, got %v", name, err)
		}
	}
}
