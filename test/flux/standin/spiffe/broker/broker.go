// Package broker stands in for github.com/fluxcd/pkg/spiffe/broker in the parity oracle: the types
// kustomize-controller and github.com/fluxcd/pkg/auth name, and a New that refuses.
package broker

import (
	"context"

	"github.com/fluxcd/pkg/spiffe"
)

// KubernetesObjectReference names the object a JWT-SVID would be issued for.
type KubernetesObjectReference struct {
	Group     string
	Kind      string
	Namespace string
	Name      string
	UID       string
}

// JWTSVID is a JWT-SVID as the callers use it: its compact serialisation.
type JWTSVID struct {
	Token string
}

// Marshal returns the token.
func (s *JWTSVID) Marshal() string {
	return s.Token
}

// Interface fetches JWT-SVIDs for objects.
type Interface interface {
	FetchJWTSVID(ctx context.Context, object KubernetesObjectReference, audiences []string) (*JWTSVID, error)
}

// Client is an Interface that holds a connection.
type Client interface {
	Interface
	Close() error
}

// New refuses: the oracle has no SPIFFE Broker client.
func New(_ string, _ []string, _ any) (Client, error) {
	return nil, spiffe.ErrNotBuiltIn
}
