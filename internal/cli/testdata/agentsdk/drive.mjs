// Drives cadre with the real Claude Agent SDK (TypeScript) for
// internal/cli's SDK test: one scenario per run, named by argv[2]. Every
// message query() yields, and every callback the SDK makes, is printed as
// one JSON line, so the Go test can check them.
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [scenario] = process.argv.slice(2);
const sdkDir = process.env.CADRE_SDK_DIR;
const { query } = await import(pathToFileURL(path.join(sdkDir, 'node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs')).href);

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

const options = {
  pathToClaudeCodeExecutable: process.env.CADRE_EXE,
  cwd: process.env.CADRE_WORK,
  model: 'sonnet',
  env: {
    CADRE_TEST_MAIN: '1',
    PATH: process.env.PATH,
    HOME: process.env.CADRE_HOME,
    XDG_STATE_HOME: path.join(process.env.CADRE_HOME, 'state'),
    ANTHROPIC_BASE_URL: process.env.CADRE_BASE_URL,
    ANTHROPIC_API_KEY: 'sdk-test-key',
  },
  stderr: (data) => out({ callback: 'stderr', data }),
};

let prompt;
switch (scenario) {
  case 'query':
    prompt = 'SDK-QUERY: say hello';
    break;
  case 'canUseTool':
    prompt = 'SDK-BASH: make a file';
    options.canUseTool = async (toolName, input, opts) => {
      out({ callback: 'canUseTool', toolName, input, suggestions: opts.suggestions, toolUseID: opts.toolUseID });
      return { behavior: 'deny', message: 'SDK-DENIED: the test program says no' };
    };
    break;
  case 'interrupt':
    prompt = 'SDK-SLOW: take your time';
    break;
  case 'agents':
    prompt = 'SDK-AGENTS: ask the reviewer';
    options.agents = {
      reviewer: { description: 'Reviews a change for the test.', prompt: 'You review changes.', tools: ['Read', 'Grep'] },
    };
    break;
  case 'hooks':
    prompt = 'SDK-HOOKS: run two commands';
    options.includeHookEvents = true;
    options.hooks = {
      PreToolUse: [{
        matcher: 'Bash',
        hooks: [async (input, toolUseID) => {
          out({ callback: 'hook', input, toolUseID });
          if (input.tool_input.command.includes('forbidden')) {
            return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'SDK-HOOK: not this one' } };
          }
          return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'fine' } };
        }],
      }],
      Stop: [{ hooks: [async (input) => { out({ callback: 'hook', input }); return {}; }] }],
    };
    break;
  default:
    throw new Error('unknown scenario ' + scenario);
}

const q = query({ prompt, options });
for await (const m of q) {
  out({ message: m });
  if (scenario === 'interrupt' && m.type === 'system' && m.subtype === 'init') {
    await q.interrupt();
    out({ callback: 'interrupted' });
  }
}
out({ callback: 'done' });
