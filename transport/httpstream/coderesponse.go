package httpstream

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/heraldhq/herald/internal/optionerr"
)

// A unidirectional stream whose connect is refused can answer with an HTTP
// status instead of a stream that carries a disconnect: Centrifugo's
// uni_http_stream and uni_sse connect_code_to_http_response (v6.9.1
// internal/unisse/handler.go, internal/tools/code_translate.go). The
// stream then holds its 200 back until the connect succeeds.

// UniOptions are the options of a unidirectional stream endpoint, also the
// file format's.
type UniOptions struct {
	ConnectCodeToHTTPResponse CodeToHTTPResponse `yaml:"connect_code_to_http_response"`
}

// CodeToHTTPResponse maps connect error codes to HTTP responses.
type CodeToHTTPResponse struct {
	Enabled    bool                          `yaml:"enabled" doc:"answer a refused connect with an HTTP response instead of a stream that carries the disconnect: the response of 'transforms' for the error's code, else '500 Internal Server Error', as Centrifugo does. The stream's '200' then waits for the connect to succeed"`
	Transforms []CodeToHTTPResponseTransform `yaml:"transforms" doc:"a list of '{code: ERROR_CODE, to: {status_code: HTTP_STATUS, body: TEXT}}'; an empty body is the error's message"`
}

// CodeToHTTPResponseTransform maps one connect error code (or disconnect
// code) to an HTTP response.
type CodeToHTTPResponseTransform struct {
	Code uint32         `yaml:"code" doc:"the connect error code (e.g. 103, permission denied) or disconnect code"`
	To   HTTPResponseTo `yaml:"to" doc:"the response"`
}

// HTTPResponseTo is an HTTP status and body.
type HTTPResponseTo struct {
	StatusCode int    `yaml:"status_code" doc:"the HTTP status, e.g. 403"`
	Body       string `yaml:"body" doc:"the response body; empty: the error's message"`
}

// Validate reports transforms without a code or status, as Centrifugo's
// validation does, each an *optionerr.Error naming the field.
func (o UniOptions) Validate() error {
	var errs []error
	for i, t := range o.ConnectCodeToHTTPResponse.Transforms {
		field := fmt.Sprintf("ConnectCodeToHTTPResponse.Transforms[%d]", i)
		switch {
		case t.Code == 0:
			errs = append(errs, &optionerr.Error{Field: field + ".Code", Message: "want the connect error code to match"})
		case t.To.StatusCode < 100 || t.To.StatusCode > 599:
			errs = append(errs, &optionerr.Error{Field: field + ".To.StatusCode", Message: fmt.Sprintf("%d: want an HTTP status", t.To.StatusCode)})
		}
	}
	return errors.Join(errs...)
}

// response is the HTTP response for a refused connect with code and
// message.
func (c CodeToHTTPResponse) response(code uint32, message string) (int, string) {
	if code > 0 {
		for _, t := range c.Transforms {
			if t.Code != code {
				continue
			}
			body := t.To.Body
			if body == "" {
				body = message
			}
			return t.To.StatusCode, body
		}
	}
	return http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError)
}

// ConnectRefused answers the refused connect of a stream that holds its
// status back (hub.ConnectRefusalWriter); a stream already under way
// carries the disconnect as usual.
func (s *stream) ConnectRefused(code uint32, message string) {
	if !s.lockWrite() {
		return
	}
	// wmu and mu are held.
	if s.codes == nil {
		s.mu.Unlock()
		s.wmu.Unlock()
		return
	}
	status, body := s.codes.response(code, message)
	h := s.w.Header()
	for _, k := range []string{"Content-Type", "Cache-Control", "Pragma", "Expires", "X-Accel-Buffering"} {
		h.Del(k)
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	s.codes = nil
	s.ended = true
	s.mu.Unlock()
	s.w.WriteHeader(status)
	if err := s.writeLocked([]byte(body)); err != nil {
		s.log.Debug("httpstream: connect refusal not sent", "remote", s.remote, "status", status, "error", err)
	}
	s.wmu.Unlock()
	s.finish()
}
