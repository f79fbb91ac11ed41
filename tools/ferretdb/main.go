// Command ferretdb-embedded runs FerretDB v1.24.2 (SQLite handler) as ycsb-runner's local test server.
//
// Why not `go install github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.2`? A binary built that way panics
// at start-up ("Invalid build/version/version.txt file content"): the module zip on the Go proxy lacks
// the generated version.txt. FerretDB's embeddable package skips that check, so this small program
// starts the same server through it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on (keep it on loopback)")
	sqliteURL := flag.String("sqlite-url", "file:data/", "SQLite URI of an existing directory")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintln(os.Stderr, "bad -log-level:", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: *sqliteURL,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}
