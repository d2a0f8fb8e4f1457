package s3test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
)

// Fault is what a Proxy does with one request.
type Fault int

const (
	// Pass forwards the request and returns the server's answer.
	Pass Fault = iota
	// StoredThen503 forwards the request (the server stores the object),
	// drops the server's answer and replies 503 SlowDown: the client is told
	// the request failed although it took effect.
	StoredThen503
	// LostThen503 replies 503 SlowDown without forwarding: the request had
	// no effect.
	LostThen503
)

// Hook decides the fate of each request reaching a Proxy. It is called from
// the proxy's handler goroutines and must be safe for concurrent use.
type Hook func(r *http.Request) Fault

// IsConditionalPut reports whether r is a PutObject with If-None-Match (the
// commit primitive), as opposed to a plain PUT or a multipart request.
func IsConditionalPut(r *http.Request) bool {
	q := r.URL.Query()
	return r.Method == http.MethodPut && r.Header.Get("If-None-Match") != "" && !q.Has("uploadId") && !q.Has("partNumber")
}

type faultKey struct{}

// Proxy starts an HTTP proxy in front of s whose hook may fault requests,
// and returns a view of s whose Endpoint and URL go through the proxy. The
// proxy keeps the client's Host header, so SigV4 signatures made for the
// proxy's address verify at the server. It stops when the test ends.
func (s *Server) Proxy(t testing.TB, hook Hook) *Server {
	t.Helper()
	target, err := url.Parse(s.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
		},
		ModifyResponse: func(resp *http.Response) error {
			if f, _ := resp.Request.Context().Value(faultKey{}).(Fault); f == StoredThen503 {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				*resp = *slowDown(resp.Request)
			}
			return nil
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := Pass
		if hook != nil {
			f = hook(r)
		}
		if f == LostThen503 {
			_, _ = io.Copy(io.Discard, r.Body)
			writeSlowDown(w)
			return
		}
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), faultKey{}, f)))
	}))
	t.Cleanup(srv.Close)
	return &Server{Endpoint: srv.URL, Bucket: s.Bucket, Root: s.Root, Sidecar: s.Sidecar, client: NewClient(srv.URL)}
}

const slowDownBody = `<?xml version="1.0" encoding="UTF-8"?>` +
	`<Error><Code>SlowDown</Code><Message>s3test: injected 503</Message><RequestId>s3test</RequestId></Error>`

func writeSlowDown(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = fmt.Fprint(w, slowDownBody)
}

func slowDown(req *http.Request) *http.Response {
	rec := httptest.NewRecorder()
	writeSlowDown(rec)
	resp := rec.Result()
	resp.Request = req
	return resp
}
