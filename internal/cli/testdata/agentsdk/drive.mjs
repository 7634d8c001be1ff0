// Drives cadre with the real Claude Agent SDK (TypeScript) for
// internal/cli's SDK test: one scenario per run, named by argv[2]. Every
// message query() yields, and every callback the SDK makes, is printed as
// one JSON line, so the Go test can check them.
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [scenario] = process.argv.slice(2);
const sdkDir = process.env.CADRE_SDK_DIR;
const { query, createSdkMcpServer, tool } = await import(pathToFileURL(path.join(sdkDir, 'node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs')).href);

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
let onResult = () => {};
let q;
switch (scenario) {
  case 'query':
    prompt = 'SDK-QUERY: say hello';
    break;
  case 'resume':
    // Resumes the session CADRE_RESUME names (crash_test.go: one killed
    // in the middle of a tool call).
    prompt = 'go on';
    options.resume = process.env.CADRE_RESUME;
    break;
  case 'canUseTool':
    prompt = 'SDK-BASH: make a file';
    options.canUseTool = async (toolName, input, opts) => {
      out({ callback: 'canUseTool', toolName, input, suggestions: opts.suggestions, toolUseID: opts.toolUseID });
      return { behavior: 'deny', message: 'SDK-DENIED: the test program says no' };
    };
    break;
  case 'allowAlways':
    // An allow that rewrites the input and grants the suggested rule for
    // the session: the next call the rule covers is not asked about.
    prompt = 'SDK-ALLOW: make two files';
    options.canUseTool = async (toolName, input, opts) => {
      out({ callback: 'canUseTool', toolName, input, suggestions: opts.suggestions });
      return { behavior: 'allow', updatedInput: { ...input, command: 'touch rewritten.txt' }, updatedPermissions: opts.suggestions };
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
  case 'mcp': {
    const { z } = await import(pathToFileURL(path.join(sdkDir, 'node_modules/zod/index.js')).href);
    prompt = 'SDK-MCP: add two numbers';
    options.mcpServers = {
      calc: createSdkMcpServer({ name: 'calc', version: '1.0.0', tools: [
        tool('add', 'Adds two numbers.', { a: z.number(), b: z.number() }, async ({ a, b }) => {
          out({ callback: 'mcpTool', input: { a, b } });
          return { content: [{ type: 'text', text: 'SUM=' + (a + b) }] };
        }),
      ] }),
    };
    // The in-process server is announced in initialize only (cadre's
    // --mcp-config comes with the MCP issue).
    options.mcpServersViaInitialize = true;
    options.canUseTool = async (toolName, input) => {
      out({ callback: 'canUseTool', toolName, input });
      return { behavior: 'allow', updatedInput: input };
    };
    break;
  }
  case 'controls': {
    // Streaming input: two turns, and between them the program changes
    // the permission mode and the model.
    options.canUseTool = async (toolName, input) => {
      out({ callback: 'canUseTool', toolName, input });
      return { behavior: 'deny', message: 'SDK-DENIED: not in default mode' };
    };
    let next;
    const turnDone = () => new Promise((resolve) => { next = resolve; });
    const user = (text) => ({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' });
    prompt = (async function* () {
      let done = turnDone();
      yield user('SDK-CTL-1: write the file');
      await done;
      await q.setPermissionMode('acceptEdits');
      out({ callback: 'setPermissionMode' });
      await q.setModel('haiku');
      out({ callback: 'setModel' });
      done = turnDone();
      yield user('SDK-CTL-2: write it again');
      await done;
    })();
    onResult = () => next();
    break;
  }
  case 'mcp-config': {
    // An in-process MCP server (createSdkMcpServer) the SDK announces
    // the default way, with --mcp-config type "sdk": cadre reaches it
    // through mcp_message control requests.
    const { z } = await import(pathToFileURL(path.join(sdkDir, 'node_modules/zod/index.js')).href);
    prompt = 'SDK-MCP: add the numbers';
    options.permissionMode = 'bypassPermissions';
    options.mcpServers = {
      calc: createSdkMcpServer({
        name: 'calc',
        version: '1.0.0',
        tools: [
          tool('add', 'Adds two numbers', { a: z.number(), b: z.number() }, async ({ a, b }) => {
            out({ callback: 'add', input: { a, b } });
            return { content: [{ type: 'text', text: `SUM=${a + b}` }] };
          }),
        ],
      }),
    };
    break;
  }
  case 'background':
    // A single-prompt query whose sub-agent runs in the background and
    // calls Bash after the main turn's result: the SDK's hook callback
    // must still be answered (the SDK keeps its input open until cadre
    // says the session is idle), and the main agent's answer to the
    // child's notification reaches query() as a second result.
    prompt = 'SDK-BG: start a job';
    options.hooks = {
      PreToolUse: [{
        matcher: 'Bash',
        hooks: [async (input) => {
          out({ callback: 'hook', input });
          return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'SDK-BG-HOOK: not from the background' } };
        }],
      }],
    };
    break;
  case 'background-plain':
    // The same without callbacks: the SDK closes cadre's input right
    // after the first result, and cadre goes on until nothing runs.
    prompt = 'SDK-BG: start a job';
    break;
  case 'teammate':
    // Agent teams on: the lead starts a teammate whose Bash call asks;
    // the SDK's canUseTool answers it, and what it was told (the
    // teammate's agentID among it) is printed for the Go test.
    prompt = 'SDK-LEAD: start a teammate';
    options.env.CADRE_AGENT_TEAMS = '1';
    options.canUseTool = async (toolName, input, opts) => {
      out({ callback: 'canUseTool', toolName, input, toolUseID: opts.toolUseID, agentID: opts.agentID });
      return { behavior: 'allow', updatedInput: input };
    };
    break;
  default:
    throw new Error('unknown scenario ' + scenario);
}

q = query({ prompt, options });
for await (const m of q) {
  out({ message: m });
  if (m.type === 'result') onResult();
  if (scenario === 'interrupt' && m.type === 'system' && m.subtype === 'init') {
    await q.interrupt();
    out({ callback: 'interrupted' });
  }
}
out({ callback: 'done' });
