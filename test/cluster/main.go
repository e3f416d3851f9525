// Command testcluster is the project's real Kubernetes test cluster, built from Go modules.
//
// It is a multi-call binary: the first argument picks the component.
//
//	testcluster up --tier a|b --dir DIR [--feature-gates Name=bool,...]
//	               [--publish-issuer] [--authentication-config FILE]
//	                                       start a cluster, print KUBECONFIG=<path>, run until SIGTERM
//	testcluster down --dir DIR             stop the cluster started in DIR
//	testcluster etcd|apiserver|controller-manager|scheduler|kwok [flags]   one component (used by up)
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	sub := os.Args[1]
	// Every component parses os.Args itself; hide the sub-command from it.
	os.Args = append([]string{os.Args[0] + " " + sub}, os.Args[2:]...)
	switch sub {
	case "up":
		os.Exit(runUp(os.Args[1:]))
	case "down":
		os.Exit(runDown(os.Args[1:]))
	case "etcd":
		runEtcd()
	case "apiserver":
		os.Exit(runAPIServer())
	case "controller-manager":
		os.Exit(runControllerManager())
	case "scheduler":
		os.Exit(runScheduler())
	case "kwok":
		os.Exit(runKwok())
	case "version":
		fmt.Println(k8sVersion)
	default:
		usage()
		os.Exit(2)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage: testcluster up --tier a|b --dir DIR [--feature-gates Name=true|false,...]
                       [--publish-issuer] [--authentication-config FILE]
       testcluster down --dir DIR
       testcluster etcd|apiserver|controller-manager|scheduler|kwok [component flags]
       testcluster version`)
}
