package main

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	namespacecontroller "k8s.io/kubernetes/pkg/controller/namespace"
)

// startNamespaceController runs kube-controller-manager's namespace controller in this process until ctx
// ends: a namespace deleted here is emptied and then goes, as on a cluster, instead of staying Terminating
// for ever. What stays Terminating is what a cluster keeps there too: a namespace that still holds an object
// with a finalizer.
func startNamespaceController(ctx context.Context, admin *rest.Config) error {
	config := rest.CopyConfig(admin)
	config.UserAgent = "kube-controller-manager/namespace-controller"
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	metadataClient, err := metadata.NewForConfig(config)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	controller := namespacecontroller.NewNamespaceController(ctx, client, metadataClient,
		client.Discovery().ServerPreferredNamespacedResources, factory.Core().V1().Namespaces(), 5*time.Minute,
		v1.FinalizerKubernetes)
	factory.Start(ctx.Done())
	go controller.Run(ctx, 5)
	return nil
}
