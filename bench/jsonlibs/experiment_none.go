//go:build !goexperiment.jsonv2

package main

// experimentLibs is empty without GOEXPERIMENT=jsonv2.
var experimentLibs []lib
