//go:build command

package main

func main() { newServer().Run() }
