// vcsim: an independent vCenter for the test suite. It starts govmomi's simulator (the `simulator` package
// of govmomi, the release tests/support/vcsim/go.mod pins) with a vCenter inventory, prints one line of JSON
// on stdout (URL, credentials, CA file, pid, inventory names and ids), serves until stdin reaches EOF or
// SIGTERM/SIGINT arrives, then closes the server, removes its files and exits 0.
//
// Built by tests/support/vcsim/CMakeLists.txt from the modules go.sum pins. Everything printed on stdout is
// that one line; the simulator's own log goes to -log.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
)

// object is an inventory object as the tests address it: its name and its managed object id.
type object struct {
	Name string `json:"name"`
	Moid string `json:"moid"`
}

type started struct {
	URL          string   `json:"url"`
	Username     string   `json:"username"`
	Password     string   `json:"password"`
	CAFile       string   `json:"caFile"`
	Pid          int      `json:"pid"`
	APIVersion   string   `json:"apiVersion"`
	Datacenter   object   `json:"datacenter"`
	Clusters     []object `json:"clusters"`
	Hosts        []object `json:"hosts"`
	Datastore    object   `json:"datastore"`
	ResourcePool object   `json:"resourcePool"`
	VMFolder     object   `json:"vmFolder"`
	TemplateVM   object   `json:"templateVm"`
	VMs          []object `json:"vms"`
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	clusters := flag.Int("cluster", 1, "clusters in the datacenter (0: standalone hosts only)")
	hosts := flag.Int("hosts", 3, "hosts per cluster, or standalone hosts when -cluster 0")
	vms := flag.Int("vms", 2, "VMs created per cluster (in its root pool), or per standalone host with -cluster 0")
	datastores := flag.Int("ds", 1, "datastores (each mounted on every host)")
	autostart := flag.Bool("autostart", false, "power on the created VMs")
	useTLS := flag.Bool("tls", true, "serve HTTPS with a fresh self-signed certificate written to caFile")
	username := flag.String("username", "administrator@vsphere.local", "the only user name Login accepts")
	password := flag.String("password", "", "the only password Login accepts (empty: a random one)")
	dir := flag.String("dir", "", "directory for caFile (empty: a new temporary directory, removed at exit)")
	delay := flag.Int("delay", 0, "milliseconds added to every SOAP method call")
	methodDelay := flag.String("method-delay", "", "milliseconds added to named methods' calls, e.g. CreateFilter=500,Logout=10")
	logFile := flag.String("log", "", "file for the simulator's log (empty: discarded)")
	trace := flag.Bool("trace", false, "write every SOAP request and response to the -log file (needs -log)")
	watchStdin := flag.Bool("stdin", true, "exit when stdin reaches EOF")
	flag.Parse()

	if err := run(config{*listen, *clusters, *hosts, *vms, *datastores, *autostart, *useTLS, *username,
		*password, *dir, *delay, *methodDelay, *logFile, *trace, *watchStdin}); err != nil {
		fmt.Fprintf(os.Stderr, "vcsim: %v\n", err)
		os.Exit(1)
	}
}

type config struct {
	listen                          string
	clusters, hosts, vms, datastore int
	autostart, tls                  bool
	username, password, dir         string
	delay                           int
	methodDelay                     string
	logFile                         string
	trace, watchStdin               bool
}

