package consumer

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// PublicationDataMode is the mode of Centrifugo's cloud-queue consumers
// (aws_sqs, google_pub_sub, azure_service_bus) in which a message's body
// is the data of a publication, and its attributes (SQS message
// attributes, Pub/Sub attributes, Service Bus application properties)
// name the channels and the publication's options. Each kind spells the
// keys in its own words (channels_attribute, channels_property); this is
// the meaning they share. Source: Centrifugo v6.9.1,
// internal/consuming/aws_sqs.go processPublicationDataMessage and its
// google_pub_sub.go and azure_service_bus.go twins.
type PublicationDataMode struct {
	Enabled        bool
	Channels       string // comma-separated channel names
	IdempotencyKey string
	Delta          string // "true"/"false", strconv.ParseBool
	Version        string // an unsigned integer
	VersionEpoch   string
	TagsPrefix     string // every attribute with this prefix is a tag
}

// AttributeDataMode is publication_data_mode of aws_sqs and
// google_pub_sub, with Centrifugo's keys.
type AttributeDataMode struct {
	Enabled                 bool   `yaml:"enabled" doc:"the message body is the data of a publication (JSON), published to the channels the attributes name, instead of an API command"`
	ChannelsAttribute       string `yaml:"channels_attribute" default:"centrifugo-channels" doc:"the attribute holding the comma-separated channels: one is a 'publish', more a 'broadcast'"`
	IdempotencyKeyAttribute string `yaml:"idempotency_key_attribute" default:"centrifugo-idempotency-key" doc:"the attribute holding the publication's idempotency key"`
	DeltaAttribute          string `yaml:"delta_attribute" default:"centrifugo-delta" doc:"the attribute holding the delta flag ('true' or 'false')"`
	VersionAttribute        string `yaml:"version_attribute" default:"centrifugo-version" doc:"the attribute holding the publication's version"`
	VersionEpochAttribute   string `yaml:"version_epoch_attribute" default:"centrifugo-version-epoch" doc:"the attribute holding the publication's version epoch"`
	TagsAttributePrefix     string `yaml:"tags_attribute_prefix" default:"centrifugo-tag-" doc:"each attribute named with this prefix is a tag of the publication, named by the rest"`
}

func (a AttributeDataMode) mode() PublicationDataMode {
	return PublicationDataMode{Enabled: a.Enabled, Channels: a.ChannelsAttribute, IdempotencyKey: a.IdempotencyKeyAttribute,
		Delta: a.DeltaAttribute, Version: a.VersionAttribute, VersionEpoch: a.VersionEpochAttribute, TagsPrefix: a.TagsAttributePrefix}.withDefaults()
}

// PropertyDataMode is publication_data_mode of azure_service_bus, with
// Centrifugo's keys (application properties instead of attributes).
type PropertyDataMode struct {
	Enabled                bool   `yaml:"enabled" doc:"the message body is the data of a publication (JSON), published to the channels the application properties name, instead of an API command"`
	ChannelsProperty       string `yaml:"channels_property" default:"centrifugo-channels" doc:"the property holding the comma-separated channels: one is a 'publish', more a 'broadcast'"`
	IdempotencyKeyProperty string `yaml:"idempotency_key_property" default:"centrifugo-idempotency-key" doc:"the property holding the publication's idempotency key"`
	DeltaProperty          string `yaml:"delta_property" default:"centrifugo-delta" doc:"the property holding the delta flag ('true' or 'false')"`
	VersionProperty        string `yaml:"version_property" default:"centrifugo-version" doc:"the property holding the publication's version"`
	VersionEpochProperty   string `yaml:"version_epoch_property" default:"centrifugo-version-epoch" doc:"the property holding the publication's version epoch"`
	TagsPropertyPrefix     string `yaml:"tags_property_prefix" default:"centrifugo-tag-" doc:"each property named with this prefix is a tag of the publication, named by the rest"`
}

