package statuspage

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"
)

// Paths the handler answers.
const (
	PagePath = "/status"
	JSONPath = "/status.json"
)

// securityHeaders keep the page inert: no script may run, nothing is
// fetched from anywhere, no other site may frame or post to it.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-store",
}

// Handler serves the page at PagePath (and /), the JSON at JSONPath.
// Only GET and HEAD are answered: the page changes nothing.
func Handler(s Sources, now func() time.Time) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, PagePath, http.StatusFound)
	})
	mux.HandleFunc("GET "+PagePath, func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		if err := Render(&b, Build(s, now())); err != nil {
			http.Error(w, "render status page: "+err.Error(), http.StatusInternalServerError)
			return
		}
		header(w, "text/html; charset=utf-8")
		w.Write(b.Bytes())
	})
	mux.HandleFunc("GET "+JSONPath, func(w http.ResponseWriter, r *http.Request) {
		b, err := json.Marshal(Build(s, now()))
		if err != nil {
			http.Error(w, "encode status: "+err.Error(), http.StatusInternalServerError)
			return
		}
		header(w, "application/json")
		w.Write(append(b, '\n'))
	})
	return mux
}

func header(w http.ResponseWriter, ct string) {
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", ct)
}
