package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

var metav1GetOptions = metav1.GetOptions{}

// applyManifest server-side applies every object of a multi-document YAML file, in order, as the
// administrator. A namespaced object's namespace is created first when missing (rbac.yaml's Roles live in
// openshift-mtv and openshift-monitoring); a CustomResourceDefinition is waited for until Established, so a
// later document may be one of its objects. An object's status goes through its status subresource.
func applyManifest(ctx context.Context, admin *rest.Config, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(admin)
	if err != nil {
		return err
	}
	cached := memory.NewMemCacheClient(disc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)

	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for index := 0; ; index++ {
		var object unstructured.Unstructured
		if err := decoder.Decode(&object.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("document %d: %w", index+1, err)
		}
		if len(object.Object) == 0 {
			continue
		}
		gvk := object.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			cached.Invalidate()
			mapper.Reset()
			if mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
				return fmt.Errorf("document %d (%s %s): %w", index+1, gvk.Kind, object.GetName(), err)
			}
		}
		var resource dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			if object.GetNamespace() == "" {
				object.SetNamespace("default")
			}
			if err := ensureNamespace(ctx, dyn, object.GetNamespace()); err != nil {
				return err
			}
			resource = dyn.Resource(mapping.Resource).Namespace(object.GetNamespace())
		}
		body, err := object.MarshalJSON()
		if err != nil {
			return err
		}
		force := true
		if _, err := resource.Patch(ctx, object.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "realapi", Force: &force}); err != nil {
			return fmt.Errorf("document %d (%s %s): %w", index+1, gvk.Kind, object.GetName(), err)
		}
		// The status of a kind with a status subresource is written through it, as the kind's controller
		// would (a Node's Ready condition, a ResourceQuota's usage): the main resource ignores it.
		if _, hasStatus := object.Object["status"]; hasStatus && gvk.Kind != "CustomResourceDefinition" {
			if _, err := resource.Patch(ctx, object.GetName(), types.ApplyPatchType, body,
				metav1.PatchOptions{FieldManager: "realapi", Force: &force}, "status"); err != nil &&
				!apierrors.IsNotFound(err) {
				return fmt.Errorf("document %d (%s %s) status: %w", index+1, gvk.Kind, object.GetName(), err)
			}
		}
		if gvk.Kind == "CustomResourceDefinition" {
			if err := waitEstablished(ctx, dyn, object.GetName()); err != nil {
				return err
			}
			cached.Invalidate()
			mapper.Reset()
		}
	}
}

var namespaces = dynamicResource("", "v1", "namespaces")
var crds = dynamicResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")

func ensureNamespace(ctx context.Context, dyn dynamic.Interface, name string) error {
	if _, err := dyn.Resource(namespaces).Get(ctx, name, metav1.GetOptions{}); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := dyn.Resource(namespaces).Create(ctx, ns, metav1.CreateOptions{}); err != nil &&
		!apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}

func waitEstablished(ctx context.Context, dyn dynamic.Interface, name string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true,
		func(ctx context.Context) (bool, error) {
			crd, err := dyn.Resource(crds).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conditions {
				condition, _ := c.(map[string]any)
				if condition["type"] == "Established" && condition["status"] == "True" {
					return true, nil
				}
				if condition["type"] == "NamesAccepted" && condition["status"] == "False" {
					last = fmt.Sprint(condition["message"])
				}
			}
			return false, nil
		})
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s not established: %v %s", name, err, last)
	}
	return nil
}
