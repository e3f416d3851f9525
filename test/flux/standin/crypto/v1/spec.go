// Package v1 stands in for github.com/fluxcd/pkg/apis/crypto/v1 in the parity oracle (test/flux/build.sh).
// It is this project's own code, not Flux's. Upstream, the package turns a ServiceAccount's
// *.auth.fluxcd.io annotations and a service provider into a validated authentication spec. Here it
// covers what the parity suite and the generic kubeConfig provider reach: no annotations (SOPS with age
// or OpenPGP keys, Vault with a static token), and the kubernetes credential with audiences (from
// .spec.kubeConfig.configMapRef data or credential.auth.fluxcd.io/audiences). The cloud service
// providers (aws, azure, gcp), SPIFFE credentials and the Vault transit-engine annotations are refused
// with ErrNotBuiltIn when they are asked for, so a case that needs them fails by name in the oracle.
package v1

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The service providers a Flux object can name.
const (
	ProviderAWS     = "aws"
	ProviderAzure   = "azure"
	ProviderGCP     = "gcp"
	ProviderGeneric = "generic"
)

// The credential providers and types (the credential.auth.fluxcd.io annotations).
const (
	CredentialProviderKubernetes = "kubernetes"
	CredentialProviderSPIFFE     = "spiffe"
	CredentialTypeJWT            = "jwt"
)

// Defaults the cloud providers would use (never reached: those providers are refused).
const (
	DefaultAudienceAWS   = "sts.amazonaws.com"
	DefaultAudienceAzure = "api://AzureADTokenExchange"
	RegistryAWSPublicECR = "public.ecr.aws"
)

const annotationDomain = "auth.fluxcd.io/"

const (
	annotationProvider  = "credential.auth.fluxcd.io/provider"
	annotationAudiences = "credential.auth.fluxcd.io/audiences"
)

// ErrNotBuiltIn is returned for every configuration the stand-in does not implement.
var ErrNotBuiltIn = errors.New("not built into this oracle (test/flux/standin/crypto stands in for github.com/fluxcd/pkg/apis/crypto)")

// CredentialSpec is how a credential is acquired.
type CredentialSpec struct {
	Provider   string
	Type       string
	Expiration time.Duration
	Username   string
	Audiences  []string
}

// AWSClusterSpec, AWSSpec, AzureClusterSpec, AzureSpec, GCPSpec and DockerHubSpec are the cloud
// settings the callers read; the stand-in never fills them.
type AWSClusterSpec struct {
	Region string
	Name   string
}

type AWSSpec struct {
	RoleARN     string
	STSEndpoint string
	Cluster     *AWSClusterSpec
}

type AzureClusterSpec struct {
	SubscriptionID string
	ResourceGroup  string
	Name           string
}

type AzureSpec struct {
	TenantID string
	ClientID string
	Cluster  *AzureClusterSpec
}

type GCPSpec struct {
	WorkloadIdentityProvider string
	ServiceAccount           string
}

type DockerHubSpec struct {
	OIDCConnectionID string
}

// TransitEngineSpec is a Vault/OpenBao login; the stand-in never fills it.
type TransitEngineSpec struct {
	LoginPath string
	Role      string
}

// AuthSpec is the authentication part of a Spec.
type AuthSpec struct {
	Credential    *CredentialSpec
	AWS           *AWSSpec
	Azure         *AzureSpec
	GCP           *GCPSpec
	DockerHub     *DockerHubSpec
	TransitEngine *TransitEngineSpec
}

// OptedIn reports whether a credential provider was chosen explicitly.
func (a *AuthSpec) OptedIn() bool {
	return a != nil && a.Credential != nil && a.Credential.Provider != ""
}

// Spec is the validated configuration.
type Spec struct {
	Auth *AuthSpec
}

type options struct {
	annotations  map[string]string
	provider     string
	audiences    string
	hasAudiences bool
}

// Option is an input of BuildSpec.
type Option func(*options)

// WithAnnotations passes a ServiceAccount's annotations.
func WithAnnotations(annotations map[string]string) Option {
	return func(o *options) { o.annotations = annotations }
}

// WithServiceProvider names the service provider the credential is for.
func WithServiceProvider(provider string) Option {
	return func(o *options) { o.provider = provider }
}

// WithSOPSVaultConfigMap says the controller has a Vault ConfigMap (accepted; nothing to validate here).
func WithSOPSVaultConfigMap() Option {
	return func(*options) {}
}

// WithKubeConfigCluster passes .data.cluster of a kubeConfig ConfigMap (used by cloud providers only).
func WithKubeConfigCluster(string) Option {
	return func(*options) {}
}

// WithKubeConfigAudiences passes .data.audiences of a kubeConfig ConfigMap (line-break separated).
func WithKubeConfigAudiences(audiences string) Option {
	return func(o *options) { o.audiences, o.hasAudiences = audiences, true }
}

// WithOCI marks an OCI registry login (accepted; nothing to validate here).
func WithOCI(bool) Option {
	return func(*options) {}
}

// BuildSpec validates the inputs and returns the spec, or ErrNotBuiltIn for what the stand-in lacks.
func BuildSpec(opts ...Option) (*Spec, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	switch o.provider {
	case "", ProviderGeneric:
	case ProviderAWS, ProviderAzure, ProviderGCP:
		return nil, fmt.Errorf("the %s service provider is %w", o.provider, ErrNotBuiltIn)
	default:
		return nil, fmt.Errorf("unknown service provider '%s'", o.provider)
	}
	var credential *CredentialSpec
	keys := make([]string, 0, len(o.annotations))
	for k := range o.annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := o.annotations[k]
		switch {
		case k == annotationProvider && v == CredentialProviderKubernetes:
			credential = orNew(credential)
			credential.Provider = v
		case k == annotationAudiences:
			credential = orNew(credential)
			credential.Audiences = splitList(v)
		case strings.Contains(k, annotationDomain):
			return nil, fmt.Errorf("the ServiceAccount annotation %s=%s is %w", k, v, ErrNotBuiltIn)
		}
	}
	if o.hasAudiences {
		if list := splitList(o.audiences); len(list) > 0 {
			credential = orNew(credential)
			credential.Audiences = list
		}
	}
	if credential == nil {
		return &Spec{}, nil
	}
	return &Spec{Auth: &AuthSpec{Credential: credential}}, nil
}

func orNew(c *CredentialSpec) *CredentialSpec {
	if c == nil {
		return &CredentialSpec{}
	}
	return c
}

// splitList splits on line breaks and commas, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
