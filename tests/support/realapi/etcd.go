package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// Etcd is the embedded etcd the apiserver stores into: one member, data in the state directory, its client
// and peer listeners on 127.0.0.1 with kernel-chosen ports.
type Etcd struct {
	URL    string
	server *embed.Etcd
	client *clientv3.Client
}

func startEtcd(dir string) (*Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "realapi"
	cfg.Dir = dir
	// Closing logs errors about its own listeners; a failure to start is returned, not logged.
	cfg.LogLevel = "fatal"
	// The HTTP/JSON gateway dials the listen address as written (port 0); the apiserver speaks gRPC.
	cfg.EnableGRPCGateway = false
	loopback, _ := url.Parse("http://127.0.0.1:0")
	cfg.ListenClientUrls = []url.URL{*loopback}
	cfg.AdvertiseClientUrls = []url.URL{*loopback}
	cfg.ListenPeerUrls = []url.URL{*loopback}
	cfg.AdvertisePeerUrls = []url.URL{*loopback}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	server, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-server.Server.ReadyNotify():
	case err := <-server.Err():
		server.Close()
		return nil, err
	case <-time.After(time.Minute):
		server.Close()
		return nil, fmt.Errorf("not ready after a minute")
	}
	e := &Etcd{URL: "http://" + server.Clients[0].Addr().String(), server: server}
	e.client, err = clientv3.New(clientv3.Config{Endpoints: []string{e.URL}, DialTimeout: 10 * time.Second})
	if err != nil {
		server.Close()
		return nil, err
	}
	return e, nil
}

// Compact compacts etcd's history up to a new revision. Two writes (of a key outside the apiserver's prefix)
// come first: a watch resumed from resourceVersion R starts at revision R+1, so the compaction must be past
// the revision after every one a client was sent. A watch or list from any of them that reaches etcd then
// gets 410 Gone. Returns the revision compacted to.
func (e *Etcd) Compact(ctx context.Context) (int64, error) {
	var revision int64
	for i := 0; i < 2; i++ {
		put, err := e.client.Put(ctx, "/realapi-compact-probe", time.Now().String())
		if err != nil {
			return 0, err
		}
		revision = put.Header.Revision
	}
	if _, err := e.client.Compact(ctx, revision, clientv3.WithCompactPhysical()); err != nil {
		return 0, err
	}
	return revision, nil
}

func (e *Etcd) Close() {
	e.client.Close()
	e.server.Close()
}
