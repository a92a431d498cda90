package hub

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/heraldhq/herald/hub/internal/permission"
	"github.com/heraldhq/herald/protocol"
)

// namespaceNameRe is Centrifugo 6.9.1's namespace name pattern
// (internal/config/validate.go, namePattern), dots included, so that its
// configurations keep their names.
var namespaceNameRe = regexp.MustCompile(`^[-a-zA-Z0-9_.]{2,}$`)

// Validate checks the channel configuration as New would. It reports
// every problem, each an *OptionError naming the Go field (see
// OptionErrors).
func (c ChannelConfig) Validate() error {
	_, err := compileChannels(c, "")
	return err
}

// rule is a namespace's options compiled for lookup.
type rule struct {
	NamespaceOptions
	name string
	re   *regexp.Regexp
	perm *permission.Syntax // the hub's (channelRules.perm)
	// pattern is the namespace's channel pattern, nil for a namespace by
	// prefix (channelpattern.go); cel its expressions (channelcel.go).
	pattern *channelPattern
	cel     celChecks
}

// withoutHistory is r for a publication that skips the channel's stream.
func (r *rule) withoutHistory() *rule {
	noHistory := *r
	noHistory.HistorySize, noHistory.HistoryTTL = 0, 0
	return &noHistory
}

// channelRules resolves a channel name to its namespace's options.
type channelRules struct {
	maxLength int
	// syntax, defaults applied (channelsyntax.go), and its permission
	// part, which every rule shares.
	syntax ChannelSyntax
	perm   *permission.Syntax
	global *rule
	byName map[string]*rule
	// patterns is the namespaces named by a channel pattern, nil unless
	// ChannelConfig.Patterns (channelpattern.go).
	patterns *channelPatterns
}

