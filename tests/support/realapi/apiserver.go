package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

type apiserverConfig struct {
	etcdURL   string
	pki       PKI
	tokenFile string
	flags     []string // given after `--`, applied last
	// The administrator's client configuration for the server at `url` (the Service resolver reads Services
	// with it).
	admin func(url string) *rest.Config
	// The clients' open watches (watches.go), with the tap when one is asked for.
	watches *Watches
}

// APIServer is kube-apiserver running in this process.
type APIServer struct {
	URL     string
	Version string
	done    chan error
}

// The flags a cluster's installer would give, in kube-apiserver's own syntax: the caller's flags come after
// them and win.
func baseFlags(c apiserverConfig) []string {
	return []string{
		"--bind-address=127.0.0.1",
		"--etcd-servers=" + c.etcdURL,
		"--tls-cert-file=" + c.pki.ServingCertFile,
		"--tls-private-key-file=" + c.pki.ServingKeyFile,
		"--token-auth-file=" + c.tokenFile,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NamespaceLifecycle,ResourceQuota",
		"--enable-priority-and-fairness=true",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + c.pki.SAKeyFile,
		"--service-account-signing-key-file=" + c.pki.SAKeyFile,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--anonymous-auth=false",
		// The aggregation layer: kube-apiserver proxies an aggregated API (KubeVirt's subresources.kubevirt.io)
		// to its backend with the caller's identity in X-Remote-* headers and the front proxy's client
		// certificate, which the backend checks against extension-apiserver-authentication's
		// requestheader-client-ca-file (kube-system), as a cluster's installer sets it up.
		"--requestheader-client-ca-file=" + c.pki.FrontProxyCAFile,
		"--requestheader-allowed-names=" + frontProxyClient,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + c.pki.ProxyClientCertFile,
		"--proxy-client-key-file=" + c.pki.ProxyClientKeyFile,
		// The only address is loopback, which the "kubernetes" Service's endpoints may not hold; nothing in
		// the suite reaches the apiserver through that Service.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		"--v=0",
	}
}

func startAPIServer(ctx context.Context, c apiserverConfig) (*APIServer, error) {
	s := options.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, set := range s.Flags().FlagSets {
		fs.AddFlagSet(set)
	}
	if err := fs.Parse(append(baseFlags(c), c.flags...)); err != nil {
		return nil, err
	}
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, err
	}
	featureGate := s.GenericServerRunOptions.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	if err := logsapi.ValidateAndApply(s.Logs, featureGate); err != nil {
		return nil, err
	}
	rest.SetDefaultWarningHandler(rest.NoWarnings{})

	// Port 0: the listener is opened here and handed over, so no port is guessed and none can be taken
	// between a probe and the bind.
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.SecureServing.Listener = listener
	s.SecureServing.BindPort = listener.Addr().(*net.TCPAddr).Port
	s.SecureServing.ExternalAddress = net.ParseIP("127.0.0.1")

	url := fmt.Sprintf("https://127.0.0.1:%d", s.SecureServing.BindPort)
	// Set before the server chain is built, which reads it; this process runs one server.
	app.SetServiceResolverForTests(&loopbackResolver{ctx: ctx, admin: func() *rest.Config { return c.admin(url) }})

	completed, err := s.Complete(ctx)
	if err != nil {
		return nil, err
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	featureGate.(featuregate.MutableFeatureGate).AddMetrics()
	config, err := app.NewConfig(completed)
	if err != nil {
		return nil, err
	}
	// The aggregator is the outermost server: its chain (authentication, APF, ...) wraps every request, and
	// its API handler hands the others' requests on (built-in resources, then the CRDs').
	generic := &config.Aggregator.GenericConfig.Config
	build := generic.BuildHandlerChainFunc
	generic.BuildHandlerChainFunc = func(handler http.Handler, gc *genericapiserver.Config) http.Handler {
		return build(c.watches.wrap(handler), gc)
	}
	completedConfig, err := config.Complete()
	if err != nil {
		return nil, err
	}
	chain, err := app.CreateServerChain(completedConfig)
	if err != nil {
		return nil, err
	}
	prepared, err := chain.PrepareRun()
	if err != nil {
		return nil, err
	}
	server := &APIServer{
		URL:     url,
		Version: s.GenericServerRunOptions.ComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent).BinaryVersion().String(),
		done:    make(chan error, 1),
	}
	go func() { server.done <- prepared.Run(ctx) }()
	return server, nil
}

// waitReady waits until /readyz answers ok to the administrator (every post-start hook done: RBAC's
// bootstrap roles, APF's default configuration, the default namespace).
func (a *APIServer) waitReady(ctx context.Context, admin *rest.Config) error {
	client, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-a.done:
			a.done <- err
			return false, fmt.Errorf("stopped before it was ready: %v", err)
		default:
		}
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			last = fmt.Errorf("%v: %s", err, body)
			return false, nil
		}
		_, err = client.CoreV1().Namespaces().Get(ctx, "default", metav1GetOptions)
		last = err
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("not ready: %v (last answer: %v)", err, last)
	}
	return nil
}

// wait returns once the server stopped (after its context was cancelled).
func (a *APIServer) wait() error {
	err := <-a.done
	a.done <- err
	return err
}
