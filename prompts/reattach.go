package prompts

import "fmt"

// RemoteReattachFailed is why a remote agent of an earlier process of the
// session ended for this one: a resumed session could not take it up
// again on its executor (issue 26). why is the executor's error.
func RemoteReattachFailed(why string) string {
	return fmt.Sprintf("cadre could not re-attach to this remote agent when the session was resumed: %s. Its workflow may no longer exist on the Temporal server (removed after its retention period, or the server's database was reset), so what it did is lost to this session. Start the work again if it is still needed", why)
}

// RemoteNoReattach is RemoteReattachFailed's reason when the resumed
// session has no remote executor that can re-attach.
func RemoteNoReattach() string {
	return "this session has no remote executor that can re-attach (the remote.temporal settings name none), though the agent may still run on a worker"
}
