package hub

import (
	"encoding/json"
	"fmt"

	"github.com/google/cel-go/cel"
)

// CEL permission expressions of a namespace (subscribe_cel, publish_cel,
// history_cel, presence_cel), as Centrifugo PRO's (centrifugal.dev
// docs/pro/cel_expressions.md): compiled with the channel configuration,
// so an expression that does not compile, or is not a bool, fails at
// load naming its key, and evaluated per command with Centrifugo PRO's
// variables. An expression is one more way to be allowed: it is asked
// only when the namespace's other rules refuse, and its error (a missing
// key of meta, say) refuses.

// celChecks is a namespace's compiled expressions; nil programs are unset.
type celChecks struct {
	subscribe, publish, history, presence cel.Program
}

// newCELEnv declares the variables of Centrifugo PRO's expressions.
func newCELEnv() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("subscribed", cel.BoolType),
		cel.Variable("user", cel.StringType),
		cel.Variable("meta", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("channel", cel.StringType),
		cel.Variable("vars", cel.MapType(cel.StringType, cel.StringType)),
	)
}

// compileCEL compiles the expressions of o into r, adding their problems
// to ps under field.
func compileCEL(env *cel.Env, r *rule, o NamespaceOptions, field string, ps *optionProblems) {
	for _, e := range []struct {
		goName, src string
		dst         *cel.Program
	}{
		{"SubscribeCEL", o.SubscribeCEL, &r.cel.subscribe},
		{"PublishCEL", o.PublishCEL, &r.cel.publish},
		{"HistoryCEL", o.HistoryCEL, &r.cel.history},
		{"PresenceCEL", o.PresenceCEL, &r.cel.presence},
	} {
		if e.src == "" {
			continue
		}
		p, err := compileExpr(env, e.src)
		if err != nil {
			ps.add(field, e.goName, err.Error())
			continue
		}
		*e.dst = p
	}
}

func compileExpr(env *cel.Env, src string) (cel.Program, error) {
	ast, iss := env.Compile(src)
	if iss.Err() != nil {
		return nil, fmt.Errorf("%q: %w", src, iss.Err())
	}
	if ast.OutputType() != cel.BoolType {
		return nil, fmt.Errorf("%q: gives %s, want a bool", src, ast.OutputType())
	}
	p, err := env.Program(ast)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", src, err)
	}
	return p, nil
}

// celAllows evaluates p (nil: no expression, refused) for c on ch of
// namespace r.
func (c *Client) celAllows(p cel.Program, r *rule, ch string, subscribed bool) bool {
	if p == nil {
		return false
	}
	c.mu.Lock()
	user, rawMeta := c.user, c.meta
	c.mu.Unlock()
	// meta must be a JSON object to be read; anything else is empty, as
	// Centrifugo PRO asks meta to be an object.
	meta := map[string]any{}
	if len(rawMeta) > 0 {
		if err := json.Unmarshal(rawMeta, &meta); err != nil {
			meta = map[string]any{}
		}
	}
	vars := patternVars(r, ch)
	if vars == nil {
		vars = map[string]string{}
	}
	out, _, err := p.Eval(map[string]any{
		"subscribed": subscribed, "user": user, "meta": meta, "channel": ch, "vars": vars,
	})
	if err != nil {
		c.logger().Debug("cel expression refused: its evaluation failed", "channel", ch, "error", err)
		return false
	}
	allowed, ok := out.Value().(bool)
	return ok && allowed
}
