package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodelease "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
)

const (
	fakeNodeName = "kwok-node-0"
	stateFile    = "cluster.json"
)

// kcmControllers are the controllers tier b needs: workloads roll out, Jobs
// complete, garbage collection and namespace deletion work, default service
// accounts and their tokens exist, aggregated ClusterRoles (admin/edit/view) fill.
var kcmControllers = []string{
	"deployment-controller", "replicaset-controller", "statefulset-controller", "daemonset-controller",
	"job-controller", "cronjob-controller", "ttl-after-finished-controller", "garbage-collector-controller",
	"namespace-controller", "serviceaccount-controller", "serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller", "endpointslice-controller", "endpoints-controller",
	"pod-garbage-collector-controller", "disruption-controller", "clusterrole-aggregation-controller",
	"resourcequota-controller",
}

// state is written to DIR/cluster.json so that `down` finds what `up` started.
type state struct {
	Pid        int              `json:"pid"`
	Tier       string           `json:"tier"`
	Features   string           `json:"featureGates,omitempty"`
	Kubeconfig string           `json:"kubeconfig"`
	Server     string           `json:"server"`
	Components []componentState `json:"components"`
}

type componentState struct {
	Name string `json:"name"`
	Pid  int    `json:"pid"`
	Log  string `json:"log"`
}

type component struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan error
}

type cluster struct {
	dir        string
	tier       string
	features   string // --feature-gates as the components take it, or ""
	authConfig string // --authentication-config for kube-apiserver (absolute), or ""
	publish    bool   // the service-account issuer is this cluster's own address, its discovery open to anyone
	self       string
	components []*component
	exited     chan *component
}

func runUp(args []string) int {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	tier := fs.String("tier", "a", "a = etcd + kube-apiserver; b = also controller-manager, scheduler and kwok (a fake kubelet with one Ready node)")
	dir := fs.String("dir", "", "directory for certificates, data, logs and the kubeconfig (made if missing; required)")
	authConfig := fs.String("authentication-config", "", "an AuthenticationConfiguration file for kube-apiserver's --authentication-config (structured authentication: e.g. a JWT authenticator that trusts another cluster's service-account issuer)")
	publish := fs.Bool("publish-issuer", false, "make the service-account issuer this cluster's own https address and let anyone read its discovery document and keys (/.well-known/openid-configuration, /openid/v1/jwks), so that another cluster can trust its tokens")
	gates := fs.String("feature-gates", "", "Kubernetes feature gates for kube-apiserver (and, in tier b, controller-manager and scheduler): comma-separated Name=true|false, e.g. HPAScaleToZero=true")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "testcluster up: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	features, err := parseFeatureGates(*gates)
	if err == nil {
		err = knownFeatureGates(features)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster up: %v\n", err)
		return 2
	}
	if *tier != "a" && *tier != "b" {
		fmt.Fprintf(os.Stderr, "testcluster up: --tier must be a or b, got %q\n", *tier)
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "testcluster up: --dir is required")
		return 2
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster up: %v\n", err)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster up: finding own binary: %v\n", err)
		return 1
	}
	c := &cluster{dir: abs, tier: *tier, features: features, self: self, exited: make(chan *component, 8), publish: *publish}
	if *authConfig != "" {
		if c.authConfig, err = filepath.Abs(*authConfig); err == nil {
			_, err = os.Stat(c.authConfig)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "testcluster up: --authentication-config: %v\n", err)
			return 2
		}
	}

	// A hangup stops the cluster, unless it was started to survive one (nohup): Go would stop
	// ignoring SIGHUP once it is asked for, and a step of a workflow under act (on a pty) that starts
	// `nohup testcluster up &` hangs up when it ends.
	stopOn := []os.Signal{syscall.SIGTERM, syscall.SIGINT}
	if !signal.Ignored(syscall.SIGHUP) {
		stopOn = append(stopOn, syscall.SIGHUP)
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopOn...)
	defer stop()
	start := time.Now()
	kubeconfig, err := c.start(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster up: %v\n", err)
		c.stopAll()
		return 1
	}
	gatesNote := ""
	if c.features != "" {
		gatesNote = ", feature gates " + c.features
	}
	fmt.Fprintf(os.Stderr, "testcluster: tier %s ready in %.1fs (logs in %s%s)\n", c.tier, time.Since(start).Seconds(), filepath.Join(c.dir, "logs"), gatesNote)
	fmt.Printf("KUBECONFIG=%s\n", kubeconfig)

	select {
	case <-ctx.Done():
		c.stopAll()
		_ = os.Remove(filepath.Join(c.dir, stateFile))
		return 0
	case comp := <-c.exited:
		fmt.Fprintf(os.Stderr, "testcluster: %s exited unexpectedly; stopping the cluster\n%s", comp.name, tail(comp.log, 20))
		c.stopAll()
		_ = os.Remove(filepath.Join(c.dir, stateFile))
		return 1
	}
}

