package config

import (
	"encoding/base64"
	"encoding/pem"
	"strings"
)

// centrifugoPEM reads a PEM value of Centrifugo's TLS objects as
// Centrifugo v6.9.1 does (internal/configtypes/pem.go, PEMData.Load): PEM
// text when pem.Decode finds a block in it, else base64 that decodes to
// PEM, else a file path. inline is the PEM text of the first two, isPath
// reports the third. Centrifugo also requires the file to exist; a
// configuration is checked here on machines that may not have it, so a
// value is taken as a path unless it cannot be one: it holds PEM armour or
// a line break (broken PEM text), or is base64 of broken PEM. ok is false
// for such a value.
func centrifugoPEM(s string) (inline string, isPath, ok bool) {
	if block, _ := pem.Decode([]byte(s)); block != nil {
		return s, false, true
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		if block, _ := pem.Decode(b); block != nil {
			return string(b), false, true
		}
		if strings.Contains(string(b), "-----BEGIN") {
			return "", false, false // broken PEM, encoded
		}
	}
	if strings.Contains(s, "-----BEGIN") || strings.ContainsAny(s, "\r\n\x00") {
		return "", false, false
	}
	return "", true, true
}

// inlineKey is the key of Herald's tls section that takes inline PEM
// instead of the file of fileKey: cert_file -> cert_pem, client_ca_file ->
// client_ca_pem, ca_file -> ca_pem.
func inlineKey(fileKey string) string {
	return strings.TrimSuffix(fileKey, "_file") + "_pem"
}