func (a PropertyDataMode) mode() PublicationDataMode {
	return PublicationDataMode{Enabled: a.Enabled, Channels: a.ChannelsProperty, IdempotencyKey: a.IdempotencyKeyProperty,
		Delta: a.DeltaProperty, Version: a.VersionProperty, VersionEpoch: a.VersionEpochProperty, TagsPrefix: a.TagsPropertyPrefix}.withDefaults()
}

// Defaults of the attribute names, Centrifugo's.
const (
	DefaultChannelsAttribute       = "centrifugo-channels"
	DefaultIdempotencyKeyAttribute = "centrifugo-idempotency-key"
	DefaultDeltaAttribute          = "centrifugo-delta"
	DefaultVersionAttribute        = "centrifugo-version"
	DefaultVersionEpochAttribute   = "centrifugo-version-epoch"
	DefaultTagsAttributePrefix     = "centrifugo-tag-"
)

// withDefaults sets the empty attribute names to Centrifugo's defaults.
func (p PublicationDataMode) withDefaults() PublicationDataMode {
	set := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	set(&p.Channels, DefaultChannelsAttribute)
	set(&p.IdempotencyKey, DefaultIdempotencyKeyAttribute)
	set(&p.Delta, DefaultDeltaAttribute)
	set(&p.Version, DefaultVersionAttribute)
	set(&p.VersionEpoch, DefaultVersionEpochAttribute)
	set(&p.TagsPrefix, DefaultTagsAttributePrefix)
	return p
}

// attributeCommand returns what to apply for one message of a cloud
// queue: the method and request, taken as Centrifugo takes them. In
// command mode the method is the attribute methodKey (empty: the body is
// the {"method","payload"} envelope, as Decode says). In publication data
// mode the body is the publication's data, and the command is a publish
// (one channel) or a broadcast (several) built from the attributes.
func attributeCommand(attrs map[string]string, methodKey string, p PublicationDataMode, body []byte) (method string, data []byte, err error) {
	if !p.Enabled {
		return attrs[methodKey], body, nil
	}
	var channels []string
	for c := range strings.SplitSeq(attrs[p.Channels], ",") {
		if c = strings.TrimSpace(c); c != "" {
			channels = append(channels, c)
		}
	}
	if len(channels) == 0 {
		return "", nil, fmt.Errorf("%w: no channel in attribute %q", ErrMalformed, p.Channels)
	}
	if !json.Valid(body) {
		return "", nil, fmt.Errorf("%w: publication data is not JSON", ErrMalformed)
	}
	req := struct {
		Channel        string            `json:"channel,omitempty"`
		Channels       []string          `json:"channels,omitempty"`
		Data           json.RawMessage   `json:"data"`
		IdempotencyKey string            `json:"idempotency_key,omitempty"`
		Delta          bool              `json:"delta,omitempty"`
		Tags           map[string]string `json:"tags,omitempty"`
		Version        uint64            `json:"version,omitempty"`
		VersionEpoch   string            `json:"version_epoch,omitempty"`
	}{Data: body, IdempotencyKey: attrs[p.IdempotencyKey], VersionEpoch: attrs[p.VersionEpoch]}
	if v := attrs[p.Delta]; v != "" {
		if req.Delta, err = strconv.ParseBool(v); err != nil {
			return "", nil, fmt.Errorf("%w: attribute %q: %v", ErrMalformed, p.Delta, err)
		}
	}
	if v := attrs[p.Version]; v != "" {
		if req.Version, err = strconv.ParseUint(v, 10, 64); err != nil {
			return "", nil, fmt.Errorf("%w: attribute %q: %v", ErrMalformed, p.Version, err)
		}
	}
	for k, v := range attrs {
		if tag, ok := strings.CutPrefix(k, p.TagsPrefix); ok && p.TagsPrefix != "" {
			if req.Tags == nil {
				req.Tags = map[string]string{}
			}
			req.Tags[tag] = v
		}
	}
	method = "broadcast"
	if len(channels) == 1 {
		method, req.Channel = "publish", channels[0]
	} else {
		req.Channels = channels
	}
	data, err = json.Marshal(req)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return method, data, nil
}
