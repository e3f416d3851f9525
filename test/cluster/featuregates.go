package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// featureGateName is how Kubernetes names a feature gate (HPAScaleToZero, AllAlpha).
var featureGateName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)

// parseFeatureGates reads `up --feature-gates` as the Kubernetes components take it: a
// comma-separated list of Name=bool (spaces around either side allowed, empty entries skipped),
// and returns it written the one way the components are given it (Name=true|false, in the order
// given). A malformed entry, an empty name or a value that is not a boolean is an error naming
// the flag and the entry. Whether each gate exists is checked by knownFeatureGates.
func parseFeatureGates(value string) (string, error) {
	var out []string
	for _, entry := range strings.Split(value, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		name, val, ok := strings.Cut(entry, "=")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !ok {
			return "", fmt.Errorf("--feature-gates: %q has no value: write %s=true or %s=false", entry, name, name)
		}
		if !featureGateName.MatchString(name) {
			return "", fmt.Errorf("--feature-gates: %q is not a feature gate name (Name=true|false, entries separated by commas)", name)
		}
		on, err := strconv.ParseBool(val)
		if err != nil {
			return "", fmt.Errorf("--feature-gates: %s=%s: the value must be true or false", name, val)
		}
		out = append(out, name+"="+strconv.FormatBool(on))
	}
	return strings.Join(out, ","), nil
}

// knownFeatureGates checks parsed gates (as parseFeatureGates returns them) against the gates this
// build of the components knows, as kube-apiserver would at start: an unknown gate, or one locked
// to its default (GA or deprecated), is an error naming the flag, before any component starts.
func knownFeatureGates(gates string) error {
	if gates == "" {
		return nil
	}
	// A copy: nothing is set in this process. Its warnings (a GA gate set) are the apiserver's to log.
	gate := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	var err error
	// SetWithLogger exists from Kubernetes 1.35 (MutableFeatureGateWithLogger); a 1.34 build only has Set.
	if quiet, ok := gate.(interface {
		SetWithLogger(logr.Logger, string) error
	}); ok {
		err = quiet.SetWithLogger(logr.Discard(), gates)
	} else {
		err = gate.Set(gates)
	}
	if err != nil {
		return fmt.Errorf("--feature-gates: %v", err)
	}
	return nil
}

// withFeatureGates adds --feature-gates to a component's arguments when any were given.
func withFeatureGates(args []string, gates string) []string {
	if gates == "" {
		return args
	}
	return append(args, "--feature-gates="+gates)
}
