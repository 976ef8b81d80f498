// polydbg's bootstrap for child Node processes (loaded by NODE_OPTIONS=--require in every Node process
// the debugged program starts). A child opens its inspector on a free loopback port, announces
// {pid, ppid, url} on polydbg's report pipe, and waits until polydbg has attached and set its
// breakpoints. The program polydbg launched (it already has its inspector), worker threads (debugged
// through their process's NodeWorker domain) and package-manager or loader wrappers (npm, npx, the tsx
// CLI: what they start is debugged, not them) are left alone. Without polydbg's pipe it does nothing.
'use strict';
(function polydbgBoot() {
  const report = process.env.POLYDBG_NODE_REPORT;
  if (!report) return;
  // The launched program runs with --inspect-brk: its children must not inherit that (they would wait
  // on a port nobody knows); they are debugged through this bootstrap instead.
  const ours = /^--inspect(-brk|-port|-wait|-publish-uid)?(=.*)?$/;
  if (process.execArgv.some((a) => ours.test(a))) process.execArgv = process.execArgv.filter((a) => !ours.test(a));
  let worker = false;
  try { worker = !require('worker_threads').isMainThread; } catch (e) { /* no worker support */ }
  if (worker) return;
  const inspector = require('inspector');
  if (inspector.url()) return;
  const fs = require('fs');
  const wrappers = /(^|[\\/])(npm|npx|pnpm|pnpx|yarn|yarnpkg|corepack|tsx|nodemon)([\\/](bin|dist|lib)[\\/]|(-cli)?\.[cm]?js$|$)/;
  let script = String(process.argv[1] || '');
  try { script = fs.realpathSync(script); } catch (e) { /* not a file: as given */ }
  if (wrappers.test(script) || wrappers.test(String(process.argv[1] || ''))) return;
  const send = (message) => {
    let fd;
    try {
      fd = fs.openSync(report, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);  // fails when polydbg is gone
      fs.writeSync(fd, JSON.stringify(message).slice(0, 4000) + '\n');  // below PIPE_BUF: one atomic write
      return true;
    } catch (e) {
      return false;
    } finally {
      if (fd !== undefined) try { fs.closeSync(fd); } catch (e) { /* closed */ }
    }
  };
  try { inspector.open(0, '127.0.0.1', false); } catch (e) { return; }
  if (!send({ pid: process.pid, ppid: process.ppid, url: inspector.url(), argv: process.argv.slice(1, 4) })) {
    inspector.close();
    return;
  }
  process.on('exit', (code) => { send({ pid: process.pid, exit: code }); });
  inspector.waitForDebugger();
})();
