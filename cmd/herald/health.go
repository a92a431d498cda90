package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// healthCommand asks a running node whether it is alive (GET /healthz) or
// ready (GET /readyz). It exists for the container image's HEALTHCHECK and
// for exec probes: the image is built FROM scratch, with no shell and no
// curl, so the binary has to be its own health client.
func healthCommand() *cobra.Command {
	var (
		configPath, address string
		ready, useTLS       bool
		timeout             time.Duration
	)
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Check a running node: GET /healthz (or /readyz with --ready); exit status 0 when it answers 200",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("address") {
				// The same file and HERALD_* variables serve reads, so
				// the check follows the node's address wherever it is set.
				cfg, err := loadConfig(configPath)
				if err != nil {
					return err
				}
				address = cfg.Address
				if !cmd.Flags().Changed("tls") {
					useTLS = cfg.TLSEnabled()
				}
			}
			path := "/healthz"
			if ready {
				path = "/readyz"
			}
			url, err := healthURL(address, path, useTLS)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			status, body, err := getStatus(ctx, url, useTLS)
			if err != nil {
				return fmt.Errorf("health: %w", err)
			}
			if status != http.StatusOK {
				return fmt.Errorf("health: GET %s: %d %s", url, status, body)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", url, body)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&configPath, "config", "c", "", "YAML configuration file whose 'address' the node listens on")
	f.StringVar(&address, "address", "", "the node's address (host:port); default: 'address' from --config and HERALD_ADDRESS, else :8000")
	f.BoolVar(&ready, "ready", false, "check /readyz (taking connections, engine reachable) instead of /healthz (process serving)")
	f.BoolVar(&useTLS, "tls", false, "ask over HTTPS (default: when the configuration turns TLS on); the certificate is not verified, since the check asks this machine's own node on loopback, not a name the certificate carries")
	f.DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return cmd
}

// healthURL makes the URL to check from a listen address: a node
// listening on every interface (":8000", "0.0.0.0:8000", "[::]:8000") is
// asked on loopback.
func healthURL(address, path string, useTLS bool) (string, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return "", fmt.Errorf("health: address %q: %w", address, err)
	}
	if port == "" || port == "0" {
		return "", fmt.Errorf("health: address %q: needs a port", address)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	scheme := "http://"
	if useTLS {
		scheme = "https://"
	}
	return scheme + net.JoinHostPort(host, port) + path, nil
}

// getStatus GETs url and returns the status code and the start of the body,
// trimmed, for the message.
func getStatus(ctx context.Context, url string, useTLS bool) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	client := http.DefaultClient
	if useTLS {
		// The probe asks its own node on loopback: what it checks is that
		// the process serves, not who it is, and the certificate names the
		// public host, not 127.0.0.1.
		client = &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // liveness probe of the local node
		}}
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: reading the answer: %w", url, err)
	}
	return resp.StatusCode, strings.TrimSpace(string(body)), nil
}
