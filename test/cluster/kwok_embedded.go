//go:build !nokwok

package main

import (
	"os"

	"github.com/spf13/pflag"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"
)

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
