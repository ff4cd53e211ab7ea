// The TypeScript MCP SDK's StreamableHTTPClientTransport resuming a legacy session's streams
// with Last-Event-ID (tests/resume_client.rs drives it: it switches the replica behind the
// URL, drains the first and cuts the connections).
//
// Usage: node tests/e2e/ts_resume_client.cjs SDK_DIR URL
//   SDK_DIR: a directory whose node_modules holds @modelcontextprotocol/sdk (.ci/e2e.sh
//   installs it pinned).
// Says on stdout, a line each: "ready" (connected, subscribed to note://1 and note://2),
// "updated URI", "progress N", "result TEXT", "error MESSAGE". Reads on stdin: "call" (calls
// the tool `gated` with progress), "close".
'use strict';

const path = require('node:path');
const readline = require('node:readline');
const { createRequire } = require('node:module');

const [sdkDir, url] = process.argv.slice(2);
if (!sdkDir || !url) {
    console.error('usage: ts_resume_client.cjs SDK_DIR URL');
    process.exit(2);
}
const sdk = createRequire(path.join(path.resolve(sdkDir), 'package.json'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ResourceUpdatedNotificationSchema } = sdk('@modelcontextprotocol/sdk/types.js');

const say = (line) => process.stdout.write(`${line}\n`);

async function main() {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
        reconnectionOptions: {
            initialReconnectionDelay: 200,
            maxReconnectionDelay: 2000,
            reconnectionDelayGrowFactor: 1.5,
            maxRetries: 5,
        },
    });
    const client = new Client({ name: 'ts-resume', version: '1.0.0' });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => say(`updated ${n.params.uri}`));
    await client.connect(transport);
    for (const uri of ['note://1', 'note://2']) {
        await client.subscribeResource({ uri });
    }
    say('ready');
    const lines = readline.createInterface({ input: process.stdin });
    for await (const line of lines) {
        if (line === 'call') {
            const options = { onprogress: (p) => say(`progress ${p.progress}`), timeout: 60000 };
            client
                .callTool({ name: 'gated', arguments: {} }, undefined, options)
                .then((r) => say(`result ${r.content[0].text}`), (e) => say(`error ${e.message}`));
        } else if (line === 'close') {
            await client.close();
            process.exit(0);
        }
    }
}

main().catch((e) => {
    say(`error ${e}`);
    process.exit(1);
});
