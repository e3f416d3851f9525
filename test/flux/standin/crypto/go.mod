// A stand-in for github.com/fluxcd/pkg/apis/crypto, written for this project (see ../README.md): the Go
// module proxy refuses the real module (v0.5.0, its only version).
module github.com/fluxcd/pkg/apis/crypto

go 1.26.0
