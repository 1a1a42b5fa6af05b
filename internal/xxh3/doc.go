// Package xxh3 is XXH3-64, the digest of the store's blocks and of call
// ids: github.com/zeebo/xxh3 v1.1.0 (BSD-2-Clause, LICENSE beside this
// file), kept to its 64-bit hash and streaming Hasher, with the CPU
// feature test moved to golang.org/x/sys/cpu (see accum_stubs_amd64.go).
// Its digests are upstream's, bit for bit: xxh3_test.go checks them
// against upstream over every length up to a few blocks and fuzzes the
// rest.
package xxh3
