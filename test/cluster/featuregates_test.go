package main

import (
	"strings"
	"testing"
)

func TestParseFeatureGates(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "", want: ""},
		{in: "HPAScaleToZero=true", want: "HPAScaleToZero=true"},
		{in: " HPAScaleToZero = TRUE , AllAlpha=0,", want: "HPAScaleToZero=true,AllAlpha=false"},
		{in: "A=t,,B=F", want: "A=true,B=false"},
		{in: "HPAScaleToZero", err: `--feature-gates: "HPAScaleToZero" has no value`},
		{in: "HPAScaleToZero=yes", err: "--feature-gates: HPAScaleToZero=yes: the value must be true or false"},
		{in: "=true", err: `--feature-gates: "" is not a feature gate name`},
		{in: "A B=true", err: `--feature-gates: "A B" is not a feature gate name`},
		{in: "HPAScaleToZero=true;AllAlpha=true", err: "--feature-gates: HPAScaleToZero=true;AllAlpha=true: the value must be true or false"},
	} {
		got, err := parseFeatureGates(tc.in)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("parseFeatureGates(%q): error %v, want one starting %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseFeatureGates(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestKnownFeatureGates(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{in: ""},
		{in: "HPAScaleToZero=true"},
		{in: "NoSuchGate=true", err: "--feature-gates: unrecognized feature gate: NoSuchGate"},
	} {
		err := knownFeatureGates(tc.in)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.HasPrefix(err.Error(), tc.err)) {
			t.Errorf("knownFeatureGates(%q): error %v, want %q", tc.in, err, tc.err)
		}
	}
	// The global gate is only copied: nothing set in this process.
	if err := knownFeatureGates("HPAScaleToZero=true"); err != nil {
		t.Fatal(err)
	}
}

func TestWithFeatureGates(t *testing.T) {
	if got := withFeatureGates([]string{"--a"}, ""); len(got) != 1 {
		t.Errorf("no gates: %v", got)
	}
	if got := withFeatureGates([]string{"--a"}, "X=true"); strings.Join(got, " ") != "--a --feature-gates=X=true" {
		t.Errorf("gates: %v", got)
	}
}
