package config

import "reflect"

// StringList is a list of strings that a file may also write as one
// string, which is the one-item list: Centrifugo's engine.redis.address
// takes both forms ("host:6379", or a list of shards), and so does Herald.
type StringList []string

var stringListType = reflect.TypeOf(StringList(nil))
