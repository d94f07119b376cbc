package main

import "k8s.io/apimachinery/pkg/runtime/schema"

func dynamicResource(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}
