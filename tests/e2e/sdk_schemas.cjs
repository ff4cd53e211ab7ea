// The TypeScript MCP SDK's client against a server over stdio: every listed tool's input and
// output schema compiled by the SDK's own validator (AjvJsonSchemaValidator: Ajv with
// ajv-formats, as Claude Code and the Inspector run it), and a call whose structured result the
// SDK validates against its output schema. Fails on anything Ajv logs ("unknown format
// \"uint32\" ignored in schema ...") and on a schema it cannot compile.
//
// Usage: node tests/e2e/sdk_schemas.cjs SDK_DIR SERVER_COMMAND [ARG...]
//   SDK_DIR: a directory whose node_modules holds @modelcontextprotocol/sdk (.ci/e2e.sh
//   installs it pinned).
'use strict';

const path = require('node:path');
const { createRequire } = require('node:module');

const [sdkDir, command, ...args] = process.argv.slice(2);
if (!sdkDir || !command) {
    console.error('usage: sdk_schemas.cjs SDK_DIR SERVER_COMMAND [ARG...]');
    process.exit(2);
}
const sdk = createRequire(path.join(path.resolve(sdkDir), 'package.json'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = sdk('@modelcontextprotocol/sdk/client/stdio.js');
const { AjvJsonSchemaValidator } = sdk('@modelcontextprotocol/sdk/validation/ajv');

// Ajv's logger is the console: whatever it says about a schema is a failure.
const logged = [];
for (const level of ['log', 'warn', 'error']) {
    const original = console[level];
    console[level] = (...parts) => {
        logged.push(parts.map(String).join(' '));
        original(...parts);
    };
}

const failures = [];
function check(label, ok, detail) {
    console.info(`${ok ? 'ok' : 'FAIL'}: ${label}${ok || !detail ? '' : `: ${detail}`}`);
    if (!ok) failures.push(label);
}

async function main() {
    const client = new Client({ name: 'sdk-schemas', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
    // listTools compiles every output schema with the SDK's validator.
    const { tools } = await client.listTools();
    check('tools listed', tools.length > 0, `${tools.length} tools`);
    const validator = new AjvJsonSchemaValidator();
    for (const tool of tools) {
        for (const [kind, schema] of [['input', tool.inputSchema], ['output', tool.outputSchema]]) {
            if (!schema) continue;
            const before = logged.length;
            let error = null;
            try {
                validator.getValidator(schema);
            } catch (e) {
                error = e;
            }
            const said = logged.slice(before);
            check(`${tool.name}: ${kind} schema compiles silently`, !error && said.length === 0,
                error ? String(error) : said.join('; '));
        }
    }
    const add = tools.find((t) => t.name === 'add');
    if (add && add.outputSchema) {
        const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
        check('add: structured result valid against its output schema', !result.isError,
            JSON.stringify(result));
    }
    await client.close();
    const unknown = logged.filter((line) => /unknown format/i.test(line));
    check('no "unknown format" anywhere', unknown.length === 0, unknown.join('; '));
}

main().then(
    () => {
        console.info(failures.length ? `sdk_schemas: ${failures.length} failed` : 'sdk_schemas: all passed');
        process.exit(failures.length ? 1 : 0);
    },
    (e) => {
        console.error('sdk_schemas:', e);
        process.exit(1);
    },
);
