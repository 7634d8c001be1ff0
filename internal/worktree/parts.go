package worktree

// The parts of a Manager. Each part is a view of the Manager with one
// job, so that no type holds every method of the package:
//
//   - Manager (worktree.go, repo.go, inspect.go, hooks.go): where a
//     repository is, creating a worktree under a lease and its record,
//     inspecting and removing it when the agent ends;
//   - bases (base.go): the commit a new worktree starts from;
//   - merger (merge.go): bringing a kept worktree's work back (Merge);
//   - lister (list.go): listing and pruning the worktrees of a
//     repository (List, Prune);
//   - remote (remote.go): a tree's work as a git bundle on the machine
//     that ran a remote agent (Lease.Pack), and that bundle landed as the
//     agent's branch on the launcher's (Land).

// bases resolves the commit a new worktree starts from.
type bases struct{ *Manager }

// merger brings a kept worktree's commits back into a working tree.
type merger struct{ *Manager }

// lister lists and prunes the worktrees cadre made in a repository.
type lister struct{ *Manager }

// remote packs a remote agent's tree into a bundle and lands one.
type remote struct{ *Manager }
