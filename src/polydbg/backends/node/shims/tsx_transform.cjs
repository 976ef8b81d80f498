// Run by polydbg (backends/node/typescript.py) in a Node of its own, in the debugged program's folder: the JavaScript
// the project's tsx makes of TypeScript sources, through tsx's own transform (the chunk of tsx/dist that exports it:
// its name changes with each tsx release) and the tsconfig tsx finds (get-tsconfig, from the working directory, as
// tsx does), so a reloaded file is what tsx would have loaded.
// stdin: {"tsx": "<the tsx package's folder>", "esm": bool, "files": [{"path": "...", "code": "..."}]}
// stdout: [{"code": "...", "map": {...}} | {"error": "..."}], one per file
'use strict';
const fs = require('fs');
const path = require('path');
const url = require('url');

async function main() {
  const input = JSON.parse(fs.readFileSync(0, 'utf8'));
  const dist = path.join(input.tsx, 'dist');
  const chunk = fs.readdirSync(dist).filter((name) => name.endsWith('.cjs')).map((name) => path.join(dist, name))
    .find((file) => /exports\.transformSync=/.test(fs.readFileSync(file, 'utf8')));
  if (!chunk) throw new Error(`no module of ${dist} exports tsx's transformSync (a tsx release polydbg does not know)`);
  const tsx = require(chunk);
  let matcher = null;
  try {
    const tsconfig = require(require.resolve('get-tsconfig', { paths: [input.tsx] }));
    const found = tsconfig.getTsconfig(process.env.TSX_TSCONFIG_PATH || process.cwd());
    if (found) matcher = tsconfig.createFilesMatcher(found);
  } catch (e) { /* no tsconfig: tsx's defaults */ }
  const out = [];
  for (const file of input.files) {
    try {
      const options = { tsconfigRaw: matcher ? matcher(file.path) : undefined };
      const done = input.esm
        ? await tsx.transform(file.code, url.pathToFileURL(file.path).href, { format: 'esm', ...options })
        : tsx.transformSync(file.code, file.path, options);
      out.push({ code: done.code, map: done.map });
    } catch (e) {
      out.push({ error: String((e && e.message) || e) });
    }
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => { process.stderr.write(String((e && e.message) || e)); process.exit(1); });
