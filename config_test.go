package cadre

import (
	"context"
	"errors"
	"iter"
	"reflect"
	"testing"

	"github.com/cadre-dev/cadre/internal/engine"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool/builtin"
)

type nopModel struct{}

func (nopModel) Stream(context.Context, *llm.Request) iter.Seq2[llm.Event, error] {
	return func(func(llm.Event, error) bool) {}
}

type nopHooks struct{}

func (nopHooks) HandlesWorktrees() bool { return false }
func (nopHooks) CreateWorktree(context.Context, WorktreeHookRequest) (string, error) {
	return "", nil
}
func (nopHooks) RemoveWorktree(context.Context, WorktreeHookRequest) error { return nil }

// TestConfigReachesTheEngine sets each field of Config alone and checks
// that the engine's Config gets it: a field added to one struct and not to
// the other, or not copied by Config.engine, fails here.
func TestConfigReachesTheEngine(t *testing.T) {
	ct := reflect.TypeFor[Config]()
	et := reflect.TypeFor[engine.Config]()
	if ct.NumField() != et.NumField() {
		t.Errorf("Config has %d fields, engine.Config %d", ct.NumField(), et.NumField())
	}
	for i := range ct.NumField() {
		f := ct.Field(i)
		var c Config
		v := reflect.ValueOf(&c).Elem().Field(i)
		switch f.Name {
		case "Model":
			c.Model = nopModel{}
		case "WebSearch":
			c.WebSearch = &builtin.SearXNG{}
		case "WorktreeHooks":
			c.WorktreeHooks = nopHooks{}
		case "Remote":
			c.Remote = RemoteConfig{Executor: nopExecutor{}}
		default:
			v.Set(nonZero(t, f.Name, f.Type))
		}
		ec := c.engine()
		ef := reflect.ValueOf(ec).FieldByName(f.Name)
		if !ef.IsValid() {
			t.Errorf("engine.Config has no field %s", f.Name)
			continue
		}
		if ef.IsZero() {
			t.Errorf("Config.%s does not reach engine.Config", f.Name)
		}
	}
}

// nonZero makes a value of type typ that is not its zero value.
func nonZero(t *testing.T, name string, typ reflect.Type) reflect.Value {
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(typ, 1, 1))
	case reflect.Map:
		v.Set(reflect.MakeMap(typ))
	case reflect.Pointer:
		v.Set(reflect.New(typ.Elem()))
	case reflect.Func:
		v.Set(reflect.MakeFunc(typ, func([]reflect.Value) []reflect.Value {
			out := make([]reflect.Value, typ.NumOut())
			for i := range out {
				out[i] = reflect.Zero(typ.Out(i))
			}
			return out
		}))
	case reflect.Struct:
		if typ.NumField() == 0 {
			t.Fatalf("field %s: empty struct", name)
		}
		f := v.Field(0)
		f.Set(nonZero(t, name, f.Type()))
	default:
		t.Fatalf("field %s: no non-zero value for kind %s; add a case", name, typ.Kind())
	}
	return v
}

// nopExecutor is a remote executor that starts nothing.
type nopExecutor struct{}

func (nopExecutor) Start(context.Context, executor.SpawnRequest) (executor.Handle, error) {
	return nil, errors.New("nothing starts here")
}
