package config

//go:generate go run ../cmd/herald config docs ../docs/configuration.md
//go:generate go run ../cmd/herald config docs ../docs/migrating-from-centrifugo.md

// Adding an option
//
// An option is one field with tags; nothing else lists it.
//
//  1. Add the field to the struct that holds its section, with its key,
//     its default (if not the zero value) and one line of documentation:
//
//	    // WriteCoalesce ... (the Go doc for programmers)
//	    WriteCoalesce time.Duration `yaml:"write_coalesce" default:"0s" doc:"write to one connection at most once per this interval"`
//
//     Options the hub (or another library package) takes are fields of
//     that package's option type (hub.ClientConfig, hub.NamespaceOptions,
//     consumer.Config and its sections, websocket.Config, guard.Config,
//     proxy.Endpoint, httpstream.StreamOptions, tlsconf.Config,
//     tlsfiles.Files), tagged there; the config types embed those types
//     inline or are them, so the new field reaches the library with no
//     conversion. If the library also applies the default to a zero
//     field (a Default* constant), add the type to
//     TestLibraryDefaultsAgreeWithTags, which checks that the two agree.
//     An engine's options are its package's Config (postgres.Config,
//     redis.Config, nats.Config), which engine.<name> embeds: a field of
//     that Config with tags is the whole change. Options of the file
//     only (keys, listeners) are fields of the config types. A new section
//     is a struct field without tags of its own; a list of sections is a
//     slice of structs.
//  2. If a value can be wrong in ways its type cannot say, check it once:
//     in the library's Validate when the library takes the option (report
//     an *optionerr.Error, hub.OptionError, naming the Go field, with
//     optionerr.List; Config.Validate translates it to the key), else in
//     Config.Validate, naming the key.
//  3. Run `go generate ./config` to rewrite the reference tables of
//     docs/configuration.md; a test fails until they match. `herald config
//     example`, `herald config init`, decoding, defaults and the HERALD_
//     environment variables follow the tags without any change.