func (c *cluster) start(ctx context.Context) (string, error) {
	for _, sub := range []string{"", "logs", "etcd"} {
		if err := os.MkdirAll(filepath.Join(c.dir, sub), 0o700); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(filepath.Join(c.dir, stateFile)); err == nil {
		return "", fmt.Errorf("%s exists: a cluster may already run from %s (run `testcluster down --dir %s` first)", stateFile, c.dir, c.dir)
	}
	// A fresh data dir each time: a cluster is for one test run.
	if err := os.RemoveAll(filepath.Join(c.dir, "etcd")); err != nil {
		return "", err
	}
	p, err := newPKI(c.dir)
	if err != nil {
		return "", fmt.Errorf("making certificates: %w", err)
	}
	for _, leaf := range []struct {
		name, cn string
		groups   []string
		server   bool
	}{
		{"apiserver", "kube-apiserver", nil, true},
		{"admin", "admin", []string{"system:masters"}, false},
		{"limited", "limited", nil, false},
		{"kwok", "kwok", nil, true},
	} {
		if err := p.issue(leaf.name, leaf.cn, leaf.groups, leaf.server); err != nil {
			return "", fmt.Errorf("issuing %s certificate: %w", leaf.name, err)
		}
	}
	if err := p.serviceAccountKeys(); err != nil {
		return "", fmt.Errorf("making service account keys: %w", err)
	}
	ports, err := freePorts(5)
	if err != nil {
		return "", err
	}
	etcdClient, etcdPeer, apiPort, kwokServer, kwokNode := ports[0], ports[1], ports[2], ports[3], ports[4]
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)
	server := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	issuer := "https://kubernetes.default.svc.cluster.local"
	if c.publish {
		// The discovery document ({issuer}/.well-known/openid-configuration) and the keys it points
		// at ({issuer}/openid/v1/jwks) are then served where the issuer says, reachable from this host.
		issuer = server
	}

	if err := c.spawn("etcd",
		"--name=testcluster", "--data-dir="+filepath.Join(c.dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=testcluster="+peerURL, "--unsafe-no-fsync=true", "--log-level=warn",
	); err != nil {
		return "", err
	}
	if err := c.waitHTTP(ctx, "etcd", etcdURL+"/health", nil, 60*time.Second); err != nil {
		return "", err
	}

	apiArgs := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", apiPort), "--advertise-address=127.0.0.1",
		"--cert-dir=" + filepath.Join(c.dir, "apiserver-certs"),
		"--tls-cert-file=" + p.path("apiserver.crt"), "--tls-private-key-file=" + p.path("apiserver.key"),
		"--client-ca-file=" + p.path("ca.crt"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=" + issuer,
		"--service-account-key-file=" + p.path("sa.pub"), "--service-account-signing-key-file=" + p.path("sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24", "--allow-privileged=true",
		"--enable-priority-and-fairness=false", "--profiling=false", "--endpoint-reconciler-type=none",
	}
	if c.tier == "a" {
		// No controller-manager makes the default ServiceAccount in tier a.
		apiArgs = append(apiArgs, "--disable-admission-plugins=ServiceAccount")
	} else {
		// This plugin taints new nodes not-ready until the node-lifecycle controller clears
		// it; that controller is not run, so the fake node would stay unschedulable.
		apiArgs = append(apiArgs, "--disable-admission-plugins=TaintNodesByCondition")
	}
	if c.authConfig != "" {
		apiArgs = append(apiArgs, "--authentication-config="+c.authConfig)
	}
	if err := c.spawn("apiserver", withFeatureGates(apiArgs, c.features)...); err != nil {
		return "", err
	}
	tlsConf, err := adminTLS(p)
	if err != nil {
		return "", err
	}
	if err := c.waitHTTP(ctx, "apiserver", server+"/readyz", tlsConf, 120*time.Second); err != nil {
		return "", err
	}

	kubeconfig := filepath.Join(c.dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, server, p, "admin", "limited"); err != nil {
		return "", err
	}
	components := filepath.Join(c.dir, "components.kubeconfig")
	if err := writeKubeconfig(components, server, p, "admin"); err != nil {
		return "", err
	}

	if c.publish {
		if err := publishIssuer(ctx, components); err != nil {
			return "", err
		}
	}
	if c.tier == "b" {
		if err := c.startTierB(ctx, p, components, kwokServer, kwokNode); err != nil {
			return "", err
		}
	}
	if err := c.writeState(kubeconfig, server); err != nil {
		return "", err
	}
	return kubeconfig, nil
}

func (c *cluster) startTierB(ctx context.Context, p *pki, kubeconfig string, kwokServer, kwokNode int) error {
	if err := c.spawn("controller-manager", withFeatureGates([]string{
		"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0",
		"--controllers=" + strings.Join(kcmControllers, ","),
		"--service-account-private-key-file=" + p.path("sa.key"), "--root-ca-file=" + p.path("ca.crt"),
		"--use-service-account-credentials=false", "--concurrent-gc-syncs=5",
	}, c.features)...); err != nil {
		return err
	}
	if err := c.spawn("scheduler", withFeatureGates([]string{
		"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0",
	}, c.features)...); err != nil {
		return err
	}
	stages := filepath.Join(c.dir, "kwok-stages.yaml")
	docs := []string{nodefast.DefaultNodeInit, nodelease.DefaultNodeHeartbeatWithLease,
		withoutFailingImages(podfast.DefaultPodReady), withoutFailingImages(podfast.DefaultPodComplete),
		podfast.DefaultPodDelete, podImagePullFailure}
	if err := os.WriteFile(stages, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
		return err
	}
	if err := c.spawn("kwok",
		"--kubeconfig="+kubeconfig, "--config="+stages,
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-ip=127.0.0.1", fmt.Sprintf("--node-port=%d", kwokNode),
		fmt.Sprintf("--server-address=127.0.0.1:%d", kwokServer),
		"--tls-cert-file="+p.path("kwok.crt"), "--tls-private-key-file="+p.path("kwok.key"),
		"--node-lease-duration-seconds=40",
	); err != nil {
		return err
	}

	client, err := clientFor(kubeconfig)
	if err != nil {
		return err
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        fakeNodeName,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels:      map[string]string{"type": "kwok", "kubernetes.io/hostname": fakeNodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
		},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("256Gi"), "pods": resource.MustParse("1000")},
			Capacity:    corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("256Gi"), "pods": resource.MustParse("1000")},
		},
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating node %s: %w", fakeNodeName, err)
	}
	err = c.poll(ctx, "node "+fakeNodeName+" Ready", 90*time.Second, func() (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, fakeNodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	return c.poll(ctx, "ServiceAccount default/default", 90*time.Second, func() (bool, error) {
		_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// clientFor is a client of the cluster the kubeconfig file names (the admin one `up` writes).
func clientFor(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// publishIssuer lets unauthenticated clients read the service-account issuer's discovery document
// and keys, as a cluster whose tokens others trust does (the bootstrap role is only bound to
// service accounts).
func publishIssuer(ctx context.Context, kubeconfig string) error {
	client, err := clientFor(kubeconfig)
	if err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "testcluster:service-account-issuer-discovery:unauthenticated"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:service-account-issuer-discovery"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "Group", Name: "system:unauthenticated"}},
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("opening the service-account issuer discovery to anyone: %w", err)
	}
	return nil
}

// spawn starts this binary as one component, its output in DIR/logs/NAME.log.
// Pdeathsig ends the component if `up` dies without tearing down.
func (c *cluster) spawn(name string, args ...string) error {
	logPath := filepath.Join(c.dir, "logs", name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.self, append([]string{name}, args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	comp := &component{name: name, cmd: cmd, log: logPath, done: make(chan error, 1)}
	c.components = append(c.components, comp)
	go func() {
		err := cmd.Wait()
		logFile.Close()
		comp.done <- err
		select {
		case c.exited <- comp:
		default:
		}
	}()
	return nil
}

// stopAll ends the components in reverse start order: SIGTERM, then SIGKILL after 15s.
func (c *cluster) stopAll() {
	for i := len(c.components) - 1; i >= 0; i-- {
		comp := c.components[i]
		if comp.cmd.ProcessState != nil {
			continue
		}
		_ = comp.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-comp.done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-comp.cmd.Process.Pid, syscall.SIGKILL)
			<-comp.done
		}
	}
}

func (c *cluster) waitHTTP(ctx context.Context, name, url string, tlsConf *tls.Config, timeout time.Duration) error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConf}}
	return c.poll(ctx, name+" "+url, timeout, func() (bool, error) {
		resp, err := client.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// poll checks cond every 200ms until it holds, a component dies, the timeout passes or a signal comes.
func (c *cluster) poll(ctx context.Context, what string, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case comp := <-c.exited:
			return fmt.Errorf("%s exited while waiting for %s:\n%s", comp.name, what, tail(comp.log, 20))
		case <-ctx.Done():
			return errors.New("interrupted")
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			last := c.components[len(c.components)-1]
			return fmt.Errorf("timed out after %s waiting for %s; last lines of %s:\n%s", timeout, what, last.log, tail(last.log, 20))
		}
	}
}

func (c *cluster) writeState(kubeconfig, server string) error {
	s := state{Pid: os.Getpid(), Tier: c.tier, Features: c.features, Kubeconfig: kubeconfig, Server: server}
	for _, comp := range c.components {
		s.Components = append(s.Components, componentState{Name: comp.name, Pid: comp.cmd.Process.Pid, Log: comp.log})
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.dir, stateFile), b, 0o600)
}

func adminTLS(p *pki) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(p.path("admin.crt"), p.path("admin.key"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// writeKubeconfig writes one cluster and a context per user; the first user's context is current.
func writeKubeconfig(path, server string, p *pki, users ...string) error {
	b64 := func(name string) (string, error) {
		data, err := os.ReadFile(p.path(name))
		return base64.StdEncoding.EncodeToString(data), err
	}
	ca, err := b64("ca.crt")
	if err != nil {
		return err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "apiVersion: v1\nkind: Config\ncurrent-context: %s\nclusters:\n- name: testcluster\n  cluster:\n    server: %s\n    certificate-authority-data: %s\ncontexts:\n", users[0], server, ca)
	for _, u := range users {
		fmt.Fprintf(&sb, "- name: %s\n  context:\n    cluster: testcluster\n    user: %s\n", u, u)
	}
	sb.WriteString("users:\n")
	for _, u := range users {
		crt, err := b64(u + ".crt")
		if err != nil {
			return err
		}
		key, err := b64(u + ".key")
		if err != nil {
			return err
		}
		fmt.Fprintf(&sb, "- name: %s\n  user:\n    client-certificate-data: %s\n    client-key-data: %s\n", u, crt, key)
	}
	return os.WriteFile(path, []byte(sb.String()), 0o600)
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tail returns the last n lines of a log file, indented.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	var sb strings.Builder
	for _, l := range lines {
		sb.WriteString("    " + l + "\n")
	}
	return sb.String()
}

// failingImage selects pods with a container whose image lives under FailingImagePrefix; kwok
// never starts them (see podImagePullFailure), so tests can make a rollout fail on purpose.
const failingImage = `.spec.containers.[] | select(.image | startswith("` + FailingImagePrefix + `")) | .image`

// FailingImagePrefix: an image under this registry never pulls on the test cluster's kwok node.
const FailingImagePrefix = "fail.kwok.invalid/"

// withoutFailingImages keeps a stock kwok pod stage away from pods with a failing image.
func withoutFailingImages(stage string) string {
	const anchor = "  selector:\n    matchExpressions:\n"
	if !strings.Contains(stage, anchor) {
		panic("kwok stage layout changed: no selector.matchExpressions")
	}
	return strings.Replace(stage, anchor, anchor+"    - key: '"+failingImage+"'\n      operator: 'DoesNotExist'\n", 1)
}

// podImagePullFailure leaves a pod with a failing image Pending, its containers waiting in
// ImagePullBackOff, as a kubelet does when the registry refuses the image.
var podImagePullFailure = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-image-pull-failure
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Pending'
    - key: '` + failingImage + `'
      operator: 'Exists'
    - key: '.status.containerStatuses'
      operator: 'DoesNotExist'
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: Ready
        reason: ContainersNotReady
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: ContainersReady
        reason: ContainersNotReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        state:
          waiting:
            reason: ImagePullBackOff
            message: {{ printf "Back-off pulling image %q" .image | Quote }}
      {{ end }}
      phase: Pending
      startTime: {{ $now | Quote }}
`
