package config

import (
	"errors"
	"reflect"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/transport/websocket"
)

// The http_api and websocket sections are checked by the packages that
// own their values (api.Config.Validate, websocket.Config.Validate), once;
// their errors name Go fields, which fieldProblems turns into keys. The
// conversions below are the only place that maps the sections' fields to
// those packages' fields, so what is checked is what the server runs.

// API is the http_api section as package api takes it, without a Logger.
func (c HTTPAPIConfig) API() api.Config {
	return api.Config{
		Key: c.Key, Insecure: c.Insecure, ErrorMode: c.ErrorMode,
		MaxBodySize: c.MaxBodySize, BodyReadTimeout: c.BodyReadTimeout,
		MaxBatchCommands: c.MaxBatchCommands, MaxBatchResponseSize: c.MaxBatchResponseSize,
		AllowKeyInQuery: c.AllowKeyInQuery,
	}
}

// Transport is the websocket section as the WebSocket transport takes it,
// without CheckOrigin, OriginHint and Logger, which the server sets.
func (c WebSocketConfig) Transport() websocket.Config {
	return websocket.Config{
		MaxMessageSize:     c.MessageSizeLimit,
		WriteTimeout:       c.WriteTimeout,
		ReadTimeout:        c.ReadTimeout,
		Poller:             websocket.Poller(c.Poller),
		Compression:        c.Compression,
		CompressionMinSize: c.CompressionMinSize,
		CompressionLevel:   c.CompressionLevel,
	}
}

// transportProblems translates the WebSocket transport's ConfigErrors into
// problems under key, as hubProblems does for the hub's OptionErrors. The
// transport's fields that the section names differently are mapped first.
func transportProblems(err error, key string) Problems {
	var ps Problems
	t := reflect.TypeOf(WebSocketConfig{})
	for _, e := range joined(err) {
		var ce *websocket.ConfigError
		if !errors.As(e, &ce) {
			ps = append(ps, Problem{Key: key, Message: e.Error()})
			continue
		}
		field := ce.Field
		if field == "MaxMessageSize" {
			field = "MessageSizeLimit"
		}
		ps = append(ps, Problem{Key: join(key, goPathToKey(t, field)), Message: goNamesToKeys(t, ce.Message)})
	}
	return ps
}

// joined lists the errors err joins (err itself when it joins none).
func joined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
