#!/usr/bin/env node
// cordon through the official TypeScript SDK v1 (@modelcontextprotocol/sdk),
// a 2025-era client: elicitation arrives as a server-initiated
// elicitation/create request.
//
//   node sdk-v1.mjs --cordon BIN --workspace DIR --state-dir DIR --transport stdio|http [-- SERVE_ARGS...]

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

import { Human, Reporter, childEnv, parseCommandLine, releaseSockets, runChecks, startHTTP, watchdog } from './lib.mjs';

const opts = parseCommandLine();
const rep = new Reporter({ sdk: '@modelcontextprotocol/sdk', transport: opts.transport });
const human = new Human();
watchdog(rep);

// Tap forwards a transport and keeps the initialize result, which the v1
// Client does not expose, to report the negotiated protocol revision.
class Tap {
    constructor(inner) {
        this.inner = inner;
        this.protocolVersion = undefined;
        inner.onmessage = (msg, extra) => {
            if (msg?.result?.protocolVersion && !this.protocolVersion) this.protocolVersion = msg.result.protocolVersion;
            this.onmessage?.(msg, extra);
        };
        inner.onerror = err => this.onerror?.(err);
        inner.onclose = () => this.onclose?.();
    }
    start() {
        return this.inner.start();
    }
    send(msg, o) {
        return this.inner.send(msg, o);
    }
    close() {
        return this.inner.close();
    }
    get sessionId() {
        return this.inner.sessionId;
    }
    setProtocolVersion(v) {
        this.inner.setProtocolVersion?.(v);
    }
}

async function connect(args) {
    const client = new Client({ name: 'cordon-interop-sdk-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async req => human.handle(req.params));
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
    const tap = new Tap(transport);
    try {
        await client.connect(tap);
    } catch (err) {
        await server?.stop();
        throw err;
    }
    const close = async () => {
        if (opts.transport === 'http') await transport.terminateSession().catch(() => {});
        await client.close();
        if (server) {
            await releaseSockets();
            await server.stop();
        }
    };
    if (tap.protocolVersion !== LATEST_PROTOCOL_VERSION) {
        await close();
        throw new Error(`negotiated protocol revision ${tap.protocolVersion}, want the SDK's latest, ${LATEST_PROTOCOL_VERSION}`);
    }
    return {
        client,
        argv: [opts.cordon, ...args],
        protocolVersion: tap.protocolVersion,
        close
    };
}

await runChecks(opts, rep, human, connect);
rep.finish();
