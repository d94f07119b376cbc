package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
)

// The users of the token file, by their short names (the kubeconfig-<short> files).
const (
	adminUser     = "admin"
	bootstormUser = "bootstorm"
)

// User is one line of the apiserver's static token file.
type User struct {
	Short  string
	Name   string
	UID    string
	Groups []string
	Token  string
}

// Users are the token file and who is in it. The administrator is in system:masters (RBAC lets it do
// anything); bootstorm is authenticated as its service account in the bootstorm namespace, so the
// ClusterRoleBinding and RoleBindings of deploy/kubernetes/rbac.yaml apply to it unchanged.
type Users struct {
	TokenFile string
	All       []User
}

func makeUsers(dir string) (Users, error) {
	u := Users{TokenFile: filepath.Join(dir, "tokens.csv")}
	u.All = []User{
		{Short: adminUser, Name: "realapi-admin", UID: "realapi-admin", Groups: []string{"system:masters"}},
		{Short: bootstormUser, Name: "system:serviceaccount:bootstorm:bootstorm", UID: "bootstorm-sa",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:bootstorm"}},
	}
	var lines strings.Builder
	for i := range u.All {
		token := make([]byte, 24)
		if _, err := rand.Read(token); err != nil {
			return u, err
		}
		u.All[i].Token = hex.EncodeToString(token)
		fmt.Fprintf(&lines, "%s,%s,%s,\"%s\"\n", u.All[i].Token, u.All[i].Name, u.All[i].UID,
			strings.Join(u.All[i].Groups, ","))
	}
	return u, os.WriteFile(u.TokenFile, []byte(lines.String()), 0o600)
}

func (u Users) find(short string) User {
	for _, user := range u.All {
		if user.Short == short {
			return user
		}
	}
	panic("no user " + short)
}

// config is a client configuration for one user, verifying the server against the CA.
func (u Users) config(server, caFile, short string) *rest.Config {
	return &rest.Config{
		Host:            server,
		BearerToken:     u.find(short).Token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
		QPS:             200,
		Burst:           400,
	}
}

// writeKubeconfig writes a kubeconfig for one user (mode 0600: it holds the token).
func writeKubeconfig(path, server, caFile string, user User) error {
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: realapi
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: realapi-%s
  context:
    cluster: realapi
    user: %s
current-context: realapi-%s
`, server, caFile, user.Short, user.Token, user.Short, user.Short, user.Short)
	return os.WriteFile(path, []byte(text), 0o600)
}
