package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"time"
)

// Control is a loopback HTTP endpoint through which a test acts on what a cluster's operator could do to it
// but a client cannot: POST /compact compacts etcd ({"revision"}); POST /end-watches ends the clients' open
// watches ({"ended": n, "agents": the User-Agent of each}), with ?compact=true compacting etcd before any
// watch starts again ({"revision"} too).
type Control struct {
	URL    string
	server *http.Server
}

func serveControl(etcd *Etcd, watches *Watches) (*Control, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	compact := func(r *http.Request) (int64, error) {
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		return etcd.Compact(ctx)
	}
	mux.HandleFunc("POST /compact", func(w http.ResponseWriter, r *http.Request) {
		revision, err := compact(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]int64{"revision": revision})
	})
	mux.HandleFunc("POST /end-watches", func(w http.ResponseWriter, r *http.Request) {
		// ?compact=true: etcd is compacted after the watches ended and before any starts again, so that every
		// resourceVersion a watcher was sent is older than the compaction: each resumption is answered 410.
		var revision int64
		var then func() error
		if r.URL.Query().Get("compact") == "true" {
			then = func() (err error) {
				revision, err = compact(r)
				return err
			}
		}
		agents, err := watches.EndAll(then)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		answer := map[string]any{"ended": len(agents), "agents": agents}
		if then != nil {
			answer["revision"] = revision
		}
		_ = json.NewEncoder(w).Encode(answer)
	})
	c := &Control{URL: "http://" + listener.Addr().String(), server: &http.Server{Handler: mux}}
	go func() { _ = c.server.Serve(listener) }()
	return c, nil
}

func (c *Control) Close() { _ = c.server.Close() }
