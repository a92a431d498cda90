package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jsonDuplicateKeys reports the first key that an object of a JSON
// document gives twice, with its path (channel.namespaces[1].presence).
func jsonDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := jsonDupValue(dec, ""); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// jsonDupValue reads one value from dec, checking its objects' keys.
func jsonDupValue(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			key := join(path, k)
			if seen[k] {
				return fmt.Errorf("%s: given twice in one object (JSON keeps the last and drops the first): remove one", key)
			}
			seen[k] = true
			if err := jsonDupValue(dec, key); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := jsonDupValue(dec, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}
