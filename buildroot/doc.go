// Package buildroot holds no code: it is the BR2_EXTERNAL tree that builds
// the fieldtap firmware image, and lint_test.go checks that tree in
// `make test`, since Buildroot itself cannot be fetched or run in CI.
package buildroot
