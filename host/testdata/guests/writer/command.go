//go:build !reactor

package main

func main() { newServer().Run() }
