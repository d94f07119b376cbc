package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
)

// loopbackResolver is where kube-apiserver sends what it proxies to a Service (an aggregated API's backend, an
// admission webhook): every pod of the suite runs on this machine, so a Service's endpoint is 127.0.0.1 at the
// port its targetPort names. A cluster would resolve the Service's EndpointSlices instead; theirs may not hold
// loopback addresses, and no controller here would write them.
type loopbackResolver struct {
	// Ends the Service informer's watch when the server stops: a watch still open on the server would hold
	// its graceful shutdown until the shutdown timeout.
	ctx    context.Context
	admin  func() *rest.Config // the server's own administrator, once the server is up
	once   sync.Once
	lister listersv1.ServiceLister
	err    error
}

func (r *loopbackResolver) services() (listersv1.ServiceLister, error) {
	r.once.Do(func() {
		client, err := kubernetes.NewForConfig(r.admin())
		if err != nil {
			r.err = err
			return
		}
		factory := informers.NewSharedInformerFactory(client, 0)
		r.lister = factory.Core().V1().Services().Lister()
		factory.Start(r.ctx.Done())
		ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
		defer cancel()
		for typ, synced := range factory.WaitForCacheSync(ctx.Done()) {
			if !synced {
				r.err = fmt.Errorf("the Service informer (%v) did not sync", typ)
			}
		}
	})
	return r.lister, r.err
}

// ResolveEndpoint is webhook.ServiceResolver's: https://127.0.0.1:<targetPort of the Service's `port`>.
func (r *loopbackResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	lister, err := r.services()
	if err != nil {
		return nil, err
	}
	svc, err := lister.Services(namespace).Get(name)
	if err != nil {
		return nil, err
	}
	for _, p := range svc.Spec.Ports {
		if p.Port != port {
			continue
		}
		target := p.TargetPort.IntValue()
		if target == 0 {
			target = int(p.Port)
		}
		return &url.URL{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(target))}, nil
	}
	return nil, fmt.Errorf("service %s/%s has no port %d", namespace, name, port)
}
