package v1

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ParseClusterAddress returns a Kubernetes API server address as https://host:port in lower case
// (https:// assumed when no scheme is given, port 443 when none is given); any other scheme is refused.
func ParseClusterAddress(address string) (string, error) {
	if address == "" {
		return "", errors.New("empty address")
	}
	if !strings.Contains(address, "://") {
		address = "https://" + address
	}
	u, err := url.Parse(address)
	if err != nil {
		return "", fmt.Errorf("failed to parse Kubernetes API server address '%s': %w", address, err)
	}
	if u.Scheme != "https" {
		return "", fmt.Errorf("the Kubernetes API server address '%s' must use https scheme", address)
	}
	host := u.Host
	if u.Port() == "" {
		host += ":443"
	}
	return "https://" + strings.ToLower(host), nil
}

// GetRegistryFromArtifactRepository returns the host of an OCI repository reference
// (registry.example.com/path[:tag] or oci://registry.example.com/path).
func GetRegistryFromArtifactRepository(artifactRepository string) (string, error) {
	ref := strings.TrimPrefix(artifactRepository, "oci://")
	host, _, _ := strings.Cut(ref, "/")
	if host == "" {
		return "", fmt.Errorf("invalid artifact repository '%s'", artifactRepository)
	}
	return host, nil
}

// The cloud-provider helpers: refused (their providers are not built into the oracle).

func ParseArtifactRepository(provider, artifactRepository string) (string, error) {
	return "", fmt.Errorf("the %s artifact repository '%s' is %w", provider, artifactRepository, ErrNotBuiltIn)
}

func ParseGitRepository(provider, gitURL string) (string, error) {
	return "", fmt.Errorf("the %s Git repository '%s' is %w", provider, gitURL, ErrNotBuiltIn)
}

func GetAWSRegionFromCodeCommitURL(string) (string, error) {
	return "", fmt.Errorf("AWS CodeCommit is %w", ErrNotBuiltIn)
}

func GetAWSRegionFromArtifactRegistryInput(string) string {
	return ""
}

func GetAWSRoleSessionName(name, namespace, _ string) string {
	return namespace + "." + name
}

func GetDefaultAudienceGCP(string) string {
	return ""
}
