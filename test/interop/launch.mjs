// launch.mjs drives an installed cordon the way a user's MCP client would:
// it starts COMMAND ARGS... over stdio with the official TypeScript SDK's
// Client (initialize), lists the tools and has bash write one file inside
// the workspace and one outside it. The packaging tests run it through
// `npx cordon serve` (npm tarballs) and the command of a .mcpb manifest.
//
//   node launch.mjs --workspace DIR --outside FILE [--cwd DIR] -- COMMAND ARGS...
//
// Exit 0 when cordon answered, listed every tool, wrote inside and was
// refused outside (FILE must not exist afterwards); 1 otherwise.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { TOOLS, childEnv } from './lib.mjs';

const { values, positionals } = parseArgs({
    options: { workspace: { type: 'string' }, outside: { type: 'string' }, cwd: { type: 'string' } },
    allowPositionals: true
});
if (!values.workspace || !values.outside || positionals.length === 0) {
    console.error('usage: node launch.mjs --workspace DIR --outside FILE [--cwd DIR] -- COMMAND ARGS...');
    process.exit(2);
}
const fail = msg => {
    console.error(`launch: ${msg}`);
    process.exit(1);
};
// A hung server must fail the test, not the CI run.
setTimeout(() => fail('no answer within 120 s'), 120_000).unref();

const [command, ...args] = positionals;
const transport = new StdioClientTransport({ command, args, cwd: values.cwd, env: childEnv(), stderr: 'inherit' });
const client = new Client({ name: 'cordon-packaging-test', version: '1.0.0' });
await client.connect(transport);
const server = client.getServerVersion();
if (server?.name !== 'cordon') fail(`initialize named the server ${JSON.stringify(server)}`);

const { tools } = await client.listTools();
const names = tools.map(t => t.name);
const missing = TOOLS.filter(t => !names.includes(t));
if (missing.length) fail(`tools/list lacks ${missing.join(', ')} (got ${names.join(', ')})`);

const command_ = `echo packaged > inside.txt && cat inside.txt; echo escaped > '${values.outside}'`;
const result = await client.callTool({ name: 'bash', arguments: { command: command_ } });
const text = result.content.filter(c => c.type === 'text').map(c => c.text).join('\n');
await client.close();

const inside = join(values.workspace, 'inside.txt');
if (!existsSync(inside) || readFileSync(inside, 'utf8') !== 'packaged\n') fail(`bash did not write ${inside}: ${text}`);
if (!text.includes('packaged')) fail(`bash output lacks the file's text: ${text}`);
if (existsSync(values.outside)) fail(`a write outside the workspace landed: ${values.outside}`);
console.log(`launch: ${server.name} ${server.version}: ${names.length} tools, bash wrote inside, refused outside`);
