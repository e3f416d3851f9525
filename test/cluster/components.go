package main

import (
	"os"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"
)

// k8sVersion is set by the build (-X main.k8sVersion=...).
var k8sVersion = "unknown"

func runEtcd() { etcdmain.Main(os.Args) }

func runAPIServer() int { return cli.Run(apiserver.NewAPIServerCommand()) }

func runControllerManager() int { return cli.Run(controllermanager.NewControllerManagerCommand()) }

func runScheduler() int { return cli.Run(scheduler.NewSchedulerCommand()) }

// runKwok starts kwok, the fake kubelet, the way its own main does: global
// logging and --config flags first, then the controller command.
func runKwok() int {
	// The Kubernetes packages linked into this binary register their own flags (a string
	// --version among them) on pflag's global set, which cobra merges into every command;
	// kwok's command wants a clean one.
	pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ExitOnError)
	global := pflag.NewFlagSet("global", pflag.ContinueOnError)
	global.ParseErrorsAllowlist.UnknownFlags = true
	global.Usage = func() {}
	ctx := signals.SetupSignalContext()
	ctx, logger := kwoklog.InitFlags(ctx, global)
	ctx, err := kwokconfig.InitFlags(ctx, global)
	if err != nil {
		logger.Error("kwok: reading --config", "err", err)
		return 1
	}
	command := kwokcmd.NewCommand(ctx)
	command.PersistentFlags().AddFlagSet(global)
	if err := command.ExecuteContext(ctx); err != nil {
		logger.Error("kwok exited", "err", err)
		return 1
	}
	return 0
}
