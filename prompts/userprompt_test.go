package prompts

import "testing"

func TestUserDenied(t *testing.T) {
	for _, tt := range []struct{ reason, want string }{
		{"", "The user denied this call. Do not retry it; ask the user or take another way."},
		{"  \n", "The user denied this call. Do not retry it; ask the user or take another way."},
		{" use make test instead ", "The user denied this call and said what to do instead:\n<user-feedback>\nuse make test instead\n</user-feedback>"},
	} {
		if got := UserDenied(tt.reason); got != tt.want {
			t.Errorf("UserDenied(%q) = %q, want %q", tt.reason, got, tt.want)
		}
	}
	if PromptUnanswered() == "" {
		t.Fatal("empty PromptUnanswered")
	}
}
