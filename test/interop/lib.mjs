// Shared by sdk-v1.mjs and sdk-v2.mjs: the command line, starting cordon
// over HTTP, the elicitation "human", and the checks. Each SDK script only
// supplies how to connect; everything asserted here goes through the
// official SDK's own Client (listTools, callTool, its elicitation handler).
//
// Output: one JSON line per check on stdout, {"check", "ok", ...detail};
// cordon's stderr and this script's diagnostics go to stderr. The process
// exits 1 when any check failed.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

export const TOOLS = ['bash', 'process_output', 'process_input', 'process_kill', 'process_list', 'read_file', 'write_file', 'edit_file', 'list_directory', 'glob', 'grep', 'sandbox_status'];
export const DENIED_MARKER = '[sandbox: file access denied under read-only mode]';

// The files the checks leave behind (or must not), relative to the
// workspace; the Go test looks at the same names on disk.
export const FILES = {
    written: 'interop/hello.txt', // write_file, then edit_file: "alpha\ngamma\n"
    readOnly: 'denied.txt', // write_file under read-only: must stay absent
    approved: 'approved.txt', // escalation, allow_once: lands
    refused: 'refused.txt' // escalation, deny: must stay absent
};

/**
 * parseCommandLine reads
 *   --cordon BIN --workspace DIR --state-dir DIR --transport stdio|http [--era V] [-- EXTRA_SERVE_ARGS...]
 * EXTRA_SERVE_ARGS go after `serve --workspace DIR --state-dir DIR`.
 */
export function parseCommandLine({ era = false } = {}) {
    const options = {
        cordon: { type: 'string' },
        workspace: { type: 'string' },
        'state-dir': { type: 'string' },
        transport: { type: 'string', default: 'stdio' }
    };
    if (era) options.era = { type: 'string', default: '2025-11-25' };
    const { values, positionals } = parseArgs({ options, allowPositionals: true });
    const usage = `usage: node ${process.argv[1]} --cordon BIN --workspace DIR --state-dir DIR --transport stdio|http${era ? ' --era 2025-11-25|2026-07-28' : ''} [-- SERVE_ARGS...]`;
    for (const k of ['cordon', 'workspace', 'state-dir']) {
        if (!values[k]) {
            console.error(usage);
            process.exit(2);
        }
    }
    if (!['stdio', 'http'].includes(values.transport)) {
        console.error(usage);
        process.exit(2);
    }
    return {
        cordon: values.cordon,
        workspace: values.workspace,
        stateDir: values['state-dir'],
        transport: values.transport,
        era: values.era,
        extra: positionals
    };
}

/** serveArgs is cordon's argv after the binary, in the Go harness's order. */
export function serveArgs(opts, ...more) {
    return ['serve', '--workspace', opts.workspace, '--state-dir', opts.stateDir, ...opts.extra, ...more];
}

/** env is cordon's environment: all of ours (the SDKs' default drops most of it). */
export function childEnv() {
    return Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined));
}

/**
 * startHTTP spawns `cordon serve --http 127.0.0.1:0`, waits for the JSON log
 * line carrying "addr", and reads the bearer token from <state-dir>/http-token
 * (or CORDON_HTTP_TOKEN, which makes cordon skip the file).
 */
export async function startHTTP(opts, args) {
    const child = spawn(opts.cordon, args, { env: childEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise(resolve => child.once('exit', (code, signal) => resolve({ code, signal })));
    // A script that ends early (a failed step, the watchdog) leaves no server behind.
    const reap = () => child.kill('SIGKILL');
    process.once('exit', reap);
    exited.then(() => process.off('exit', reap));
    const addr = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('cordon serve --http logged no address within 20s')), 20000);
        let found = false;
        createInterface({ input: child.stderr }).on('line', line => {
            process.stderr.write(`cordon: ${line}\n`);
            if (found) return;
            try {
                const rec = JSON.parse(line);
                if (typeof rec.addr === 'string' && rec.addr) {
                    found = true;
                    clearTimeout(timer);
                    resolve(rec.addr);
                }
            } catch {
                // not JSON: a console-format log line; keep reading
            }
        });
        exited.then(({ code, signal }) => {
            clearTimeout(timer);
            if (!found) reject(new Error(`cordon serve --http exited (code ${code}, signal ${signal}) before listening`));
        });
    });
    const token = process.env.CORDON_HTTP_TOKEN || readFileSync(join(opts.stateDir, 'http-token'), 'utf8').trim();
    return {
        url: new URL(`http://${addr}/mcp`),
        token,
        async stop() {
            if (child.exitCode !== null || child.signalCode !== null) return;
            child.kill('SIGTERM');
            const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
            await exited;
            clearTimeout(kill);
        }
    };
}

