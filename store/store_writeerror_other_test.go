//go:build !linux

package store_test

// appendPastSizeLimit needs Linux's file size limit; elsewhere the write
// failure test does not run its helper.
func appendPastSizeLimit(string) string { return "not on this system" }
