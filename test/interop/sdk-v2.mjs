#!/usr/bin/env node
// cordon through the official TypeScript SDK v2 (@modelcontextprotocol/client),
// on either protocol era: 2025-11-25 (the plain initialize handshake;
// elicitation is a server-initiated elicitation/create request) or
// 2026-07-28 (pinned: server/discover, stateless requests; elicitation
// comes back as an input_required result that the client fulfils through
// the same handler and retries).
//
//   node sdk-v2.mjs --cordon BIN --workspace DIR --state-dir DIR --transport stdio|http --era 2025-11-25|2026-07-28 [-- SERVE_ARGS...]

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { Human, Reporter, childEnv, parseCommandLine, releaseSockets, runChecks, startHTTP, watchdog } from './lib.mjs';

const ERAS = ['2025-11-25', '2026-07-28'];

const opts = parseCommandLine({ era: true });
if (!ERAS.includes(opts.era)) {
    console.error(`--era must be one of ${ERAS.join(', ')}`);
    process.exit(2);
}
const rep = new Reporter({ sdk: '@modelcontextprotocol/client', transport: opts.transport, era: opts.era });
const human = new Human();
watchdog(rep);

async function connect(args) {
    const modern = opts.era !== '2025-11-25';
    const client = new Client(
        { name: 'cordon-interop-sdk-v2', version: '2.0.0' },
        {
            capabilities: { elicitation: { form: {} } },
            versionNegotiation: modern ? { mode: { pin: opts.era } } : { mode: 'legacy' }
        }
    );
    client.setRequestHandler('elicitation/create', async req => human.handle(req.params));
    let server;
    let transport;
    if (opts.transport === 'http') {
        args = [...args, '--http', '127.0.0.1:0'];
        server = await startHTTP(opts, args);
        transport = new StreamableHTTPClientTransport(server.url, {
            requestInit: { headers: { Authorization: `Bearer ${server.token}` } }
        });
    } else {
        transport = new StdioClientTransport({ command: opts.cordon, args, env: childEnv(), stderr: 'inherit' });
    }
    try {
        await client.connect(transport);
    } catch (err) {
        await server?.stop();
        throw err;
    }
    const close = async () => {
        if (opts.transport === 'http' && !modern) await transport.terminateSession().catch(() => {});
        await client.close();
        if (server) {
            await releaseSockets();
            await server.stop();
        }
    };
    const protocolVersion = client.getNegotiatedProtocolVersion();
    if (protocolVersion !== opts.era) {
        await close();
        throw new Error(`negotiated protocol revision ${protocolVersion}, want ${opts.era}`);
    }
    return { client, argv: [opts.cordon, ...args], protocolVersion, close };
}

await runChecks(opts, rep, human, connect);
rep.finish();
