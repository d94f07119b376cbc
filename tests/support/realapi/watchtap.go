package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apiserver/pkg/endpoints/responsewriter"
)

// WatchTap records when kube-apiserver hands each watch event on one resource to a client's connection: the
// reference a client's observation is measured against. The lab attached to this server knows when the
// server accepted the write carrying a change; when the change reached a watcher is the server's to say, and
// that delay (its watch cache's dispatch, on a machine it shares) is the server's, not the watcher's.
//
// While the server runs, the tap only copies each event's bytes and two clock readings; it decodes them and
// writes the file when it is closed, so that the server under measurement spends next to nothing on it.
// One JSON line per event and watch: {"t0", "t": unix seconds, the bytes went to the connection's socket in
// between (the event's first byte was handed to the response writer at t0, which writes a large event
// through to the socket at once; the flush after it had returned at t), "agent": the client's User-Agent,
// "watch": n (one per watch request), "type", "name", "namespace", "rv": the object's resourceVersion}.
// Bookmarks are not recorded.
type WatchTap struct {
	resource string
	path     string
	watches  atomic.Int64
	mu       sync.Mutex
	events   []tappedEvent
	closed   bool
}

type tappedEvent struct {
	t0, t float64
	agent string
	watch int64
	line  []byte
}

func newWatchTap(path, resource string) *WatchTap {
	return &WatchTap{resource: resource, path: path}
}

// serve serves the watch request r (Watches.wrap decided it is one) through the tap when it watches the
// tap's resource.
func (t *WatchTap) serve(handler http.Handler, w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/"+t.resource) {
		handler.ServeHTTP(w, r)
		return
	}
	writer := &tapWriter{ResponseWriter: w, tap: t, agent: r.UserAgent(), watch: t.watches.Add(1)}
	handler.ServeHTTP(responsewriter.WrapForHTTP1Or2(writer), r)
	writer.stamp() // what was written and not flushed reaches the socket as the handler returns
}

func (t *WatchTap) record(events []tappedEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.events = append(t.events, events...)
	}
}

type tapEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string `json:"name"`
			Namespace       string `json:"namespace"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"object"`
}

type tapRecord struct {
	T0        float64 `json:"t0"`
	T         float64 `json:"t"`
	Agent     string  `json:"agent"`
	Watch     int64   `json:"watch"`
	Type      string  `json:"type"`
	Name      string  `json:"name"`
	Namespace string  `json:"namespace,omitempty"`
	RV        string  `json:"rv"`
}

// Close decodes what was recorded into the file; events after it are not recorded.
func (t *WatchTap) Close() error {
	t.mu.Lock()
	events := t.events
	t.events, t.closed = nil, true
	t.mu.Unlock()
	file, err := os.Create(t.path)
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(file, 1<<20)
	for _, e := range events {
		var event tapEvent
		if json.Unmarshal(e.line, &event) != nil || event.Type == "BOOKMARK" || event.Object.Metadata.Name == "" {
			continue
		}
		meta := event.Object.Metadata
		line, _ := json.Marshal(tapRecord{T0: e.t0, T: e.t, Agent: e.agent, Watch: e.watch, Type: event.Type,
			Name: meta.Name, Namespace: meta.Namespace, RV: meta.ResourceVersion})
		_, _ = out.Write(append(line, '\n'))
	}
	err = out.Flush()
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	return err
}

// tapWriter cuts the watch's newline-delimited events out of what is written and stamps them when they are
// flushed.
type tapWriter struct {
	http.ResponseWriter
	tap     *WatchTap
	agent   string
	watch   int64
	partial []byte
	begun   float64 // when the first byte of the partial line was written
	pending []tappedEvent
}

func (w *tapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *tapWriter) Write(p []byte) (int, error) {
	called := unixNow()
	n, err := w.ResponseWriter.Write(p)
	if len(w.partial) == 0 {
		w.begun = called
	}
	w.partial = append(w.partial, p[:n]...)
	for {
		end := bytes.IndexByte(w.partial, '\n')
		if end < 0 {
			break
		}
		w.pending = append(w.pending, tappedEvent{t0: w.begun, agent: w.agent, watch: w.watch,
			line: bytes.Clone(w.partial[:end])})
		w.partial = w.partial[end+1:]
		w.begun = called
	}
	if len(w.partial) == 0 {
		w.partial = nil
	}
	return n, err
}

func (w *tapWriter) Flush() {
	if flusher, ok := w.ResponseWriter.(http.Flusher); ok {
		flusher.Flush()
	}
	w.stamp()
}

func (w *tapWriter) stamp() {
	if len(w.pending) == 0 {
		return
	}
	now := unixNow()
	for i := range w.pending {
		w.pending[i].t = now
	}
	w.tap.record(w.pending)
	w.pending = w.pending[:0]
}

func unixNow() float64 { return float64(time.Now().UnixNano()) / 1e9 }
