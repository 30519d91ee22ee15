// Command stackimage-serve runs stackimage's symbolication service
// (package serve): Sentry symbolicator's API and the project's own
// endpoints over HTTP, until SIGTERM or SIGINT, after which it stops
// accepting, finishes or times out the requests in flight and exits 0.
//
//	stackimage-serve [--listen ADDR] [--symbols DIR] [--config FILE] [--cache DIR]
//	stackimage-serve --version
//
// It is a command of its own so that stackimage, which runs once per
// report, does not load the service's HTTP, S3, metrics and YAML
// dependencies at every start. "stackimage serve ARGS" runs it with the
// same arguments, as git runs its external subcommands: it looks for
// stackimage-serve beside its own executable, then on PATH, and runs it
// only when it is the same build as itself (docs/serve.md), which
// --version prints. Install both with
//
//	go install github.com/stackimage/stackimage/cmd/stackimage@latest
//	go install github.com/stackimage/stackimage/cmd/stackimage-serve@latest
//
// docs/serve.md documents the endpoints, the configuration file and a
// deployment of several instances behind a load balancer.
package main
