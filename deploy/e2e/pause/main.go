// Command pause is the pod sandbox's process for make k8s-e2e: it holds
// the pod's namespaces and does nothing until it is told to stop. It is
// built here, static, so that the cluster needs no registry.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}