/**
 * releaseSockets closes every socket Node's fetch still holds and installs a
 * fresh dispatcher, so that a later SIGTERM finds no client connection open.
 * Why: undici (Node's fetch) at times keeps a connection it has opened but
 * never written to, and Go's http.Server.Shutdown counts such a connection
 * as active for its first 5 s, so cordon's graceful shutdown then took ~4 s
 * (in about one HTTP run in five). The symbol is the one undici's own
 * setGlobalDispatcher/getGlobalDispatcher use.
 */
export async function releaseSockets() {
    const key = Symbol.for('undici.globalDispatcher.1');
    const old = globalThis[key];
    if (!old || typeof old.destroy !== 'function') return;
    globalThis[key] = new old.constructor();
    await old.destroy();
}

/** Reporter prints one JSON line per check and remembers failures. */
export class Reporter {
    constructor(base) {
        this.base = base;
        this.failed = 0;
    }
    check(name, ok, detail = {}) {
        if (!ok) this.failed++;
        process.stdout.write(JSON.stringify({ check: name, ok: !!ok, ...this.base, ...detail }) + '\n');
        return !!ok;
    }
    /** step runs fn; a throw is a failed check named `name`. */
    async step(name, fn) {
        try {
            return await fn();
        } catch (err) {
            this.check(name, false, { error: String(err && err.stack ? err.stack : err) });
            return undefined;
        }
    }
    finish() {
        process.stdout.write(JSON.stringify({ check: 'summary', ok: this.failed === 0, failed: this.failed, ...this.base }) + '\n');
        process.exit(this.failed === 0 ? 0 : 1);
    }
}

/**
 * Human answers elicitations with the decision set before each call, and
 * remembers what it was asked. SDK-agnostic: each script adapts handle() to
 * its SDK's request-handler signature.
 */
export class Human {
    constructor() {
        this.decision = null;
        this.asked = [];
    }
    handle(params) {
        this.asked.push(params);
        if (!this.decision) return { action: 'decline' }; // nobody expected a question
        return { action: 'accept', content: { decision: this.decision } };
    }
}

function textOf(res) {
    return (res?.content ?? [])
        .filter(c => c.type === 'text')
        .map(c => c.text)
        .join('\n');
}

function brief(s, n = 300) {
    return s.length > n ? s.slice(0, n) + '…' : s;
}

/**
 * runChecks drives both sessions: a default one (review preset:
 * workspace-write) for the eight tools, then one under --mode read-only for
 * the denial and the two escalations. connect(args) returns
 * { client, protocolVersion, close() }.
 */