// compileChannels compiles cfg; its problems' Go paths start with prefix,
// where cfg sits in what the caller was given.
func compileChannels(cfg ChannelConfig, prefix string) (*channelRules, error) {
	r := &channelRules{maxLength: cfg.MaxLength, byName: make(map[string]*rule, len(cfg.Namespaces)),
		syntax: cfg.ChannelSyntax.withDefaults(), perm: cfg.ChannelSyntax.permission()}
	if r.maxLength <= 0 {
		r.maxLength = 255
	}
	var ps optionProblems
	cfg.ChannelSyntax.check(prefix, &ps)
	cfg.State.check(joinField(prefix, "State"), &ps) // channelstate_options.go
	env, err := newCELEnv()
	if err != nil {
		return nil, fmt.Errorf("hub: the CEL environment: %w", err)
	}
	if cfg.Patterns {
		r.patterns = &channelPatterns{}
	}
	r.global = compileRule("", cfg.WithoutNamespace, joinField(prefix, "WithoutNamespace"), &ps)
	compileCEL(env, r.global, cfg.WithoutNamespace, joinField(prefix, "WithoutNamespace"), &ps)
	for i, ns := range cfg.Namespaces {
		field := joinField(prefix, fmt.Sprintf("Namespaces[%d]", i))
		if cfg.Patterns && isPatternName(ns.Name) {
			nr := compileRule(ns.Name, ns.NamespaceOptions, field, &ps)
			compileCEL(env, nr, ns.NamespaceOptions, field, &ps)
			if err := r.patterns.add(nr); err != nil {
				ps.add(field, "Name", err.Error())
			}
			continue
		}
		if !namespaceNameRe.MatchString(ns.Name) {
			ps.add(field, "Name", fmt.Sprintf("%q: must match %s", ns.Name, namespaceNameRe))
		} else if _, dup := r.byName[ns.Name]; dup {
			ps.add(field, "Name", fmt.Sprintf("%q: defined twice", ns.Name))
		}
		r.byName[ns.Name] = compileRule(ns.Name, ns.NamespaceOptions, field, &ps)
		compileCEL(env, r.byName[ns.Name], ns.NamespaceOptions, field, &ps)
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	r.global.perm = r.perm
	for _, nr := range r.byName {
		nr.perm = r.perm
	}
	if r.patterns != nil {
		for _, nr := range r.patterns.static {
			nr.perm = r.perm
		}
		for _, nr := range r.patterns.vars {
			nr.perm = r.perm
		}
	}
	return r, nil
}

// compileRule compiles one namespace's options, adding their problems to
// ps under the Go path field.
func compileRule(name string, o NamespaceOptions, field string, ps *optionProblems) *rule {
	r := &rule{NamespaceOptions: o, name: name}
	if o.ChannelRegex != "" {
		re, err := regexp.Compile(o.ChannelRegex)
		if err != nil {
			ps.add(field, "ChannelRegex", err.Error())
		}
		r.re = re
	}
	if (o.HistorySize > 0) != (o.HistoryTTL > 0) {
		ps.add(field, "HistorySize", "HistorySize and HistoryTTL must be set together (both positive) to keep history")
	} else if (o.ForceRecovery || o.AllowRecovery) && !o.HasHistory() {
		ps.add(field, "ForceRecovery", "ForceRecovery and AllowRecovery need history: set HistorySize and HistoryTTL")
	}
	checkRecoveryMode(o, field, ps)
	if o.JoinLeaveMaxSubscribers < -1 {
		ps.add(field, "JoinLeaveMaxSubscribers", fmt.Sprintf("%d: want -1 (no bound), 0 (the default, %d) or a positive number", o.JoinLeaveMaxSubscribers, DefaultJoinLeaveMaxSubscribers))
	}
	if o.TagsMaxSize < -1 {
		ps.add(field, "TagsMaxSize", fmt.Sprintf("%d: want -1 (no bound), 0 (the default, %d) or a positive number", o.TagsMaxSize, DefaultTagsMaxSize))
	}
	if !o.PublicationDataFormat.valid() {
		ps.add(field, "PublicationDataFormat", fmt.Sprintf("%q: want empty, %s, %s or %s", o.PublicationDataFormat, DataFormatJSON, DataFormatJSONObject, DataFormatBinary))
	}
	checkDeltaTypes(o.AllowedDeltaTypes, joinField(field, "AllowedDeltaTypes"), ps)
	checkMapOptions(o, field, ps)
	checkSharedPollOptions(o, field, ps)
	checkPublishDebounce(o, field, ps)
	switch o.QueuePolicy {
	case "", QueueClose, QueueDropOldest:
	default:
		ps.add(field, "QueuePolicy", fmt.Sprintf("%q: want %s or %s", o.QueuePolicy, QueueClose, QueueDropOldest))
	}
	return r
}

// resolve returns the rule of ch, or the client error for a name the
// configuration does not allow.
func (r *channelRules) resolve(ch string) (*rule, *Error) {
	// Control characters are refused whatever the namespace's regex says:
	// a name is echoed into logs, replies and engine keys, where a
	// newline or NUL could forge lines or cut keys short.
	if hasControl(ch) {
		return nil, newError(protocol.ErrorBadRequest)
	}
	if r.patterns != nil && isPatternName(ch) {
		// A pattern matches the whole name, and its regex the whole
		// name too, as Centrifugo PRO's.
		nr, ok := r.patterns.resolve(ch)
		if !ok {
			return nil, newError(protocol.ErrorUnknownChannel)
		}
		if nr.re != nil && !nr.re.MatchString(ch) {
			return nil, newError(protocol.ErrorBadRequest)
		}
		return nr, nil
	}
	name := strings.TrimPrefix(ch, r.syntax.PrivatePrefix)
	nr := r.global
	rest := name
	if ns, after, ok := strings.Cut(name, r.syntax.NamespaceBoundary); ok {
		var found bool
		if nr, found = r.byName[ns]; !found {
			return nil, newError(protocol.ErrorUnknownChannel)
		}
		rest = after
	}
	if nr.re != nil {
		if !nr.re.MatchString(rest) {
			return nil, newError(protocol.ErrorBadRequest)
		}
	} else if !isASCII(ch) {
		return nil, newError(protocol.ErrorBadRequest)
	}
	return nr, nil
}

// checkLength refuses channel names longer than the configured limit.
func (r *channelRules) checkLength(ch string) *Error {
	if len(ch) > r.maxLength {
		return newError(protocol.ErrorBadRequest)
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// hasControl reports whether s holds an ASCII control character
// (0x00–0x1F or DEL).
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}
