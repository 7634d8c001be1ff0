package prompts

import "fmt"

// RemoteReattachFailed is why a remote agent of an earlier process of the
// session ended for this one: the resumed session could not take it up
// again on its executor (issue 26). why is the executor's error.
func RemoteReattachFailed(why string) string {
	return fmt.Sprintf("cadre could not re-attach to this remote agent when the session was resumed: %s. If its workflow no longer exists on the Temporal server (removed after its retention period, or the server's database was reset), what it did is lost; otherwise it may still run on a worker, but this session will not hear from it. Start the work again if it is still needed", why)
}

// RemoteNoReattach is RemoteReattachFailed's reason when the resumed
// session has no remote executor that can re-attach.
func RemoteNoReattach() string {
	return "this session has no remote execution configured (the remote.temporal settings)"
}
