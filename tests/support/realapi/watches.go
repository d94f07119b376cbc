package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Watches knows the open watch requests of the server's clients, so that a test can have the server end
// them all at once (POST /end-watches on the control endpoint), as kube-apiserver ends a watch when its
// timeout passes: the watch handler returns and the stream's last chunk is written. kube-apiserver honours
// the timeoutSeconds a client asks for over its own --min-request-timeout, and clients ask for minutes, so
// without this a test could not see the server end a watch mid-storm. The server's own loopback clients
// (User-Agent kube-apiserver/...) are left alone.
type Watches struct {
	tap *WatchTap // nil: no tap
	// Held for writing while EndAll ends the watches and runs what comes after: no watch starts meanwhile.
	gate sync.RWMutex
	mu   sync.Mutex
	next int
	open map[int]openWatch
}

type openWatch struct {
	agent  string
	cancel context.CancelFunc
}

func newWatches(tap *WatchTap) *Watches {
	return &Watches{tap: tap, open: map[int]openWatch{}}
}

// wrap goes in front of the API handler: inside authentication, authorization and APF, around the handler
// that serves the watch, so that what the tap sees is what the client is sent.
func (ws *Watches) wrap(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isWatch(r) || strings.HasPrefix(r.UserAgent(), "kube-apiserver/") {
			handler.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		ws.gate.RLock()
		ws.mu.Lock()
		id := ws.next
		ws.next++
		ws.open[id] = openWatch{agent: r.UserAgent(), cancel: cancel}
		ws.mu.Unlock()
		ws.gate.RUnlock()
		defer func() {
			ws.mu.Lock()
			delete(ws.open, id)
			ws.mu.Unlock()
		}()
		r = r.WithContext(ctx)
		if ws.tap != nil {
			ws.tap.serve(handler, w, r)
		} else {
			handler.ServeHTTP(w, r)
		}
	})
}

// EndAll ends every open watch of a client and waits until each has been answered to the end; then, before
// any watch starts again, runs `then` (nil: nothing). Returns the User-Agent of each watch ended.
func (ws *Watches) EndAll(then func() error) ([]string, error) {
	ws.gate.Lock()
	defer ws.gate.Unlock()
	ws.mu.Lock()
	agents := []string{}
	for _, w := range ws.open {
		w.cancel()
		agents = append(agents, w.agent)
	}
	ws.mu.Unlock()
	sort.Strings(agents)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		ws.mu.Lock()
		left := len(ws.open)
		ws.mu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return agents, fmt.Errorf("%d watches still open 10 s after they were ended", left)
		}
	}
	if then == nil {
		return agents, nil
	}
	return agents, then()
}

func isWatch(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	// As kube-apiserver reads it: strconv.ParseBool (the Python client sends "True").
	watch, _ := strconv.ParseBool(r.URL.Query().Get("watch"))
	return watch || strings.Contains(r.URL.Path, "/watch/")
}
