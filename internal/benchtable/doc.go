// Package main (benchtable) prints the `make bench` summary table; see main.go.
package main
