// realapi: a real Kubernetes API server for the test suite. It starts an embedded etcd and kube-apiserver
// in one process (the releases tests/support/realapi/go.mod pins), both on 127.0.0.1 with ports the kernel
// picks, with its own CA and serving certificate, the Node and RBAC authorizers, NamespaceLifecycle and
// ResourceQuota admission and API Priority and Fairness on. Clients authenticate with bearer tokens from a
// token file: an administrator (system:masters) and bootstorm's service account
// (system:serviceaccount:bootstorm:bootstorm), which holds only what the manifests given with -apply grant it
// (the repository's deploy/kubernetes/rbac.yaml).
//
// One controller of kube-controller-manager runs beside it: the namespace controller (namespaces.go), so that
// a namespace deleted here is emptied and goes as on a cluster. No other does: no garbage collector, no quota
// controller, no KubeVirt or CDI (a test attaches the lab for those: `bootstorm lab attach`).
//
// The API aggregation layer is set up as a cluster's installer sets it up (a front-proxy CA, the client
// certificate kube-apiserver presents to aggregated API servers, the X-Remote-* request headers), so an
// APIService (KubeVirt's subresources.kubevirt.io) can be served by a backend of the suite. Every pod of the
// suite runs on this machine: a Service resolves to 127.0.0.1 at its targetPort (resolver.go).
//
// Once the server is ready and every -apply manifest is in (CRDs established first), it writes into -dir a
// kubeconfig per user, ca.pem and endpoints.json (last: its presence means the server serves), prints the
// same JSON as one line on stdout, and serves until stdin reaches EOF (with -stdin) or SIGTERM/SIGINT arrives;
// then it stops the apiserver and etcd, removes endpoints.json and exits 0.
//
// Arguments after `--` go to kube-apiserver as flags (e.g. --min-request-timeout=5, --watch-cache=false). A
// loopback control endpoint (endpoints.json's "control") lets a test do what a cluster's operator or the
// server itself could: POST /compact compacts etcd's history past every revision a client was sent, as the
// apiserver's own compactor compacts it every 5 minutes; POST /end-watches ends every client's open watch, as the server does
// when a watch's timeout passes (watches.go), and with ?compact=true compacts etcd before any watch starts
// again, so that every watch resumed is answered 410 Gone.
//
// -watch-tap FILE records when the server flushed each watch event on VirtualMachineInstances to each
// client (watchtap.go): the bench's reference for how late a watcher saw a change the server had sent.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// Started is what endpoints.json and the line on stdout say.
type Started struct {
	Kube        string            `json:"kube"`
	CAFile      string            `json:"caFile"`
	Kubeconfig  string            `json:"kubeconfig"`
	Kubeconfigs map[string]string `json:"kubeconfigs"`
	Users       map[string]string `json:"users"`
	Etcd        string            `json:"etcd"`
	Control     string            `json:"control"`
	Version     string            `json:"version"`
	Pid         int               `json:"pid"`
	Platform    string            `json:"platform"`
}

func main() {
	dir := flag.String("dir", "", "state directory: certificates, tokens, etcd's data, kubeconfigs, endpoints.json")
	var manifests stringList
	flag.Var(&manifests, "apply", "a YAML manifest to apply once the server is ready (repeatable, in order)")
	watchStdin := flag.Bool("stdin", false, "stop when standard input reaches EOF (the parent went away)")
	readyTimeout := flag.Duration("ready-timeout", 2*time.Minute, "how long to wait for the server to be ready")
	tapFile := flag.String("watch-tap", "", "record into this file, as JSON lines, when each watch event on "+
		"-watch-tap-resource was flushed to its client (watchtap.go); written when the server stops")
	tapResource := flag.String("watch-tap-resource", "virtualmachineinstances", "the resource -watch-tap records")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "realapi: -dir is required")
		os.Exit(2)
	}
	var tap *WatchTap
	if *tapFile != "" {
		// Written at the end; made now so that a path that cannot be written fails before the server starts.
		if err := os.WriteFile(*tapFile, nil, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "realapi: -watch-tap: %v\n", err)
			os.Exit(1)
		}
		tap = newWatchTap(*tapFile, *tapResource)
	}
	err := run(*dir, manifests, flag.Args(), *watchStdin, *readyTimeout, tap)
	if tap != nil {
		if closeErr := tap.Close(); err == nil && closeErr != nil {
			err = fmt.Errorf("-watch-tap: %w", closeErr)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "realapi: %v\n", err)
		os.Exit(1)
	}
}

func run(dir string, manifests, apiserverFlags []string, watchStdin bool, readyTimeout time.Duration,
	tap *WatchTap) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop()
		}()
	}

	pki, err := makePKI(filepath.Join(dir, "pki"))
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	users, err := makeUsers(filepath.Join(dir, "pki"))
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}

	watches := newWatches(tap)
	etcd, err := startEtcd(filepath.Join(dir, "etcd"))
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer etcd.Close()

	server, err := startAPIServer(ctx, apiserverConfig{
		etcdURL:   etcd.URL,
		pki:       pki,
		tokenFile: users.TokenFile,
		flags:     apiserverFlags,
		admin:     func(url string) *rest.Config { return users.config(url, pki.CAFile, adminUser) },
		watches:   watches,
	})
	if err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	// However run returns from here on, the apiserver is stopped and waited for before etcd closes.
	defer func() {
		stop()
		_ = server.wait()
	}()
	admin := users.config(server.URL, pki.CAFile, adminUser)
	readyCtx, cancelReady := context.WithTimeout(ctx, readyTimeout)
	err = server.waitReady(readyCtx, admin)
	cancelReady()
	if err != nil {
		return err
	}
	if err := startNamespaceController(ctx, admin); err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	for _, manifest := range manifests {
		if err := applyManifest(ctx, admin, manifest); err != nil {
			return fmt.Errorf("-apply %s: %w", manifest, err)
		}
	}

	control, err := serveControl(etcd, watches)
	if err != nil {
		return fmt.Errorf("control endpoint: %w", err)
	}
	defer control.Close()

	started := Started{
		Kube:        server.URL,
		CAFile:      pki.CAFile,
		Kubeconfigs: map[string]string{},
		Users:       map[string]string{},
		Etcd:        etcd.URL,
		Control:     control.URL,
		Version:     server.Version,
		Pid:         os.Getpid(),
		Platform:    "kube-apiserver",
	}
	for _, u := range users.All {
		path := filepath.Join(dir, "kubeconfig-"+u.Short)
		if err := writeKubeconfig(path, server.URL, pki.CAFile, u); err != nil {
			return err
		}
		started.Kubeconfigs[u.Short] = path
		started.Users[u.Short] = u.Name
	}
	started.Kubeconfig = started.Kubeconfigs[adminUser]
	if err := copyFile(pki.CAFile, filepath.Join(dir, "ca.pem")); err != nil {
		return err
	}
	line, _ := json.Marshal(started)
	endpoints := filepath.Join(dir, "endpoints.json")
	if err := os.WriteFile(endpoints+".tmp", append(line, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Rename(endpoints+".tmp", endpoints); err != nil {
		return err
	}
	fmt.Println(string(line))

	<-ctx.Done()
	_ = os.Remove(endpoints)
	return server.wait()
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}
