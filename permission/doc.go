package permission

// How decisions are made (the details behind the package comment).
//
// Check is pure apart from resolving symlinks on the file system. It takes
// the first of these that applies:
//
//  1. A tool name that differs from a built-in tool only by case is denied
//     (names are case-sensitive; a case trick never yields an allow).
//  2. A deny rule matches → deny, naming the rule and its source. Deny rules
//     hold in every mode, bypassPermissions included. For Bash a deny rule
//     matches when it *may* match: a word only known when the shell runs
//     (`$CMD`, `$(…)`, a glob) matches anything, and `/bin/rm` is `rm`.
//  3. Plan mode, or a read-only agent (Config.ReadOnly) in any mode, and
//     a call that may write (Write/Edit, Bash that is not read-only, an
//     MCP or custom tool that does not claim read-only) → deny, even with
//     an allow rule.
//  4. A call that cannot be analysed → ask. Bash that does not parse and
//     input that is not a JSON object ask in every mode, bypassPermissions
//     included; Bash that parses but has parts only known when it runs (a
//     command name from a variable, `bash -c "$x"`, arithmetic on
//     variables, an assignment to PATH/LD_*/…) asks in every mode except
//     bypassPermissions without Bash or path deny/ask rules, where it
//     could not get around anything.
//  5. Bash that may read a path a Read deny rule protects, or write one an
//     Edit deny rule protects, without naming it → ask, in every mode,
//     bypassPermissions included (see "Deny rules bind Bash" below).
//  6. An ask rule matches → ask (also in bypassPermissions: an explicit ask
//     rule is the user's choice).
//  7. bypassPermissions → allow.
//  8. Allow rules: for Bash every simple command must be allowed by a rule
//     or be a read-only command on paths inside the working directories,
//     and every output redirection must target the working directories or
//     a path an Edit allow rule covers.
//  9. The mode: read-only calls inside the working directories run in
//     every mode; acceptEdits also runs file edits inside them, and Bash
//     whose only writes are redirections or mkdir/touch/cp/mv/rmdir on
//     paths inside them (Edit deny and ask rules bind those paths in every
//     mode); Agent, BashOutput, KillShell,
//     TodoWrite, SendMessage, TaskStop, ListAgents need no approval.
//     Writes into .git, .cadre or .claude (outside .cadre/worktrees and the
//     agent-memory directories), to .mcp.json, CLAUDE.md, CLAUDE.local.md
//     and AGENTS.md at a working directory's root, and to the user's
//     ~/.claude, ~/.claude.json and ~/.config/cadre are never allowed by a
//     mode or a whole-tool rule — Write, Edit, MultiEdit, NotebookEdit and
//     Bash (a redirection, or a path word of a command that is not
//     read-only) alike — only by an Edit rule that names the path or by
//     bypassPermissions: they could grant permissions or run code later
//     (settings, agents, hooks, MCP servers, memory files).
//  10. Otherwise ask. dontAsk (and any checker with NoPrompt) turns every
//     ask into a deny.
//
// Bash is split with mvdan.cc/sh/v3/syntax. Every simple command anywhere is
// checked: lists, pipes, `&`, newlines, subshells, blocks, functions,
// if/for/while/case bodies, `$(…)`, backticks, `<(…)`/`>(…)`, here-documents,
// `bash -c`/`sh -c`/`eval`/`trap`/`watch` strings (parsed recursively, at
// most six levels), `xargs`/`parallel`/`sudo`/`find -exec` (both the outer
// and the inner command are checked), and harmless wrappers (timeout, nice,
// nohup, stdbuf, env, command, exec, builtin, time, setsid) are stripped.
// A shell (or `source`, `at`, `sudo -s`, …) reading its commands from its
// input gets its here-document or here-string parsed when it is literal;
// wrappers that run their arguments (flock, script -c, chroot, setpriv,
// unshare, nsenter, busybox, taskset, strace, …) are followed; `git -c
// alias.x=…` runs its alias, and deny and ask rules also see a git command
// without its global options (`git -C d push` is `git push`); an alias
// defined in the line runs its text. What is not literal — a shell fed by
// a pipe or a process substitution, `source <(…)`, an interpreter's inline
// code, an awk program calling system(), sed's e, a file the line writes
// and then runs, a `git -c` key that can run a command — is opaque: under
// a Bash deny or ask rule it is asked for in every mode (denied where no
// one can ask), as is a program not known to run nothing whose words name
// a denied command or hold a command line that does, and a script file the
// command runs (bash FILE, source FILE, ./FILE) whose text names one
// (hidden.go). Options that name a file (`--x=PATH`, `-fPATH`, `@PATH`)
// are path words like any other.
// Quote removal and `$'…'` escapes are applied before matching. Relative
// paths are checked against every directory the line may be in: the cwd and
// each literal cd/pushd target (which must be inside the working
// directories for anything to run without a rule); a cd to a target not
// known in advance makes relative reads and writes need approval.
//
// Rule content: `Bash(npm test:*)` is a prefix on whole words; `Bash(git *)`
// is a glob where `*` spans spaces (and `git *` also matches bare `git`);
// other Bash content is an exact command, compared word by word. Path rules
// are gitignore-style: `//abs` absolute, `~/x` under home, `/x`, `./x` and
// `x/y` anchored at the rule's base (the project root for project settings
// files, the request's cwd for flags), a bare `x` at any depth, a trailing
// `/` for a whole directory; a rule on a directory covers what is inside.
// Edit rules cover Write, MultiEdit and NotebookEdit; Read rules cover Glob,
// Grep and LS. Deny and ask path rules match the lexical or the
// symlink-resolved path; allow rules and the working-directory test use the
// resolved path, so `../` and symlinks cannot escape. Read deny rules also
// bind Bash (see below). `Agent(Type)` matches
// subagent_type (omitted = general-purpose); `Task` is an alias of `Agent`.
// What a content rule matches is the subject the tool declares
// (tool.Subject, through tool.SubjectDeclarer): the paths it touches, a
// command, a URL, an agent type. An embedder's tool that declares paths
// gets path rules of its own (`MyTool(./src/**)`: any declared path for
// deny and ask, every one for allow); one that declares content gets
// rules where `*` spans any run of characters (`MyTool(deploy staging*)`).
// Content on a tool that declares no subject: deny and ask rules bind the
// whole tool, allow rules never match (with a warning for cadre's own
// tools).
// An MCP server tool declares the server it goes to: `mcp__server` and
// `mcp__server__*` rules are compared with it, so a server named
// `my__srv` is not read as `my` (by name alone it would be).
//
// Rule names: a deny or ask rule whose tool name is not in the tool
// registry (tool.Known) or Config.Tools is an error (NewChecker fails, with
// a did-you-mean): `Bsh(rm:*)` would protect nothing. An allow rule with an
// unknown name allows nothing and is a warning. MCP names are checked once
// the servers are known (CheckMCPRuleNames).
//
// Deny rules bind Bash (S-10.5). A path word cadre can resolve — after
// quote removal, `~`, `~+` and cd — is matched against Read deny rules
// (every word of a command that reads files; a glob is expanded against the
// file system first) and Edit deny rules (redirections, mkdir, touch, cp,
// mv, rmdir): a match denies. A command that may reach a protected path
// without naming it is asked for in every mode: a word only known when the
// shell runs (`$F`, `$PWD`, `~-`, `$(…)`), a cd to a place not known in
// advance, a recursive reader over a tree holding a protected path (grep
// -r, rg, find, ls -R, tree, diff -r, cp -r), a git command that prints
// file contents from a repository holding one (show, diff, grep, log -p,
// cat-file, archive, and every subcommand not known to print none), code
// given inline to an interpreter (python -c, node -e, awk and sed
// programs, a shell reading its input), and any program cadre does not
// know — unless a Bash allow rule with content names it (the user vouched
// for the program; the words it is given are still checked). When no one
// can be asked this is a denial whose reason names the sandbox: with
// Config.Sandbox set, Bash runs in the OS sandbox with the paths
// SandboxMasks returns masked, so such commands are decided as if no Read
// deny rule existed (and no Edit deny rule, where the sandbox can hold
// them all). Rules on a whole tool (`Read`) say nothing about Bash.
//
// Known limits: a Glob or Grep over a directory that contains a denied path
// is decided by the search directory only (the tool should drop results
// for which Checker.PathDenied reports a rule); Bash deny rules compare words, so `Bash(rm -rf:*)` does not catch
// `rm -r -f` (deny the command name instead); `git status` and friends are
// read-only only as far as the repository's own config is trusted;
// without the sandbox, `grep -R` and `rg -L` follow symbolic links inside a
// searched tree that may point at a protected path elsewhere. A Bash deny
// rule sees what the line and the script files it runs directly say: a
// program that runs a denied command from its own code or configuration
// (a Makefile, an npm script, a compiled program, a script called by a
// script) is not seen; the OS sandbox is the boundary there.
