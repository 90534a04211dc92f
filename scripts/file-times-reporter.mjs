// A second test reporter: after the run, the slowest test files, so the suite's time can be spent where it buys the
// most. A file's time runs from its process starting to its end (imports, stacks and browsers included); "in tests" is
// the part inside its top-level tests. It writes to stderr beside the spec reporter's stdout and never changes the result.
import { relative } from 'node:path';

const SHOWN = 15;

export default async function* fileTimes(source) {
  const files = new Map();
  for await (const event of source) {
    const { file, name, nesting, details } = event.data ?? {};
    if (!file || event.type !== 'test:complete' || nesting !== 0) continue;
    const entry = files.get(file) ?? { whole: 0, inTests: 0 };
    if (name === file) entry.whole = details?.duration_ms ?? 0;
    else entry.inTests += details?.duration_ms ?? 0;
    files.set(file, entry);
  }
  const rows = [...files.entries()]
    .map(([file, e]) => ({ file: relative(process.cwd(), file), whole: e.whole / 1000, inTests: e.inTests / 1000 }))
    .sort((a, b) => b.whole - a.whole);
  const total = rows.reduce((sum, r) => sum + r.whole, 0);
  yield `\nslowest test files (${Math.min(SHOWN, rows.length)} of ${rows.length}; ${total.toFixed(0)} s of file time in all):\n`;
  for (const r of rows.slice(0, SHOWN)) {
    yield `  ${r.whole.toFixed(0).padStart(5)} s, ${r.inTests.toFixed(0).padStart(5)} s in tests  ${r.file}\n`;
  }
}
