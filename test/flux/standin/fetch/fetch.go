// Package fetch is this project's shim over github.com/fluxcd/pkg/http/fetch v0.25.0 (the version the
// Go module proxy serves; kustomize-controller v1.10.1 wants v0.30.1, refused). It passes the fetcher
// through and adds the two names v1.10 calls that v0.25.0 lacks:
//   - ErrDigestMismatch: v0.25.0 reports a digest mismatch as a plain error ("computed digest doesn't
//     match provided ..."); FetchWithContext wraps that error in ErrDigestMismatch, so the oracle
//     requeues at --requeue-dependency with ArtifactFailed, as v1.10.1 does.
//   - WithTLSConfig: SPIFFE mTLS to the artifact server. The SPIFFE stand-in refuses at start-up
//     before this could be called, so here it panics.
package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	upstream "kr.invalid/fluxcd/pkg/http/fetch"
)

// Option configures the fetcher (v0.25.0's options).
type Option = upstream.Option

var (
	ErrFileNotFound   = upstream.ErrFileNotFound
	ErrDigestMismatch = errors.New("artifact digest mismatch")
)

var (
	WithRetries           = upstream.WithRetries
	WithMaxDownloadSize   = upstream.WithMaxDownloadSize
	WithUntar             = upstream.WithUntar
	WithHostnameOverwrite = upstream.WithHostnameOverwrite
	WithLogger            = upstream.WithLogger
	WithFileName          = upstream.WithFileName
	WithFileMode          = upstream.WithFileMode
)

// WithTLSConfig is SPIFFE-only (see the package comment).
func WithTLSConfig(*tls.Config) Option {
	panic("fetch.WithTLSConfig: SPIFFE mTLS is not built into this oracle")
}

// ArchiveFetcher is v0.25.0's fetcher with digest mismatches made recognisable.
type ArchiveFetcher struct {
	*upstream.ArchiveFetcher
}

// New returns a fetcher with the options applied.
func New(opts ...Option) *ArchiveFetcher {
	return &ArchiveFetcher{upstream.New(opts...)}
}

// Fetch is FetchWithContext without a context.
func (r *ArchiveFetcher) Fetch(archiveURL, digest, dir string) error {
	return r.FetchWithContext(context.Background(), archiveURL, digest, dir)
}

// FetchWithContext downloads, verifies and extracts the archive.
func (r *ArchiveFetcher) FetchWithContext(ctx context.Context, archiveURL, digest, dir string) error {
	err := r.ArchiveFetcher.FetchWithContext(ctx, archiveURL, digest, dir)
	if err != nil && strings.Contains(err.Error(), "computed digest doesn't match provided") {
		return fmt.Errorf("%w: %w", ErrDigestMismatch, err)
	}
	return err
}
