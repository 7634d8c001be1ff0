package tasklist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func create(t *testing.T, s *Store, subject string) Task {
	t.Helper()
	tk, err := s.Create(context.Background(), NewTask{Subject: subject, Description: "do " + subject})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func ptr(s string) *string { return &s }

func TestCreateGetListDecimalIDs(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	for i := 1; i <= 11; i++ {
		tk := create(t, s, "t"+strconv.Itoa(i))
		if tk.ID != strconv.Itoa(i) || tk.Status != Pending || tk.Owner != "" {
			t.Fatalf("task %d = %+v", i, tk)
		}
	}
	all, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tk := range all {
		ids = append(ids, tk.ID)
	}
	if strings.Join(ids, ",") != "1,2,3,4,5,6,7,8,9,10,11" {
		t.Fatalf("ids by number: %v", ids)
	}
	got, err := s.Get(ctx, "10")
	if err != nil || got.Subject != "t10" || got.Description != "do t10" {
		t.Fatalf("Get 10 = %+v, %v", got, err)
	}
	if _, err := s.Get(ctx, "99"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get 99: %v", err)
	}
	// Files in Claude Code's layout.
	for _, f := range []string{"1.json", "11.json", ".highwatermark", ".lock"} {
		if _, err := os.Stat(filepath.Join(s.Path(), f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := s.Create(ctx, NewTask{Subject: "  "}); err == nil {
		t.Fatal("empty subject accepted")
	}
}

func TestDependenciesBothWaysAndOpenBlockers(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	a, b, c := create(t, s, "a"), create(t, s, "b"), create(t, s, "c")
	res, err := s.Update(ctx, "lead", a.ID, Update{AddBlocks: []string{b.ID}})
	if err != nil || !reflect.DeepEqual(res.UpdatedFields, []string{"blocks"}) {
		t.Fatalf("addBlocks: %+v %v", res, err)
	}
	if _, err := s.Update(ctx, "lead", c.ID, Update{AddBlockedBy: []string{a.ID, b.ID}}); err != nil {
		t.Fatal(err)
	}
	all, _ := s.List(ctx)
	want := map[string][2][]string{"1": {{"2", "3"}, {}}, "2": {{"3"}, {"1"}}, "3": {{}, {"1", "2"}}}
	for _, tk := range all {
		if w := want[tk.ID]; !reflect.DeepEqual(tk.Blocks, w[0]) || !reflect.DeepEqual(tk.BlockedBy, w[1]) {
			t.Errorf("task %s blocks %v blockedBy %v, want %v", tk.ID, tk.Blocks, tk.BlockedBy, w)
		}
	}
	// Adding a link again changes nothing.
	res, _ = s.Update(ctx, "lead", a.ID, Update{AddBlocks: []string{b.ID}})
	if len(res.UpdatedFields) != 0 {
		t.Fatalf("repeated link updated %v", res.UpdatedFields)
	}
	if _, err := s.Update(ctx, "lead", a.ID, Update{AddBlocks: []string{a.ID}}); err == nil {
		t.Fatal("self link accepted")
	}
	if _, err := s.Update(ctx, "lead", a.ID, Update{AddBlocks: []string{"42"}}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("link to missing task: %v", err)
	}
	// Completing a clears it from the open blockers of c.
	res, err = s.Update(ctx, "lead", a.ID, Update{Status: Completed})
	if err != nil || res.StatusChange == nil || res.StatusChange.From != Pending || res.StatusChange.To != Completed {
		t.Fatalf("complete: %+v %v", res, err)
	}
	all, _ = s.List(ctx)
	if got := OpenBlockers(all[2], all); !reflect.DeepEqual(got, []string{"2"}) {
		t.Fatalf("open blockers of 3 = %v", got)
	}
}

func TestInProgressWithoutOwnerClaims(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	a := create(t, s, "a")
	res, err := s.Update(ctx, "alice", a.ID, Update{Status: InProgress})
	if err != nil || res.Task.Owner != "alice" || !res.OwnerChanged() {
		t.Fatalf("claim: %+v %v", res, err)
	}
	var ce *ClaimedError
	if _, err := s.Update(ctx, "bob", a.ID, Update{Status: InProgress}); !errors.As(err, &ce) || ce.Owner != "alice" {
		t.Fatalf("second claim: %v", err)
	}
	// The lead may still assign it explicitly.
	res, err = s.Update(ctx, "lead", a.ID, Update{Owner: ptr("bob")})
	if err != nil || res.Task.Owner != "bob" || res.PreviousOwner != "alice" || !reflect.DeepEqual(res.UpdatedFields, []string{"owner"}) {
		t.Fatalf("assign: %+v %v", res, err)
	}
	if _, err := s.Update(ctx, "x", a.ID, Update{Status: "done"}); err == nil {
		t.Fatal("bad status accepted")
	}
}

func TestMetadataMergeAndFields(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	a, err := s.Create(ctx, NewTask{Subject: "a", Metadata: map[string]any{"k": "v", "n": nil}})
	if err != nil || !reflect.DeepEqual(a.Metadata, map[string]any{"k": "v"}) {
		t.Fatalf("create metadata %v %v", a.Metadata, err)
	}
	res, err := s.Update(ctx, "lead", a.ID, Update{Subject: ptr("a2"), Description: ptr("d"), ActiveForm: ptr("Doing a"), Metadata: map[string]any{"k": nil, "x": 1.0}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.UpdatedFields, []string{"subject", "description", "activeForm", "metadata"}) {
		t.Fatalf("fields %v", res.UpdatedFields)
	}
	got, _ := s.Get(ctx, a.ID)
	if got.Subject != "a2" || got.ActiveForm != "Doing a" || !reflect.DeepEqual(got.Metadata, map[string]any{"x": 1.0}) {
		t.Fatalf("after update %+v", got)
	}
}

func TestDeleteStripsLinksAndIDNotReused(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	a, b, c := create(t, s, "a"), create(t, s, "b"), create(t, s, "c")
	if _, err := s.Update(ctx, "lead", b.ID, Update{AddBlockedBy: []string{a.ID}, AddBlocks: []string{c.ID}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Update(ctx, "lead", c.ID, Update{Status: Deleted})
	if err != nil || !reflect.DeepEqual(res.UpdatedFields, []string{"deleted"}) {
		t.Fatalf("delete c: %+v %v", res, err)
	}
	if err := s.Delete(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, b.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted task still there: %v", err)
	}
	got, _ := s.Get(ctx, a.ID)
	if len(got.Blocks) != 0 || len(got.BlockedBy) != 0 {
		t.Fatalf("links to deleted task left: %+v", got)
	}
	if d := create(t, s, "d"); d.ID != "4" {
		t.Fatalf("id after deleting the highest = %s, want 4", d.ID)
	}
	if err := s.Delete(ctx, "3"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestClaimNextLowestUnblockedAndRelease(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	for _, n := range []string{"a", "b", "c", "d"} {
		create(t, s, n)
	}
	// 1 blocks 2; 3 is owned already.
	s.Update(ctx, "lead", "1", Update{AddBlocks: []string{"2"}})
	s.Update(ctx, "lead", "3", Update{Owner: ptr("carol")})
	var got []string
	for _, who := range []string{"x", "y", "z"} {
		tk, ok, err := s.ClaimNext(ctx, who)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if tk.Owner != who || tk.Status != InProgress {
				t.Fatalf("claimed %+v", tk)
			}
			got = append(got, tk.ID)
		}
	}
	if strings.Join(got, ",") != "1,4" {
		t.Fatalf("claimed %v, want 1,4 (2 blocked, 3 owned)", got)
	}
	if ok, _ := s.HasClaimable(ctx); ok {
		t.Fatal("claimable while 2 is blocked")
	}
	ch := s.Changed()
	s.Update(ctx, "x", "1", Update{Status: Completed})
	select {
	case <-ch:
	default:
		t.Fatal("no change notice after completing 1")
	}
	if ok, _ := s.HasClaimable(ctx); !ok {
		t.Fatal("2 not claimable after its blocker completed")
	}
	tk, ok, _ := s.ClaimNext(ctx, "x")
	if !ok || tk.ID != "2" {
		t.Fatalf("claim after unblock: %+v %v", tk, ok)
	}
	rel, err := s.Release(ctx, "x")
	if err != nil || len(rel) != 1 || rel[0].ID != "2" || rel[0].Owner != "" || rel[0].Status != Pending {
		t.Fatalf("release x: %+v %v", rel, err)
	}
	got1, _ := s.Get(ctx, "1")
	if got1.Owner != "x" || got1.Status != Completed {
		t.Fatalf("release touched a completed task: %+v", got1)
	}
	if _, _, err := s.ClaimNext(ctx, ""); err == nil {
		t.Fatal("claim without owner")
	}
}

// claimRace has claimers agents claim from stores (round robin) until
// nothing is left and returns who got what.
func claimRace(t *testing.T, stores []*Store, claimers int) map[string][]string {
	t.Helper()
	var mu sync.Mutex
	got := map[string][]string{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			who := fmt.Sprintf("mate%d", i)
			s := stores[i%len(stores)]
			for {
				tk, ok, err := s.ClaimNext(context.Background(), who)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				got[tk.ID] = append(got[tk.ID], who)
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	return got
}

func TestTwentyClaimersTenTasksTwoStores(t *testing.T) {
	dir := t.TempDir()
	a, b := open(t, dir), open(t, dir)
	for i := range 10 {
		create(t, a, "t"+strconv.Itoa(i))
	}
	got := claimRace(t, []*Store{a, b}, 20)
	if len(got) != 10 {
		t.Fatalf("claimed %d tasks, want 10: %v", len(got), got)
	}
	all, _ := b.List(context.Background())
	for _, tk := range all {
		if len(got[tk.ID]) != 1 || tk.Owner != got[tk.ID][0] || tk.Status != InProgress {
			t.Errorf("task %s claimed by %v, stored owner %q status %s", tk.ID, got[tk.ID], tk.Owner, tk.Status)
		}
	}
}

func TestConcurrentInProgressClaimsOneWinner(t *testing.T) {
	dir := t.TempDir()
	stores := []*Store{open(t, dir), open(t, dir), open(t, dir)}
	create(t, stores[0], "only")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var winners []string
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			who := "mate" + strconv.Itoa(i)
			_, err := stores[i%3].Update(context.Background(), who, "1", Update{Status: InProgress})
			var ce *ClaimedError
			switch {
			case err == nil:
				mu.Lock()
				winners = append(winners, who)
				mu.Unlock()
			case !errors.As(err, &ce):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("winners %v, want exactly one", winners)
	}
}

// TestHelperClaimProcess is the child of TestTwoProcessesClaim: it claims
// from the list in TASKLIST_DIR until none is left and prints its ids.
func TestHelperClaimProcess(t *testing.T) {
	dir := os.Getenv("TASKLIST_HELPER_DIR")
	if dir == "" {
		t.Skip("child of TestTwoProcessesClaim")
	}
	s := open(t, dir)
	who := os.Getenv("TASKLIST_HELPER_WHO")
	for {
		tk, ok, err := s.ClaimNext(context.Background(), who)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
		fmt.Printf("CLAIMED %s\n", tk.ID)
		// A create on every claim of the first 30 widens the window for
		// lost updates (the tasks it makes are claimed in turn).
		if n, _ := strconv.Atoi(tk.ID); n <= 30 {
			if _, err := s.Create(context.Background(), NewTask{Subject: "by " + who}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Update(context.Background(), who, tk.ID, Update{Status: Completed}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTwoProcessesClaim(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	s := open(t, dir)
	for i := range 30 {
		create(t, s, "t"+strconv.Itoa(i))
	}
	type out struct {
		b   []byte
		err error
	}
	outs := make([]out, 3)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperClaimProcess$", "-test.v")
			cmd.Env = append(os.Environ(), "TASKLIST_HELPER_DIR="+dir, "TASKLIST_HELPER_WHO=proc"+strconv.Itoa(i))
			outs[i].b, outs[i].err = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	seen := map[string]int{}
	for i, o := range outs {
		if o.err != nil {
			t.Fatalf("process %d: %v\n%s", i, o.err, o.b)
		}
		for _, line := range strings.Split(string(o.b), "\n") {
			if id, ok := strings.CutPrefix(line, "CLAIMED "); ok {
				seen[id]++
			}
		}
	}
	all, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Every task, the 30 and those the processes made while claiming,
	// claimed once and completed; the ids are 1..n with none lost.
	for i, tk := range all {
		if tk.ID != strconv.Itoa(i+1) {
			t.Fatalf("task %d has id %s: an id was given twice or lost", i+1, tk.ID)
		}
		if seen[tk.ID] != 1 || tk.Status != Completed {
			t.Errorf("task %s claimed %d times, status %s", tk.ID, seen[tk.ID], tk.Status)
		}
	}
	if len(all) != 60 {
		t.Fatalf("%d tasks, want 60 (30 + one per claim of those)", len(all))
	}
}

func TestDamagedFileNamed(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	create(t, s, "a")
	os.WriteFile(filepath.Join(dir, "2.json"), []byte(`{"id":"2","subject":"x","status":"maybe"}`), 0o600)
	_, err := s.List(context.Background())
	if err == nil || !strings.Contains(err.Error(), `task 2: status "maybe"`) {
		t.Fatalf("damaged file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "2.json"), []byte(`{"id":"3","subject":"x","status":"pending"}`), 0o600)
	if _, err := s.List(context.Background()); err == nil || !strings.Contains(err.Error(), `holds id "3"`) {
		t.Fatalf("wrong id: %v", err)
	}
	// Other names in the directory are not tasks.
	os.Remove(filepath.Join(dir, "2.json"))
	os.WriteFile(filepath.Join(dir, "notes.json"), []byte("junk"), 0o600)
	os.WriteFile(filepath.Join(dir, "007.json"), []byte("junk"), 0o600)
	if all, err := s.List(context.Background()); err != nil || len(all) != 1 {
		t.Fatalf("list with other files: %v %v", all, err)
	}
}

func TestListIDAndDir(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := ListID(getenv, "", "0123456789abcdef"); got != "session-01234567" {
		t.Fatalf("session list id %q", got)
	}
	if got := ListID(getenv, "red", "0123"); got != "red" {
		t.Fatalf("team list id %q", got)
	}
	env[EnvClaudeListID] = "claude"
	if got := ListID(getenv, "red", "x"); got != "claude" {
		t.Fatalf("claude env %q", got)
	}
	env[EnvListID] = "mine"
	if got := ListID(getenv, "red", "x"); got != "mine" {
		t.Fatalf("cadre env %q", got)
	}
	if d, err := Dir("/state", "red-team_1.x"); err != nil || d != filepath.Join("/state", "tasks", "red-team_1.x") {
		t.Fatalf("Dir %q %v", d, err)
	}
	for _, bad := range []string{"", "..", ".x", "a/b", "a b", strings.Repeat("a", 129)} {
		if _, err := Dir("/state", bad); err == nil {
			t.Errorf("list id %q accepted", bad)
		}
	}
	if _, err := Dir("", "x"); err == nil {
		t.Error("no state dir accepted")
	}
}

func FuzzParseTask(f *testing.F) {
	f.Add("1", []byte(`{"id":"1","subject":"s","description":"d","status":"pending","blocks":["2"],"blockedBy":[]}`))
	f.Add("12", []byte(`{"id":"12","subject":"s","status":"completed","owner":"a","metadata":{"k":[1,2]}}`))
	f.Add("1", []byte(`{"id":"1"} {}`))
	f.Add("1", []byte(`{"id":"1","status":"in_progress","blocks":["01"]}`))
	f.Fuzz(func(t *testing.T, id string, data []byte) {
		tk, err := ParseTask(id, data)
		if err != nil {
			return
		}
		if tk.ID != id || !ValidID(id) || tk.Blocks == nil || tk.BlockedBy == nil {
			t.Fatalf("accepted %+v for id %q", tk, id)
		}
		for _, l := range append(tk.Blocks, tk.BlockedBy...) {
			if !ValidID(l) {
				t.Fatalf("accepted link %q", l)
			}
		}
		// What was accepted writes back and reads the same.
		b, err := marshal(tk)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseTask(id, b)
		if err != nil || !reflect.DeepEqual(again.clone(), tk.clone()) {
			t.Fatalf("round trip: %+v %v vs %+v", again, err, tk)
		}
	})
}

// TestWatchSeesAnotherStoresChanges: a Store watching its directory wakes
// its waiters when another Store (another process, in life) creates,
// updates or releases a task; a temporary file alone wakes nobody.
func TestWatchSeesAnotherStoresChanges(t *testing.T) {
	dir := t.TempDir()
	mine, theirs := open(t, dir), open(t, dir)
	run, err := mine.Watch()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	for _, change := range []func(){
		func() { create(t, theirs, "from elsewhere") },
		func() { theirs.ClaimNext(context.Background(), "other") },
		func() { theirs.Release(context.Background(), "other") },
		func() { theirs.Delete(context.Background(), "1") },
	} {
		ch := mine.Changed()
		change()
		<-ch // the test's own deadline is the only timeout
	}
	if ok, _ := mine.HasClaimable(context.Background()); ok {
		t.Fatal("deleted task still claimable")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("run ended with %v", err)
	}
}

func TestTaskEventNames(t *testing.T) {
	ev := func(name string) []byte {
		padded := append([]byte(name), make([]byte, 16-len(name)%16)...)
		b := make([]byte, 16, 16+len(padded))
		b[12] = byte(len(padded))
		return append(b, padded...)
	}
	if taskEvent(ev(".1.json.tmp-123")) || taskEvent(ev(".lock")) || taskEvent(ev("01.json")) || taskEvent([]byte{1, 2}) {
		t.Fatal("a non-task file counted")
	}
	if !taskEvent(append(ev(".lock"), ev("12.json")...)) {
		t.Fatal("a task file in a batch not seen")
	}
	// A length past the buffer is not read.
	bad := ev("1.json")
	bad[12] = 200
	if taskEvent(bad) {
		t.Fatal("event past the buffer")
	}
}
