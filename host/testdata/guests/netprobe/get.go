package main

import "net/http"

// httpGet is plain net/http, as library code would call it.
func httpGet(url string) (*http.Response, error) { return http.Get(url) }
