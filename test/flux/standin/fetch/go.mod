// The artifact fetcher kustomize-controller v1.10.1 calls, over the newest version the Go module proxy
// serves (v0.25.0, which kustomize-controller v1.9.6 used): see ../README.md. The oracle's go.mod
// replaces this module's upstream path with the real v0.25.0.
module github.com/fluxcd/pkg/http/fetch

go 1.26.0

require kr.invalid/fluxcd/pkg/http/fetch v0.25.0
