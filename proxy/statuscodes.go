package proxy

import (
	"fmt"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/internal/optionerr"
)

// An HTTP backend may answer a call with an HTTP status instead of a
// result; Centrifugo's http.status_to_code_transforms (v6.9.1
// internal/proxy/transform.go, transformHTTPStatusError) turns chosen
// statuses into the error or disconnect the client gets, as if the
// backend had answered them. Other statuses stay failures (error 100).

// StatusTransform maps one HTTP status of the backend to a client error
// or disconnect.
type StatusTransform struct {
	StatusCode   int                       `yaml:"status_code" doc:"the HTTP status the backend answers, e.g. 403"`
	ToError      StatusToError             `yaml:"to_error" doc:"the error the client gets (when 'code' is set)"`
	ToDisconnect hub.DisconnectTransformTo `yaml:"to_disconnect" doc:"else the disconnect the client gets (when 'code' is set)"`
}

// StatusToError is a client error.
type StatusToError struct {
	Code      uint32 `yaml:"code" doc:"the error code, e.g. 103"`
	Message   string `yaml:"message" doc:"the error message, at most 123 bytes"`
	Temporary bool   `yaml:"temporary" doc:"mark the error temporary (the client may retry)"`
}

// transformStatus is the answer the transforms make of status, or nil.
func transformStatus[T any](transforms []StatusTransform, status int) *envelope[T] {
	for _, t := range transforms {
		if t.StatusCode != status {
			continue
		}
		if t.ToError.Code > 0 {
			return &envelope[T]{Error: &wireError{Code: t.ToError.Code, Message: t.ToError.Message, Temporary: t.ToError.Temporary}}
		}
		if t.ToDisconnect.Code > 0 {
			return &envelope[T]{Disconnect: &wireDisconnect{Code: t.ToDisconnect.Code, Reason: t.ToDisconnect.Reason}}
		}
	}
	return nil
}

// checkStatusTransforms adds the transforms' problems to errs, as
// Centrifugo's validation refuses them.
func checkStatusTransforms(transforms []StatusTransform, errs *optionerr.List) {
	const maxText = 123 // a WebSocket close reason's limit
	for i, t := range transforms {
		field := fmt.Sprintf("StatusToCodeTransforms[%d]", i)
		switch {
		case t.StatusCode == 0:
			errs.Add(field+".StatusCode", "want the HTTP status to match")
		case t.ToError.Code == 0 && t.ToDisconnect.Code == 0:
			errs.Add(field+".ToError", "want to_error or to_disconnect with a code")
		case len(t.ToError.Message) > maxText:
			errs.Add(field+".ToError.Message", "at most %d bytes", maxText)
		case len(t.ToDisconnect.Reason) > maxText:
			errs.Add(field+".ToDisconnect.Reason", "at most %d bytes", maxText)
		}
	}
}
