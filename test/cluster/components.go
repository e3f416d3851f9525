package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

// k8sVersion is set by the build (-X main.k8sVersion=...).
var k8sVersion = "unknown"

func runEtcd() { etcdmain.Main(os.Args) }

func runAPIServer() int { return cli.Run(apiserver.NewAPIServerCommand()) }

func runControllerManager() int { return cli.Run(controllermanager.NewControllerManagerCommand()) }

func runScheduler() int { return cli.Run(scheduler.NewSchedulerCommand()) }
