package config

import (
	"fmt"
	"strconv"
)

// envBool reads the boolean environment variable name (1/true/0/false, as
// strconv.ParseBool reads them) and returns fallback when it is unset. A
// value that is not a boolean is an error naming the variable.
func envBool(getenv func(string) string, name string, fallback bool) (bool, error) {
	v := getenv(name)
	if v == "" {
		return fallback, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want 1 or 0 (true or false)", name, v)
	}
	return on, nil
}
