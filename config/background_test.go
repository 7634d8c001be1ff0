package config

import (
	"testing"

	"github.com/cadre-dev/cadre"
)

func TestBackgroundSetting(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env, setting string
		want         cadre.BackgroundMode
		err          bool
	}{
		{"", "", cadre.BackgroundOn, false},
		{"", "on", cadre.BackgroundOn, false},
		{"", "default", cadre.BackgroundDefault, false},
		{"", "off", cadre.BackgroundOff, false},
		{"1", "default", cadre.BackgroundOff, false},
		{"false", "default", cadre.BackgroundDefault, false},
		{"maybe", "", "", true},
		{"", "always", "", true},
	} {
		getenv := func(k string) string {
			if k == "CADRE_DISABLE_BACKGROUND_TASKS" {
				return c.env
			}
			return ""
		}
		got, err := backgroundSetting(getenv, &Settings{Background: Value{Value: c.setting}})
		if (err != nil) != c.err || got != c.want {
			t.Errorf("env %q setting %q: %q %v, want %q (error %v)", c.env, c.setting, got, err, c.want, c.err)
		}
	}
}
