// A Claude Agent SDK (TypeScript) program as a Claude Code user writes
// one, run on cadre for internal/cli's TestClaudeAgentSDKOptions: bypass
// mode allowed and on, a JSON schema for the answer (outputFormat), the
// settings sources, a budget, a tool set and an effort; then a second
// query that resumes the first session into a fork. Every message query()
// yields, and every callback, is printed as one JSON line, tagged with the
// query it belongs to.
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const sdkDir = process.env.CADRE_SDK_DIR;
const { query } = await import(pathToFileURL(path.join(sdkDir, 'node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs')).href);

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

const schema = {
  type: 'object',
  properties: {
    summary: { type: 'string' },
    files: { type: 'array', items: { type: 'string' } },
  },
  required: ['summary', 'files'],
  additionalProperties: false,
};

const base = (name) => ({
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
  permissionMode: 'bypassPermissions',
  allowDangerouslySkipPermissions: true,
  outputFormat: { type: 'json_schema', schema },
  settingSources: ['project'], // the test's user settings deny Grep, the project's Read
  maxBudgetUsd: 5,
  tools: ['Read', 'Bash', 'Grep'],
  effort: 'high',
  stderr: (data) => out({ query: name, callback: 'stderr', data }),
  // Bypass mode asks nobody; a call here would be a failure of the test.
  canUseTool: async (toolName, input) => {
    out({ query: name, callback: 'canUseTool', toolName, input });
    return { behavior: 'deny', message: 'bypass mode should not ask' };
  },
});

let sessionId;
for await (const m of query({ prompt: 'SDK-OPTS: make a file and report as JSON', options: base('first') })) {
  out({ query: 'first', message: m });
  if (m.type === 'result') sessionId = m.session_id;
}
if (!sessionId) throw new Error('the first query gave no result');

const forked = { ...base('fork'), resume: sessionId, forkSession: true };
for await (const m of query({ prompt: 'SDK-OPTS-FORK: report again', options: forked })) {
  out({ query: 'fork', message: m });
}
out({ callback: 'done' });