func run(c config) error {
	if c.clusters < 0 || c.hosts < 1 || c.vms < 1 || c.datastore < 1 {
		return fmt.Errorf("need -cluster >= 0, -hosts >= 1, -vms >= 1, -ds >= 1")
	}
	log.SetOutput(io.Discard)
	if c.logFile != "" {
		f, err := os.OpenFile(c.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		log.SetOutput(f)
		simulator.TraceFile = f
	}
	simulator.Trace = c.trace && c.logFile != ""
	if c.password == "" {
		c.password = randomHex(12)
	}

	model := simulator.VPX()
	model.Autostart = c.autostart
	model.Datacenter = 1
	model.Datastore = c.datastore
	model.Machine = c.vms
	model.Cluster = c.clusters
	if c.clusters > 0 {
		model.Host = 0
		model.ClusterHost = c.hosts
	} else {
		model.Host = c.hosts
		model.ClusterHost = 0
	}
	model.DelayConfig.Delay = c.delay
	methodDelays, err := parseMethodDelays(c.methodDelay)
	if err != nil {
		return err
	}
	model.DelayConfig.MethodDelay = methodDelays
	if err := model.Create(); err != nil {
		return fmt.Errorf("creating the inventory: %w", err)
	}
	defer model.Remove() // the datastores' temporary directories

	ownDir := c.dir == ""
	if ownDir {
		d, err := os.MkdirTemp("", "bootstorm-vcsim-")
		if err != nil {
			return err
		}
		c.dir = d
		defer os.RemoveAll(d)
	}

	// A fixed user: with Service.Listen.User other than simulator.DefaultLogin, SessionManager.Login accepts
	// exactly this name and password and answers InvalidLogin to anything else.
	model.Service.Listen = &url.URL{Host: c.listen, User: url.UserPassword(c.username, c.password)}
	caFile := ""
	if c.tls {
		cert, certPEM, err := selfSigned(c.listen)
		if err != nil {
			return err
		}
		caFile = filepath.Join(c.dir, "vcsim-ca.pem")
		if err := os.WriteFile(caFile, certPEM, 0o644); err != nil {
			return err
		}
		if !ownDir {
			defer os.Remove(caFile)
		}
		model.Service.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}

	server, err := newServer(model)
	if err != nil {
		return err
	}
	u := *server.URL
	u.User = nil // the URL the simulator keeps carries the credentials: print them apart

	registry := model.Map()
	out := started{
		URL:        u.String(),
		Username:   c.username,
		Password:   c.password,
		CAFile:     caFile,
		Pid:        os.Getpid(),
		APIVersion: model.ServiceContent.About.ApiVersion,
		Clusters:   objects(registry, "ClusterComputeResource"),
		Hosts:      objects(registry, "HostSystem"),
		VMs:        objects(registry, "VirtualMachine"),
	}
	out.Datacenter = first(objects(registry, "Datacenter"))
	out.Datastore = first(objects(registry, "Datastore"))
	for _, f := range registry.All("Folder") {
		if f.Entity().Name == "vm" {
			out.VMFolder = object{f.Entity().Name, f.Reference().Value}
		}
	}
	out.TemplateVM = first(out.VMs) // the first created VM: DC0_C0_RP0_VM0 (or DC0_H0_VM0 without clusters)
	// The template's pool (the first cluster's root pool "Resources"): where the clones go.
	for _, e := range registry.All("VirtualMachine") {
		if e.Reference().Value == out.TemplateVM.Moid {
			if ref := e.(*simulator.VirtualMachine).ResourcePool; ref != nil {
				if pool, ok := registry.Get(*ref).(mo.Entity); ok {
					out.ResourcePool = object{entityName(pool), ref.Value}
				}
			}
		}
	}
	line, err := json.Marshal(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "%s\n", line)

	stop := make(chan string, 2)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() { stop <- (<-signals).String() }()
	if c.watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop <- "stdin EOF"
		}()
	}
	reason := <-stop
	log.Printf("vcsim: stopping (%s)", reason)

	// Server.Close waits for every request in flight; a WaitForUpdatesEx without maxWaitSeconds never ends
	// by itself, so the wait is bounded.
	closed := make(chan struct{})
	go func() {
		server.CloseClientConnections()
		server.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(time.Second):
		log.Printf("vcsim: requests still in flight after 1 s, exiting anyway")
	}
	return nil
}

// newServer starts the simulator's HTTP(S) server; it panics when it cannot listen, which becomes an error
// here so that the deferred clean-up still runs.
func newServer(model *simulator.Model) (server *simulator.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("starting the server: %v", r)
		}
	}()
	return model.Service.NewServer(), nil
}

// objects lists the entities of one managed object type, sorted by name (the registry is a map).
func objects(registry *simulator.Registry, kind string) []object {
	var list []object
	for _, e := range registry.All(kind) {
		list = append(list, object{entityName(e), e.Reference().Value})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list
}

func entityName(e mo.Entity) string { return e.Entity().Name }

func first(list []object) object {
	if len(list) == 0 {
		return object{}
	}
	return list[0]
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// selfSigned makes an ECDSA P-256 certificate for 127.0.0.1, ::1, localhost and the listen host, valid for
// a day, that is its own CA: the PEM written to caFile is the trust anchor a verifying client loads.
// (The simulator's built-in certificate is RSA-1024, which OpenSSL at Debian's security level 2 refuses.)
func selfSigned(listen string) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	template := x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"bootstorm test vcsim"}, CommonName: "127.0.0.1"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		DNSNames:              []string{"localhost"},
	}
	if host, _, err := net.SplitHostPort(listen); err == nil && host != "" {
		if ip := net.ParseIP(host); ip != nil {
			if !ip.IsUnspecified() && !ip.Equal(net.ParseIP("127.0.0.1")) && !ip.Equal(net.ParseIP("::1")) {
				template.IPAddresses = append(template.IPAddresses, ip)
			}
		} else if host != "localhost" {
			template.DNSNames = append(template.DNSNames, host)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, &template, &template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	return cert, certPEM, err
}

// parseMethodDelays reads "Method=ms,Method=ms" (-method-delay); the delay comes before the method runs.
func parseMethodDelays(spec string) (map[string]int, error) {
	delays := map[string]int{}
	if spec == "" {
		return delays, nil
	}
	for _, item := range strings.Split(spec, ",") {
		parts := strings.SplitN(item, "=", 2)
		ms, err := strconv.Atoi(strings.TrimSpace(parts[len(parts)-1]))
		if len(parts) != 2 || parts[0] == "" || err != nil || ms < 0 {
			return nil, fmt.Errorf("-method-delay %q: each entry is Method=milliseconds", item)
		}
		delays[strings.TrimSpace(parts[0])] = ms
	}
	return delays, nil
}