export async function runChecks(opts, rep, human, connect) {
    const ws = opts.workspace;
    const call = (client, name, args = {}) => client.callTool({ name, arguments: args });

    // --- session 1: the eight tools
    const s1 = await rep.step('connect', async () => {
        const s = await connect(serveArgs(opts));
        rep.check('connect', true, { protocolVersion: s.protocolVersion, argv: s.argv });
        return s;
    });
    if (!s1) return;
    try {
        const c = s1.client;
        await rep.step('tools/list', async () => {
            const { tools } = await c.listTools();
            const names = tools.map(t => t.name).sort();
            rep.check('tools/list', JSON.stringify(names) === JSON.stringify([...TOOLS].sort()), { tools: names });
        });
        await rep.step('bash', async () => {
            const res = await call(c, 'bash', { command: 'echo interop-$((40+2))' });
            const out = res.structuredContent?.output ?? '';
            rep.check('bash', !res.isError && out.includes('interop-42') && res.structuredContent?.exit_code === 0, {
                text: brief(textOf(res))
            });
        });
        await rep.step('write_file', async () => {
            const res = await call(c, 'write_file', { path: FILES.written, content: 'alpha\nbeta\n' });
            const ok = !res.isError && res.structuredContent?.created === true && res.structuredContent?.bytes_written === 11;
            rep.check('write_file', ok && readFileSync(join(ws, FILES.written), 'utf8') === 'alpha\nbeta\n', {
                text: brief(textOf(res))
            });
        });
        await rep.step('read_file', async () => {
            const res = await call(c, 'read_file', { path: FILES.written });
            const t = textOf(res);
            // Text only: a header line, then the numbered lines verbatim.
            const want = `[${join(ws, FILES.written)}: lines 1-2 of 2]\n     1\talpha\n     2\tbeta\n`;
            rep.check('read_file', !res.isError && t === want && res.structuredContent === undefined, {
                text: brief(t)
            });
        });
        await rep.step('edit_file', async () => {
            const res = await call(c, 'edit_file', { path: FILES.written, old_string: 'beta', new_string: 'gamma' });
            const t = textOf(res);
            rep.check(
                'edit_file',
                !res.isError && t.includes('-beta') && t.includes('+gamma') && res.structuredContent?.replacements === 1 &&
                    res.structuredContent?.diff === t &&
                    readFileSync(join(ws, FILES.written), 'utf8') === 'alpha\ngamma\n',
                { text: brief(t) }
            );
        });
        await rep.step('list_directory', async () => {
            const res = await call(c, 'list_directory', { path: '.', depth: 2 });
            const t = textOf(res);
            rep.check('list_directory', !res.isError && t.includes('hello.txt'), { text: brief(t) });
        });
        await rep.step('glob', async () => {
            const res = await call(c, 'glob', { pattern: '**/*.txt' });
            const t = textOf(res);
            rep.check('glob', !res.isError && t.includes(FILES.written), { text: brief(t) });
        });
        await rep.step('grep', async () => {
            const res = await call(c, 'grep', { pattern: 'gam+a' });
            const t = textOf(res);
            rep.check('grep', !res.isError && t.includes(`${FILES.written}:2:gamma`), { text: brief(t) });
        });
        await rep.step('sandbox_status', async () => {
            const res = await call(c, 'sandbox_status');
            const st = res.structuredContent ?? {};
            rep.check('sandbox_status', !res.isError && st.mode === 'workspace-write' && typeof st.backend === 'string', {
                mode: st.mode,
                backend: st.backend,
                enforcement: st.enforcement
            });
        });
        rep.check('no elicitation in the default session', human.asked.length === 0, { asked: human.asked.length });
    } finally {
        await s1.close();
    }

    // --- session 2: read-only, denial and escalation
    const s2 = await rep.step('connect read-only', async () => {
        const s = await connect(serveArgs(opts, '--mode', 'read-only'));
        rep.check('connect read-only', true, { protocolVersion: s.protocolVersion, argv: s.argv });
        return s;
    });
    if (!s2) return;
    try {
        const c = s2.client;
        const escalate = (path, content) => ({
            path,
            content,
            sandbox_permissions: 'workspace-write',
            justification: 'the interop test needs this one file'
        });

        await rep.step('denied', async () => {
            human.decision = null;
            const before = human.asked.length;
            const res = await call(c, 'write_file', { path: FILES.readOnly, content: 'no\n' });
            const t = textOf(res);
            rep.check(
                'denied',
                res.isError === true && t.startsWith(DENIED_MARKER) && human.asked.length === before && !existsSync(join(ws, FILES.readOnly)),
                { text: brief(t) }
            );
        });

        await rep.step('escalation allow_once', async () => {
            human.decision = 'allow_once';
            const before = human.asked.length;
            const res = await call(c, 'write_file', escalate(FILES.approved, 'approved\n'));
            const asked = human.asked.slice(before);
            const q = asked[0] ?? {};
            const decisions = q.requestedSchema?.properties?.decision?.enum ?? [];
            const landed = existsSync(join(ws, FILES.approved)) && readFileSync(join(ws, FILES.approved), 'utf8') === 'approved\n';
            rep.check(
                'escalation allow_once',
                !res.isError &&
                    landed &&
                    asked.length === 1 &&
                    String(q.message).includes('write_file') &&
                    String(q.message).includes('workspace-write') &&
                    decisions.includes('allow_once') &&
                    decisions.includes('deny'),
                { asked: asked.length, message: brief(String(q.message ?? '')), decisions, text: brief(textOf(res)) }
            );
        });

        await rep.step('escalation deny', async () => {
            human.decision = 'deny';
            const before = human.asked.length;
            const res = await call(c, 'write_file', escalate(FILES.refused, 'refused\n'));
            const t = textOf(res);
            const asked = human.asked.length - before;
            rep.check(
                'escalation deny',
                res.isError === true &&
                    t.startsWith(DENIED_MARKER) &&
                    t.includes('escalation to workspace-write was not approved') &&
                    res.structuredContent?.error?.code === 'ESCALATION_DENIED' &&
                    asked === 1 &&
                    !existsSync(join(ws, FILES.refused)),
                { asked, text: brief(t) }
            );
        });

        await rep.step('allow_once grants nothing more', async () => {
            human.decision = null;
            const res = await call(c, 'sandbox_status');
            rep.check('allow_once grants nothing more', res.structuredContent?.mode === 'read-only', { mode: res.structuredContent?.mode });
        });
    } finally {
        human.decision = null;
        await s2.close();
    }
}

/** watchdog ends a hung run with a failed check instead of hanging the test. */
export function watchdog(rep, ms = 50000) {
    setTimeout(() => {
        rep.check('watchdog', false, { error: `no result within ${ms} ms` });
        rep.finish();
    }, ms).unref();
}
