package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"time"
)

// Control is a loopback HTTP endpoint through which a test acts on what a cluster's operator could do to it
// but a client cannot: POST /compact compacts etcd.
type Control struct {
	URL    string
	server *http.Server
}

func serveControl(etcd *Etcd) (*Control, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /compact", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		revision, err := etcd.Compact(ctx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]int64{"revision": revision})
	})
	c := &Control{URL: "http://" + listener.Addr().String(), server: &http.Server{Handler: mux}}
	go func() { _ = c.server.Serve(listener) }()
	return c, nil
}

func (c *Control) Close() { _ = c.server.Close() }
