package worktree

// A continued remote agent (issue 26: SendMessage to a finished remote
// agent) works again on its landed branch: its launcher sends the
// branch's commits along (SeedBundle), the worker's tree starts at the
// branch's tip, and the new work lands on top of the same branch, which
// moves forward (landOnto). Its record stays the one of its first run, so
// List and Merge see the work of every run together.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SeedBundle writes to the file bundle the commits of the landed branch
// worktree-agent-<agentID> of the repository dir belongs to that its base
// (the record's base commit) lacks, for a continued remote agent's worker
// to start from. It returns the branch's tip; "" with no error when the
// agent has no landed branch there.
func (m *Manager) SeedBundle(ctx context.Context, dir, agentID, bundle string) (string, error) {
	if !validAgentID(agentID) {
		return "", fmt.Errorf("seed the tree of remote agent %s: not an agent id", agentID)
	}
	r, _, err := m.repoOf(ctx, dir)
	if err != nil {
		return "", fmt.Errorf("seed the tree of remote agent %s: %w", agentID, err)
	}
	branch := BranchName(agentID)
	tip, err := m.branchTip(ctx, r.root, branch)
	if err != nil || tip == "" {
		return "", err
	}
	rec, err := readRecord(filepath.Join(r.treesDir(), TreeName(agentID)))
	if err != nil || rec.AgentID != agentID || !IsObjectID(rec.BaseCommit) {
		return "", errors.Join(fmt.Errorf("seed the tree of remote agent %s: the branch %s has no record of its base", agentID, branch), err)
	}
	if tip == rec.BaseCommit {
		return tip, nil // nothing to send: the base is the tip
	}
	if _, err := m.git.run(ctx, r.root, "bundle", "create", "--quiet", bundle, "refs/heads/"+branch, "^"+rec.BaseCommit); err != nil {
		return "", fmt.Errorf("seed the tree of remote agent %s: write the bundle: %w", agentID, err)
	}
	return tip, nil
}

// continued returns the record of the earlier run of req's agent when
// req continues it: the agent's branch is landed here, at the pack's
// base, with its record and no tree.
func (m remote) continued(ctx context.Context, r *repo, req LandRequest) (*record, bool) {
	path := filepath.Join(r.treesDir(), TreeName(req.AgentID))
	rec, err := readRecord(path)
	if err != nil || rec.AgentID != req.AgentID || rec.Path != path {
		return nil, false
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, false // a tree of its own here: not a landed branch
	}
	tip, err := m.branchTip(ctx, r.root, BranchName(req.AgentID))
	return rec, err == nil && tip != "" && tip == req.Pack.Base
}

// landOnto lands the work of a continued remote agent on its branch as
// the earlier run left it: the branch is at the pack's base, and moves to
// its tip (compare-and-swap: nothing moved it meanwhile). The record of
// the first run stays, its end time renewed. r's lock is held when the
// pack holds work.
func (m remote) landOnto(ctx context.Context, r *repo, rec *record, req LandRequest, o Outcome) (Outcome, error) {
	fail := func(err error) (Outcome, error) {
		return o, fmt.Errorf("land the continued work of remote agent %s: %w", req.AgentID, err)
	}
	branch := BranchName(req.AgentID)
	o.Info.Base, o.Info.BaseRef, o.Info.BaseCommit = rec.Base, rec.BaseRef, rec.BaseCommit
	o.Path, o.Branch = rec.Path, branch
	if req.Pack.Changed() {
		if err := m.moveOnto(ctx, r, req); err != nil {
			return fail(err)
		}
		rec.EndedAt = m.cfg.Now().UTC()
		if err := writeRecord(rec); err != nil {
			return fail(err)
		}
	}
	ref := treeRef{path: rec.Path, branch: branch, base: rec.BaseCommit, commonDir: r.commonDir, repo: r}
	c, _, err := lister(m).inspectMissing(ctx, &ref)
	o.State = Kept
	if err != nil {
		o.Reason = "landed, but its commits could not be listed: " + err.Error()
		return o, nil
	}
	o.Changes = &c
	return o, nil
}

// moveOnto fetches the bundle of req and moves the agent's branch from
// the pack's base to its tip.
func (m remote) moveOnto(ctx context.Context, r *repo, req LandRequest) error {
	branch := BranchName(req.AgentID)
	bundle, err := filepath.Abs(req.Bundle)
	if err != nil {
		return err
	}
	if _, err := m.git.run(ctx, r.root, "bundle", "verify", "--quiet", bundle); err != nil {
		return fmt.Errorf("the bundle does not apply here: %w", err)
	}
	tmp := "refs/cadre/landing/" + req.AgentID
	if _, err := m.git.run(ctx, r.root, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		bundle, "+refs/heads/"+branch+":"+tmp); err != nil {
		return fmt.Errorf("fetch the bundle: %w", err)
	}
	defer func() { _, _ = m.git.run(context.WithoutCancel(ctx), r.root, "update-ref", "-d", tmp) }()
	got, err := m.commitOf(ctx, r.root, tmp)
	if err != nil {
		return err
	}
	if got != req.Pack.Tip {
		return fmt.Errorf("the bundle's %s is at %s, the pack says %s", branch, got, req.Pack.Tip)
	}
	if _, err := m.git.run(ctx, r.root, "merge-base", "--is-ancestor", req.Pack.Base, got); err != nil {
		return fmt.Errorf("the bundle's %s does not descend from %s: %w", branch, req.Pack.Base, err)
	}
	if _, err := m.git.run(ctx, r.root, "update-ref", "refs/heads/"+branch, got, req.Pack.Base); err != nil {
		return fmt.Errorf("move the branch %s from %s to %s: %w", branch, req.Pack.Base, got, err)
	}
	return nil
}
