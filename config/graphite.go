package config

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// GraphiteConfig is Centrifugo's graphite section (v6.9.1
// internal/configtypes/types.go, Graphite): the node's metrics pushed to a
// Graphite server over its plaintext protocol, besides the Prometheus
// endpoint. Its keys and defaults are Centrifugo's, except prefix, whose
// default names Herald as its metrics do.
type GraphiteConfig struct {
	Enabled  bool          `yaml:"enabled" doc:"push the node's metrics (those of 'prometheus.handler_prefix') to a Graphite server over its plaintext protocol every 'interval', as Centrifugo's 'graphite.enabled'. Each sample is one line, its name the Prometheus name with its labels appended as path components (or as Graphite tags with 'tags'), so Graphite dashboards made for Centrifugo's names need new queries"`
	Host     string        `yaml:"host" default:"localhost" doc:"the Graphite server's host"`
	Port     int           `yaml:"port" default:"2003" doc:"the Graphite server's plaintext port"`
	Prefix   string        `yaml:"prefix" default:"herald" doc:"the first path component of every metric name; the node's name ('name', or the host name; '.' and characters outside ASCII become '_') follows it, as in Centrifugo"`
	Interval time.Duration `yaml:"interval" default:"10s" doc:"how often the metrics are pushed"`
	Tags     bool          `yaml:"tags" doc:"write labels as Graphite tags ('name;label=value') instead of path components"`
}

// Address is host:port of the Graphite server.
func (g GraphiteConfig) Address() string {
	return net.JoinHostPort(g.Host, strconv.Itoa(g.Port))
}

// graphiteProblems checks the graphite section for Validate.
func (c Config) graphiteProblems() Problems {
	g := c.Graphite
	if !g.Enabled {
		return nil
	}
	var ps Problems
	if g.Host == "" {
		ps = append(ps, Problem{Key: "graphite.host", Message: "must be set with graphite.enabled"})
	}
	if g.Port <= 0 || g.Port > 65535 {
		ps = append(ps, Problem{Key: "graphite.port", Message: fmt.Sprintf("%d: want a port number", g.Port)})
	}
	if g.Interval <= 0 {
		ps = append(ps, Problem{Key: "graphite.interval", Message: fmt.Sprintf("%s: must be positive", g.Interval)})
	}
	return ps
}
