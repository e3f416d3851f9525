// Package spiffe stands in for github.com/fluxcd/pkg/spiffe in the parity oracle (test/flux/build.sh).
// It is this project's own code, not Flux's: it gives kustomize-controller the flag names it binds and
// refuses every SPIFFE feature, so the oracle starts normally unless a SPIFFE flag is set, and then
// exits at start-up (upstream's code first fails to reach a SPIFFE Workload API socket, if none is set).
package spiffe

import (
	"crypto/tls"
	"errors"
)

// The kustomize-controller flags that turn SPIFFE on (their names as the controller documents them).
const (
	ControllerFlagAuthorizedArtifactServerSPIFFEID = "authorized-artifact-server-spiffe-id"
	ControllerFlagAuthorizedEventServerSPIFFEID    = "authorized-event-server-spiffe-id"
	ControllerFlagSPIFFEBrokerEndpoint             = "spiffe-broker-endpoint"
	ControllerFlagSPIFFEBrokerID                   = "spiffe-broker-id"
)

// ErrNotBuiltIn is what every SPIFFE feature of the oracle returns.
var ErrNotBuiltIn = errors.New("SPIFFE is not built into this oracle (test/flux/standin/spiffe stands in for github.com/fluxcd/pkg/spiffe)")

// BuildTLSConfig refuses: the oracle has no SPIFFE mTLS.
func BuildTLSConfig(_ any, _ ...string) (*tls.Config, error) {
	return nil, ErrNotBuiltIn
}
