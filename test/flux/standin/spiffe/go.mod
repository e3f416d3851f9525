// A stand-in for github.com/fluxcd/pkg/spiffe, written for this project (see ../README.md): the Go module
// proxy refuses every version of the real module, and the parity oracle does not use SPIFFE.
module github.com/fluxcd/pkg/spiffe

go 1.26.0
